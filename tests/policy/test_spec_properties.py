"""Property: documented options of auto-allowed programs that the policy allows as read-only
really change nothing, when run for real in a scratch workspace on a real sandbox.

Hypothesis draws a program the read-only rules allow, a few of the options its spec lists
(with a value of the right shape) and operands among the workspace's files; whenever the
policy says ``allow`` and read-only, the command runs in a sandbox session and the
workspace must be byte for byte what it was. Bounded: a fixed number of examples, each
command with a short timeout.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellagent.policy import PolicyEngine, ShellState, default_policy_path
from shellagent.policy.specs import OptionSpec, ProgramSpec
from shellagent.sandbox import Sandbox, get_profile

FILES = {"a.txt": "b 2\na 1\nc 3\n", "b.txt": "a 1\nx 9\n", "data.csv": "k,v\n1,2\n"}
# Programs that wait for input or time, or need the network: drawing them proves nothing.
SLOW = {"sleep", "top", "watch", "ping", "dig", "host", "journalctl", "dmesg", "wait", "read",
        "bc", "dc", "history", "time", "eval", "jobs", "tput", "clear"}  # fmt: skip
VALUES = {"N": "2", "NUM": "2", "COLS": "8", "LEN": "4", "WIDTH": "20", "SIZE": "1K"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Sandbox]]:
    ws = tmp_path_factory.mktemp("scratch")
    for name, text in FILES.items():
        (ws / name).write_text(text)
    (ws / "sub").mkdir()
    (ws / "sub" / "c.txt").write_text("c\n")
    with Sandbox(get_profile("default", cwd=ws), timeout=3) as session:
        yield ws, session


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    return {
        str(p.relative_to(root)): (
            p.lstat().st_mode,
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "",
        )
        for p in sorted(root.rglob("*"))
    }


def _programs() -> list[ProgramSpec]:
    engine = PolicyEngine.load([default_policy_path()])
    allowed: set[str] = set()
    for rule in engine.policy.rules:
        if rule.model.read_only and rule.model.decision == "allow":
            allowed.update(rule.model.program)
    specs = engine.policy.specs.programs
    return [
        specs[p]
        for p in sorted(allowed)
        if p in specs and p not in SLOW and specs[p].model.style == "getopt"
        and specs[p].model.subcommands == "none" and shutil.which(p)
    ]  # fmt: skip


PROGRAMS = _programs()


def _value(opt: OptionSpec) -> str:
    name = opt.text.split("=")[-1].split()[-1].strip("[]") if opt.values else ""
    return VALUES.get(name, "a.txt" if "FILE" in name else "1")


@st.composite
def commands(draw: st.DrawFn) -> str:
    spec = draw(st.sampled_from(PROGRAMS))
    words = [spec.key]
    for opt in draw(st.lists(st.sampled_from(spec.options), max_size=3)) if spec.options else []:
        form = draw(st.sampled_from(opt.forms))
        if opt.values > 0 and not opt.optional:
            words += [form, *([_value(opt)] * opt.values)]
        else:
            words.append(form)
    words += draw(st.lists(st.sampled_from([*FILES, "sub"]), max_size=2))
    return " ".join(words)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=commands())
def test_allowed_read_only_option_combinations_change_nothing(
    world: tuple[Path, Sandbox], command: str
) -> None:
    ws, session = world
    engine = PolicyEngine.load([default_policy_path()], workspace=ws)
    decision = engine.check(command, ShellState(cwd=ws))
    if not decision.read_only:
        return
    before = snapshot(ws)
    session.run(f"cd {ws} && {command} </dev/null >/dev/null 2>&1", timeout=3)
    assert snapshot(ws) == before, f"`{command}` was allowed as read-only but changed the workspace"


def test_the_property_can_see_a_change(world: tuple[Path, Sandbox]) -> None:
    """Positive control: a writer run the same way is seen."""
    ws, session = world
    before = snapshot(ws)
    session.run(f"cd {ws} && sort -o a.sorted a.txt", timeout=3)
    try:
        assert snapshot(ws) != before
    finally:
        (ws / "a.sorted").unlink(missing_ok=True)


def test_programs_are_drawn_from_the_read_only_rules() -> None:
    keys = {p.key for p in PROGRAMS}
    assert {"ls", "sort", "grep", "cat", "head"} <= keys
