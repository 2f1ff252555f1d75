"""The kernel holds the read-only claim: commands run with ``confined=True`` cannot change
anything, while the session's state still carries over. Every refusal has its positive
control: the same thing, unconfined, works in the same sandbox."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, landlock

pytestmark = pytest.mark.skipif(
    landlock.abi_version() == 0, reason="this kernel has no Landlock: the policy alone decides"
)


def test_the_sandbox_reports_the_kernel_abi(session: Sandbox) -> None:
    assert session.landlock_abi == landlock.abi_version() >= 1


@pytest.mark.parametrize(
    "write",
    [
        "touch new.txt",
        "echo x > new.txt",
        "echo more >> README",
        ": > README",
        "mkdir newdir",
        "rm README",
        "mv README moved",
        "ln README hard",
        "ln -s README soft",
        "mkfifo fifo",
        "truncate -s 0 README",
        "chmod 600 README",
        "touch -d 2000-01-01 README",
        'python3 -c \'import os; os.setxattr("README", "user.x", b"1")\'',
        'python3 -c \'open("README", "r+").write("X")\'',
    ],
)
def test_a_confined_command_cannot_change_files(
    session: Sandbox, workspace: Path, write: str
) -> None:
    def snapshot() -> list[tuple[str, int, int, bytes]]:
        return sorted(
            (p.name, p.lstat().st_mode, p.lstat().st_mtime_ns, _xattr(p))
            for p in workspace.iterdir()
        ) + [(p.name, 0, 0, p.read_bytes()) for p in workspace.glob("README")]

    before = snapshot()
    result = session.run(write, confined=True)
    assert result.exit_code != 0 and result.confined and result.refused
    assert snapshot() == before
    # positive control
    assert session.run(write).exit_code == 0
    assert snapshot() != before


def _xattr(path: Path) -> bytes:
    try:
        return os.getxattr(path, "user.x", follow_symlinks=False)
    except OSError:
        return b""


def test_a_confined_command_reads_and_writes_its_output(session: Sandbox) -> None:
    result = session.run(
        "cat README; ls -a | grep -c README; grep hello README > /dev/null && echo found",
        confined=True,
    )
    assert result.output == "hello\n1\nfound\n" and result.exit_code == 0
    assert result.confined and not result.refused and result.note == ""


def test_a_confined_command_cannot_write_outside_the_workspace_either(session: Sandbox) -> None:
    for target in ("/tmp/x", "/dev/shm/x", "/proc/sys/kernel/core_pattern"):
        # the sysctl write repeats its own value, so a failure of this test changes nothing
        write = f"v=$(cat {target} 2>/dev/null); printf '%s\\n' \"$v\" > {target}"
        assert session.run(write, confined=True).exit_code != 0, target
    assert session.run("echo x > /tmp/x").exit_code == 0  # positive control


def test_a_confined_command_cannot_connect_or_listen(session: Sandbox) -> None:
    started = session.run(
        "python3 -m http.server 8766 --bind 127.0.0.1 >/dev/null 2>&1 & "
        "for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/8766) 2>/dev/null && break; "
        "sleep 0.1; done",
        timeout=30,
    )
    assert started.exit_code == 0
    connect = "(exec 3<>/dev/tcp/127.0.0.1/8766) && echo connected"
    refused = session.run(connect, confined=True)
    assert "connected" not in refused.output and refused.refused
    assert session.run(connect).output.endswith("connected\n")  # positive control
    listen = "python3 -c 'import socket; socket.socket().bind((\"127.0.0.1\", 8767))' && echo ok"
    assert "ok" not in session.run(listen, confined=True).output
    assert session.run(listen).output == "ok\n"


def test_a_confined_command_cannot_send_datagrams_either(session: Sandbox) -> None:
    """Landlock leaves UDP out: a DNS query could carry a file's content away."""
    receive = (
        "python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        's.bind(("127.0.0.1", 8768)); s.settimeout(10); print(s.recv(64).decode())\' '
        "> /tmp/got 2>&1 &"
    )
    send = (
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        '.sendto(b"leaked", ("127.0.0.1", 8768))\' && echo sent'
    )
    assert session.run(receive).exit_code == 0
    refused = session.run(send, confined=True)
    assert "sent" not in refused.output and refused.refused
    assert "Permission denied" in refused.output
    unix = (
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"
    )
    assert session.run(unix, confined=True).output == "b'x'\n"  # other sockets still work
    assert session.run(send).output == "sent\n"  # positive control
    assert session.run("sleep 0.3; cat /tmp/got").output == "leaked\n"


