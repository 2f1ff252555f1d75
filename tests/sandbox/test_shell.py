"""The persistent shell's reliability: checklist section H, plus bad input."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from shellagent.errors import InputError, SessionClosed
from shellagent.sandbox import Sandbox, get_profile

from .conftest import host_processes


def test_cwd_variables_and_functions_persist_between_commands(session: Sandbox) -> None:
    session.run("cd /usr/share; export A=1; B=2; greet() { echo hi $1; }")
    result = session.run("pwd; echo $A $B; greet you")
    assert result.output == "/usr/share\n1 2\nhi you\n"
    assert session.cwd == "/usr/share"
    assert "greet" in session.functions


@pytest.mark.parametrize(
    ("command", "code", "output"),
    [
        ("false", 1, ""),
        ("(exit 3)", 3, ""),
        ("true | false", 1, ""),  # pipefail
        ("echo -n x", 0, "x"),
        ("exit 7", 7, ""),
        ("nonexistent-program-xyz", 127, None),
    ],
)
def test_exit_codes_are_exact(
    session: Sandbox, command: str, code: int, output: str | None
) -> None:
    result = session.run(command)
    assert result.exit_code == code
    if output is not None:
        assert result.output == output


def test_commands_that_change_no_state_keep_it_and_their_own_exit_codes(
    session: Sandbox,
) -> None:
    # Such a command leaves the same dump as the one before, which the driver does not parse
    # again; a read-only one whose guarded change was undone must not count as unchanged.
    session.run("cd /usr/share; export A=1; greet() { echo hi; }")
    codes = [session.run(c).exit_code for c in ("true", "false", "(exit 7)", "true", "false")]
    assert codes == [0, 1, 7, 0, 1]
    assert session.run("PATH=/evil:$PATH", confined=True).refused
    for _ in range(2):
        result = session.run('pwd; echo "$A"; greet; echo "$PATH"')
        assert result.output.split("\n")[:3] == ["/usr/share", "1", "hi"]
        assert "/evil" not in result.output
    assert session.cwd == "/usr/share" and "greet" in session.functions


def test_options_carry_over_and_act_on_the_command_only(session: Sandbox) -> None:
    # Most options are set before the command is known; xtrace and allexport after the
    # job's own lines, which they would print or export.
    assert session.run("set -eaxu -o noglob; shopt -s extglob nullglob").exit_code == 0
    traced = session.run("V=1; env | grep -c __sa_cmd || true; echo +(a|b) *.none")
    assert "__sa_cmd=" not in traced.output and "exec 4" not in traced.output
    lines = traced.output.splitlines()
    assert lines[1] == "++ V=1"  # then the two sides of the pipe, in either order
    assert sorted(lines[2:5]) == ["++ env", "++ grep -c __sa_cmd", "0"]
    assert traced.output.endswith("++ echo '+(a|b)' '*.none'\n+(a|b) *.none\n")
    flags = session.run('set +x; echo "$-"; env | grep "^V="').output.splitlines()
    assert flags[-2:] == ["aefhuBc", "V=1"]
    unset = session.run("set +x; echo $nothing; echo after")
    assert unset.exit_code == 1 and "nothing: unbound variable" in unset.output
    assert "after" not in unset.output
    reset = session.run("set +eaux +o noglob; echo *.none; shopt -q extglob && echo eg")
    assert reset.output == "\neg\n"


def test_a_state_larger_than_the_dump_pipe_carries_and_one_over_the_limit_does_not_hang(
    session: Sandbox,
) -> None:
    # The dump pipe holds 1 MiB and is read only once the shell exits, unless the command
    # runs longer than DUMP_WATCH_MS: a bigger dump must not block the shell.
    big = session.run("x=$(head -c 3000000 /dev/zero | tr '\\0' a); echo set", timeout=20)
    assert big.exit_code == 0 and not big.timed_out and not big.note
    assert session.run('echo "${#x}"').output == "3000000\n"
    over = session.run("x=$(head -c 40000000 /dev/zero | tr '\\0' b)", timeout=30)
    assert over.exit_code == 0 and not over.timed_out and "were not kept" in over.note
    assert session.run('echo "${#x} ${x:0:1}"').output == "3000000 a\n"
    # ... also while a background job of an earlier command wakes the driver all along
    session.run("(while :; do echo tick; done) & echo $! > /tmp/ticker")
    busy = session.run("y=$(head -c 3000000 /dev/zero | tr '\\0' c); echo set", timeout=10)
    session.run("kill $(cat /tmp/ticker)")
    assert busy.exit_code == 0 and not busy.timed_out and not busy.note
    assert session.run('echo "${#y}"').output == "3000000\n"


def test_pipefail_stays_on_even_if_a_command_turns_it_off(session: Sandbox) -> None:
    session.run("set +o pipefail")
    assert session.run("true | false").exit_code == 1


def test_timeout_kills_background_children_and_the_shell_stays_usable(
    session: Sandbox,
) -> None:
    marker = "4242.4242"
    result = session.run(f"sleep {marker} & sleep {marker}; wait", timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert host_processes(marker) == []
    assert session.run("echo still here").output == "still here\n"


def test_background_jobs_of_earlier_commands_survive_a_later_timeout(session: Sandbox) -> None:
    session.run("sleep 4343.4343 &")
    session.run("sleep 100", timeout=0.5)
    assert host_processes("4343.4343") != []


def test_grandchild_holding_stdout_does_not_hang_completion(session: Sandbox) -> None:
    result = session.run("(sleep 4444.1 >&1 &) ; echo done", timeout=30)
    assert result.output == "done\n" and not result.timed_out  # no wait for pipe EOF


def test_setsid_processes_die_with_the_session(workspace: Path) -> None:
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        s.run("setsid sleep 4545.45 & disown; (setsid sleep 4545.45 &)")
        assert host_processes("4545.45")
    time.sleep(0.2)
    assert host_processes("4545.45") == []


@pytest.mark.parametrize(
    "command",
    [
        "cat",
        "read x; echo read=$?",
        "python3",
        "head -1",
        "ssh -o BatchMode=yes example.invalid",
    ],
)
def test_stdin_readers_get_end_of_file_at_once(session: Sandbox, command: str) -> None:
    result = session.run(command, timeout=30)
    assert not result.timed_out
    assert session.run("echo next").output == "next\n"


def test_pagers_and_editors_never_wait_for_a_human(session: Sandbox) -> None:
    session.run("git config --global user.email a@b.c 2>/dev/null; true")
    setup = (
        "git -c user.email=a@b.c -c user.name=a commit -q --allow-empty -m one && "
        "for i in $(seq 200); do echo line $i; done > long.txt"
    )
    assert session.run(setup).exit_code == 0
    for command in (
        "git log",
        "less long.txt",
        "more long.txt",
        "man ls | head -3",
        "git -c user.email=a@b.c -c user.name=a commit --allow-empty",
    ):
        result = session.run(command, timeout=10)
        assert not result.timed_out, command
    assert session.run("echo own").output == "own\n"


def test_large_output_is_capped_with_head_tail_and_a_note(workspace: Path) -> None:
    with Sandbox(get_profile("default", cwd=workspace), head=1000, tail=500) as s:
        result = s.run("head -c 10000000 /dev/urandom | base64", timeout=60)
    assert result.truncated and result.exit_code == 0
    assert "bytes omitted …]" in result.output
    assert len(result.output) < 2000


def test_infinite_output_is_killed_at_the_timeout_with_bounded_output(session: Sandbox) -> None:
    result = session.run("yes", timeout=1.5)
    assert result.timed_out and result.truncated
    assert len(result.output) < 20000


def test_binary_output_and_terminal_queries_are_decoded_and_stripped(session: Sandbox) -> None:
    result = session.run("head -c 4000 /bin/ls; printf '\\e[6n\\e]11;?\\a\\e[31mred\\e[0m\\n'")
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output.endswith("red\n")


def test_printed_markers_and_prompt_changes_cannot_fake_completion(session: Sandbox) -> None:
    spoof = (
        "printf 'S\\0deadbeef\\0000\\0/\\0\\0'; echo 'S 0'; PS1=x; "
        "unset PROMPT_COMMAND; trap '' DEBUG; sleep 0.5; echo real; (exit 4)"
    )
    result = session.run(spoof)
    assert result.exit_code == 4
    assert result.output.endswith("real\n")
    assert session.run("echo ok").output == "ok\n"


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("exit", 0),
        ("exit 3", 3),
        ("exec bash", 0),
        ("kill -9 $$", 137),
        ("kill $$", 143),
        ("set -e; false", 1),
        ("exec true", 0),
    ],
)
def test_a_command_that_ends_its_shell_keeps_the_state_from_before_it(
    session: Sandbox, command: str, code: int
) -> None:
    session.run("cd /usr; export KEEP=1")
    result = session.run(f"cd /; export KEEP=2; {command}")
    assert result.exit_code == code
    assert not result.shell_restarted and "were not kept" in result.note
    after = session.run("pwd; echo keep=$KEEP")
    assert after.output == "/usr\nkeep=1\n" and after.note == ""


def test_break_outside_a_loop_is_an_ordinary_error(session: Sandbox) -> None:
    result = session.run("cd /usr; break; echo after")
    assert result.output.endswith("after\n") and result.note == ""
    assert session.cwd == "/usr"


def test_the_driver_ignores_signals_from_inside(session: Sandbox) -> None:
    result = session.run("kill -9 1; kill -KILL -1; kill -TERM $PPID; echo alive")
    assert result.output.endswith("alive\n") and not result.shell_restarted
    assert session.run("echo still").output == "still\n"


def test_a_sandbox_killed_from_outside_is_recreated(session: Sandbox) -> None:
    session.run("cd /usr")
    assert session.pid is not None
    os.killpg(session.pid, signal.SIGKILL)
    result = session.run("echo back")
    assert result.shell_restarted and "recreated" in result.note
    assert session.run("pwd; echo back").output == "/usr\nback\n"


def test_multiline_commands_and_heredocs_complete_once(session: Sandbox) -> None:
    result = session.run("for i in 1 2; do\n  echo $i\ndone\ncat <<'EOF'\na $HOME\nEOF")
    assert result.output == "1\n2\na $HOME\n"
    body = "x" * 10_000
    result = session.run(f"cat <<'EOF' | wc -c\n{body}\nEOF")
    assert result.output.strip() == "10001"


def test_syntax_errors_are_reported_without_wedging_the_shell(session: Sandbox) -> None:
    result = session.run('echo "unterminated')
    assert result.exit_code == 2 and "unexpected EOF" in result.output
    assert session.run("echo fine").output == "fine\n"


def test_interrupt_from_another_thread_stops_the_command(session: Sandbox) -> None:
    threading.Timer(0.5, session.interrupt).start()
    result = session.run("while :; do echo x; sleep 0.1; done", timeout=60)
    assert result.timed_out and "interrupted" in result.note
    assert session.run("echo next").output == "next\n"


def test_a_builtin_busy_loop_is_stopped_at_the_timeout(session: Sandbox) -> None:
    session.run("cd /usr")
    result = session.run("cd /; while :; do :; done", timeout=0.5)
    assert result.timed_out and not result.shell_restarted
    assert "not kept" in result.note
    assert session.run("pwd").output == "/usr\n"


def test_background_servers_do_not_block_and_are_reachable_inside(session: Sandbox) -> None:
    started = session.run("python3 -m http.server 8765 >/dev/null 2>&1 &", timeout=30)
    assert started.exit_code == 0 and not started.timed_out
    fetch = (
        "for i in $(seq 50); do python3 -c 'import urllib.request as u;"
        'print(u.urlopen("http://127.0.0.1:8765/").status)\' 2>/dev/null && break;'
        " sleep 0.1; done"
    )
    assert session.run(fetch, timeout=10).output.strip() == "200"


def test_repeated_shell_and_sandbox_kills_leave_no_processes(workspace: Path) -> None:
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        for i in range(12):
            s.run("sleep 4646.46 &")
            if i % 2:
                assert s.run("kill -9 $$").exit_code == 137
            else:
                assert s.pid is not None
                os.killpg(s.pid, signal.SIGKILL)
            # A killed sandbox is noticed on the next command, recreated, and goes on.
            for _ in range(2):
                result = s.run("echo alive")
                if result.output == "alive\n" and not result.shell_restarted:
                    break
                assert result.shell_restarted, result
            else:
                pytest.fail("the session did not recover")
        assert s.restarts == 6
    time.sleep(0.2)
    assert host_processes("4646.46") == []


def test_session_time_limit_destroys_the_sandbox(workspace: Path) -> None:
    with Sandbox(get_profile("default", cwd=workspace), max_session_s=1) as s:
        result = s.run("sleep 4747.47", timeout=30)
        assert "time limit" in result.note
        with pytest.raises(SessionClosed):
            s.run("true")
    assert host_processes("4747.47") == []


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("echo a\0b", "NUL byte"),
        ("echo " + "x" * 1_048_576, "limit"),
        ("   ", "empty"),
    ],
)
def test_bad_commands_are_refused_with_a_clear_error(
    session: Sandbox, command: str, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        session.run(command)
    assert session.run("echo ok").output == "ok\n"
