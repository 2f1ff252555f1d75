"""The per-process memory rlimit counts memory used, not address space reserved (M6): a JVM
and Node's WebAssembly reserve many GiB they never touch and must still start, while one
process that really allocates past the limit is refused."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.limits import GiB, Limits, MiB

LIMITS = Limits(processes=256, memory_bytes=2 * GiB, tmp_bytes=64 * MiB, file_bytes=GiB)
WASM = "node -e 'new WebAssembly.Memory({initial: 1}); console.log(\"wasm-ok\")'"
JAVA = "java -Xmx256m -version 2>&1 | head -1 && echo java-ok"
HOG = "python3 -c 'b = bytearray(3 * 1024 ** 3); print(\"allocated\")'"


@pytest.mark.parametrize(
    ("tool", "probe", "expected"), [("node", WASM, "wasm-ok"), ("java", JAVA, "java-ok")]
)
def test_runtimes_that_reserve_address_space_start_under_the_limits(
    workspace: Path, tool: str, probe: str, expected: str
) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    profile = dataclasses.replace(get_profile("default", cwd=workspace), limits=LIMITS)
    with Sandbox(profile, timeout=60) as s:
        started = s.run(probe)
        hog = s.run(HOG)
    assert expected in started.output, started.output
    assert hog.exit_code != 0 and "MemoryError" in hog.output, hog.output