def test_a_confined_command_cannot_signal_or_reach_older_processes(session: Sandbox) -> None:
    started = session.run("sleep 4949.49 & echo $!")
    pid = started.output.strip()
    assert session.run(f"kill -0 {pid}", confined=True).exit_code != 0
    abstract = (
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); "
        's.connect("\\0shellagent-test")\' && echo connected'
    )
    session.run(
        "python3 -c 'import socket, time; s=socket.socket(socket.AF_UNIX); "
        's.bind("\\0shellagent-test"); s.listen(); time.sleep(30)\' >/dev/null 2>&1 & sleep 0.5'
    )
    assert "connected" not in session.run(abstract, confined=True).output
    assert session.run(abstract).output == "connected\n"  # positive control
    assert session.run(f"kill {pid}").exit_code == 0  # positive control


def test_commands_cannot_open_the_proc_entries_of_other_commands(session: Sandbox) -> None:
    if session.landlock_abi < 2:
        pytest.skip("commands are separate domains from ABI 2")
    pid = session.run("sleep 5050.50 & ls /proc/$!/fd >/dev/null && echo $!").output.strip()
    assert pid.isdigit()  # positive control: a command reaches what it started itself
    later = session.run(f"ls /proc/{pid}/fd; cat /proc/{pid}/environ")
    assert "Permission denied" in later.output and later.exit_code != 0


