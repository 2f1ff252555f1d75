"""A follow-up task's sandbox starts from the shell state of the one before it
(``Sandbox.export_state`` → ``Sandbox(state=…)``), read as strictly as any command's dump."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.sandbox import Sandbox, get_profile


def _session(workspace: Path, state: bytes | None = None) -> Sandbox:
    return Sandbox(get_profile("default", cwd=workspace), state=state)


def test_variables_functions_options_and_umask_carry_over(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    with _session(workspace) as first:
        assert first.export_state() is None  # nothing ran yet
        setup = (
            'export GREETING=hello; COUNT=3; greet() { echo "hi $1"; }; set -o noglob; '
            "umask 077; cd sub"
        )
        assert first.run(setup).exit_code == 0
        state = first.export_state()
    assert state is not None
    with _session(workspace, state) as second:
        # the function is known before any command: the policy sees it shadow a program
        assert second.functions == frozenset({"greet"})
        result = second.run('echo "$GREETING $COUNT"; greet you; umask; [[ -o noglob ]] && echo ng')
        assert result.output.split("\n")[:4] == ["hello 3", "hi you", "0077", "ng"]


def test_the_state_carries_over_for_an_unprivileged_user(
    as_nobody: Callable[..., list[dict[str, Any]]],
) -> None:
    results = as_nobody(
        [
            'mkdir -p sub; export GREETING=hello; greet() { echo "hi $1"; }; umask 077; cd sub; '
            "PATH=/evil:$PATH"
        ],
        then=['echo "$GREETING"; greet you; umask; pwd; echo "$PATH"'],
    )
    assert results[0]["exit_code"] == 0, results[0]
    out = results[1]["output"].split("\n")
    assert out[:3] == ["hello", "hi you", "0077"], out
    assert out[3] == str(as_nobody.workdir)  # type: ignore[attr-defined]
    assert "/evil" not in out[4]


def test_the_working_directory_and_code_running_variables_stay_the_new_sandboxs(
    workspace: Path,
) -> None:
    (workspace / "sub").mkdir()
    with _session(workspace) as first:
        first.run("cd sub; PATH=/evil:$PATH; export LD_PRELOAD=/evil.so; export KEPT=1")
        state = first.export_state()
    with _session(workspace, state) as second:
        out = second.run('pwd; echo "$PATH"; echo "${LD_PRELOAD-unset} $KEPT"').output.split("\n")
        assert out[0] == str(workspace)
        assert "/evil" not in out[1]
        assert out[2] == "unset 1"


def test_carried_values_are_data_never_code(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with _session(workspace) as first:
        first.run(f"X='$(touch {marker})'; Y='`touch {marker}`'")
        state = first.export_state()
    with _session(workspace, state) as second:
        assert second.run('echo "$X"').output.startswith("$(touch")
    assert not marker.exists()


def test_a_state_that_does_not_parse_starts_the_sandbox_afresh(workspace: Path) -> None:
    for junk in (b"garbage\0x", b"D1\0not a dump", b"\0" * 20):
        with _session(workspace, junk) as session:
            result = session.run("echo ${GREETING:-unset}")
            assert result.exit_code == 0 and result.output.startswith("unset")
            assert session.functions == frozenset()