def test_state_set_by_confined_commands_carries_over(session: Sandbox, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    session.run("cd sub; export COLOUR=blue; n=3", confined=True)
    result = session.run("pwd; echo $COLOUR $n", confined=True)
    assert result.output == f"{workspace}/sub\nblue 3\n"
    assert session.cwd == f"{workspace}/sub"
    assert session.run("echo $COLOUR").output == "blue\n"  # and into unconfined ones


def test_a_confined_command_cannot_widen_what_later_globs_and_lines_mean(session: Sandbox) -> None:
    # dotglob would make an approved `rm -rf *` take .git too; without globskipdots, .*
    # names ..; posix and the like change how later lines are read. The policy asks first.
    # globstar, noglob and brace expansion off change what a later command's words name.
    change = (
        "shopt -s dotglob nocaseglob globstar; shopt -u globskipdots; set -o posix; "
        "set -o noglob; set +B; set -o noclobber"
    )
    result = session.run(change, confined=True)
    assert result.refused
    for name in (
        "shopt:dotglob", "shopt:nocaseglob", "shopt:globskipdots", "shopt:globstar",
        "set:posix", "set:noglob", "set:braceexpand",
    ):  # fmt: skip
        assert name in result.note
    state = session.run(
        "shopt -p dotglob nocaseglob globstar globskipdots; "
        "shopt -po posix noglob braceexpand noclobber"
    )
    assert state.output.splitlines() == [
        "shopt -u dotglob",
        "shopt -u nocaseglob",
        "shopt -u globstar",
        "shopt -s globskipdots",
        "set +o posix",
        "set +o noglob",
        "set -o braceexpand",
        "set -o noclobber",  # a harmless one carries
    ]
    session.run("set +f; shopt -s dotglob")  # positive control: an approved command may
    assert session.run("shopt -p dotglob").output == "shopt -s dotglob\n"


def test_a_confined_command_cannot_add_change_or_export_functions(session: Sandbox) -> None:
    # The policy asks before a definition or an export -f; if it was fooled, the change
    # does not reach later commands (an exported function runs in place of the program in
    # every bash they start). Removing one is no harm and stays.
    assert session.run("greet() { echo hi; }; tidy() { :; }").exit_code == 0  # approved
    for change in ("ls() { echo pwned; }", "greet() { echo pwned; }", "export -f greet"):
        result = session.run(change, confined=True)
        assert result.refused and "()" in result.note, change
    assert session.functions == frozenset({"greet", "tidy"})
    after = session.run("greet; bash -c 'type -t greet || echo not-exported'")
    assert after.output == "hi\nnot-exported\n"
    assert not session.run("unset -f tidy", confined=True).refused
    assert session.functions == frozenset({"greet"})
    session.run("export -f greet")  # positive control: an approved command may
    assert session.run("bash -c greet").output == "hi\n"


@pytest.mark.parametrize(
    "change",
    [
        "export PATH=/tmp:$PATH",
        "PS4='$(touch /tmp/pwned) '",
        "export LD_PRELOAD=/x.so",
        # what a later approved build, install or download would run, fetch or trust
        "export https_proxy=http://127.0.0.1:9",
        "export CC=./cc.sh",
        "npm_config_registry=http://127.0.0.1:9",
        "export SSLKEYLOGFILE=./keys",
        "export SHELL=./sh",
        "BASH_COMPAT=31",
    ],
)
def test_a_confined_command_cannot_change_variables_that_run_code(
    session: Sandbox, change: str
) -> None:
    name = change.removeprefix("export ").split("=")[0]
    before = session.run(f"declare -p {name} 2>&1").output
    result = session.run(change, confined=True)
    assert result.refused and name in result.note
    assert session.run(f"declare -p {name} 2>&1").output == before
    session.run(change)  # positive control: an approved command may
    assert session.run(f"declare -p {name} 2>&1").output != before


@pytest.mark.parametrize("first", [True, False], ids=["first-command", "later"])
def test_a_confined_command_cannot_loosen_the_umask(session: Sandbox, first: bool) -> None:
    """Even the session's first command: the umask decides who may write every file made
    after it."""
    if not first:
        session.run("true")
    result = session.run("umask 000", confined=True)
    assert result.refused and "umask" in result.note
    assert session.run("umask").output == "0022\n"
    session.run("umask 027")  # positive control: an approved command may
    assert session.run("umask").output == "0027\n"


def test_refused_is_only_said_of_confined_commands(session: Sandbox) -> None:
    denied = session.run("cat /proc/1/environ")
    assert "denied" in denied.output and not denied.refused and not denied.confined


def test_the_ephemeral_root_with_its_capabilities_is_still_read_only_when_confined(
    ephemeral: Sandbox,
) -> None:
    assert ephemeral.run("echo x > /etc/app.conf", confined=True).exit_code != 0
    assert ephemeral.run("cat /etc/app.conf").exit_code != 0
    assert ephemeral.run("echo x > /etc/app.conf && cat /etc/app.conf").output == "x\n"


def test_an_unprivileged_user_is_confined_too(as_nobody: Callable[..., list[Any]]) -> None:
    udp = (
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        '.sendto(b"x", ("127.0.0.1", 8769))\' && echo sent'
    )
    guarded = "export https_proxy=http://127.0.0.1:9; f() { :; }; shopt -s dotglob"
    after = 'echo "${https_proxy-unset}"; type -t f || echo none; shopt -p dotglob'
    results = as_nobody(
        ["touch made-confined", "touch made", udp, udp, "umask 000", "umask", guarded, after],
        confined=[True, False, True, False, True, False, True, False],
    )
    assert results[0]["exit_code"] != 0 and results[0]["refused"]
    assert results[1]["exit_code"] == 0
    assert "sent" not in results[2]["output"] and results[2]["refused"]
    assert results[3]["output"] == "sent\n"  # positive control
    assert results[4]["refused"] and results[5]["output"] == "0022\n"
    assert results[6]["refused"]
    assert results[7]["output"] == "unset\nnone\nshopt -u dotglob\n"
    work = as_nobody.workdir  # type: ignore[attr-defined]
    assert not (work / "made-confined").exists() and (work / "made").exists()
