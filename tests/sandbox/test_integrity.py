"""Sandbox integrity (review finding H2): nothing a command does can make the host believe a
wrong exit code, cwd or function list, or run a line the host did not send.

The attacks are the review's: reopen the driver's pipes through ``/proc/PID/fd`` of every
process in the sandbox, steal a pending frame, write forged status records and injected
command frames; and, from outside the sandbox, put frames on the pipes that were not
signed with the session key.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile, procs, wire

PROBE = Path(__file__).with_name("forge_probe.py")


@pytest.fixture
def probe(workspace: Path) -> str:
    """The probe, copied where the sandbox can read it."""
    shutil.copy(PROBE, workspace / "forge_probe.py")
    return "python3 forge_probe.py"


def report(output: str) -> dict[str, Any]:
    # The probe also wrote garbage into its own output pipe and read some of it back, so
    # its report may not start a line.
    start = output.index('{"opened"')
    result: dict[str, Any] = json.loads(output[start:].split("\n", 1)[0])
    return result


def told_matches_seen(session: Sandbox) -> None:
    """What the host was told about the shell is what the next command starts with."""
    told_cwd, told_functions = session.cwd, session.functions
    seen = session.run("pwd; declare -F").output.splitlines()
    assert seen[0] == told_cwd
    assert {line.split()[-1] for line in seen[1:]} == set(told_functions)


# -- the wire ---------------------------------------------------------------------------


def test_the_mac_is_hmac_sha256() -> None:
    key = secrets.token_bytes(wire.KEY_BYTES)
    for message in (b"", b"x", b"S\0" * 5000):
        assert wire.Mac(key).digest(message) == hmac.new(key, message, sha256).digest()


def test_a_changed_replayed_or_foreign_frame_does_not_verify() -> None:
    key = secrets.token_bytes(wire.KEY_BYTES)
    sender, receiver = wire.Channel(key, wire.TO_HOST), wire.Channel(key, wire.TO_HOST)
    first = wire.split(sender.seal(b"S", [b"nonce", b"0"]))
    assert first is not None
    kind, payload, tag, rest = first
    assert rest == b"" and receiver.open(kind, payload, tag) == [b"nonce", b"0"]
    with pytest.raises(wire.WireError):  # the same frame again
        wire.Channel(key, wire.TO_HOST).open(kind, payload.replace(b"0", b"7"), tag)
    with pytest.raises(wire.WireError):  # replayed: the sequence number moved on
        receiver.open(kind, payload, tag)
    with pytest.raises(wire.WireError):  # the other direction
        wire.Channel(key, wire.TO_DRIVER).open(kind, payload, tag)
    other = wire.Channel(secrets.token_bytes(wire.KEY_BYTES), wire.TO_HOST)
    forged = wire.split(other.seal(b"S", [b"nonce", b"0"]))
    assert forged is not None
    with pytest.raises(wire.WireError):
        wire.Channel(key, wire.TO_HOST).open(*forged[:3])


# -- attacks from inside ----------------------------------------------------------------


@pytest.mark.parametrize("confined", [False, True], ids=["approved", "read-only"])
def test_every_descriptor_of_every_process_is_tried_and_nothing_reaches_the_driver(
    session: Sandbox, workspace: Path, probe: str, confined: bool
) -> None:
    marker = workspace / "INJECTED"
    session.run("cd /usr")
    result = session.run(f"cd {workspace}; {probe} {marker}; exit 7", confined=confined)
    assert result.exit_code == 7 and not result.shell_restarted
    found = report(result.output)
    assert "1" not in found["opened"]  # the driver: not dumpable, and outside the domain
    assert (
        str(found["family"][0]) in found["opened"] or str(found["family"][1]) in found["opened"]
    )  # positive control: its own shell's descriptors could be opened
    if session.landlock_abi >= 2:  # spare shells and older processes are other domains
        assert set(found["opened"]) <= {str(p) for p in found["family"]}
    assert session.run("pwd").output == "/usr\n"
    assert session.run("echo second").output == "second\n"
    told_matches_seen(session)
    assert not marker.exists()
    assert session.restarts == 0
    # positive control: the injected line, run as a command, does create the marker
    assert session.run(f"touch {marker}").exit_code == 0 and marker.exists()


def test_a_process_left_by_an_earlier_command_cannot_reach_later_ones(
    session: Sandbox, workspace: Path, probe: str
) -> None:
    if session.landlock_abi < 2:
        pytest.skip("commands are kept apart by Landlock domains (ABI 2+)")
    marker = workspace / "INJECTED"
    log = workspace / "probe.log"
    session.run(
        f"(for i in $(seq 40); do {probe} {marker} >> {log} 2>/dev/null; sleep 0.05; done) "
        ">/dev/null 2>&1 &"
    )
    later = {session.run("echo $$").output.strip() for _ in range(15)}
    session.run("sleep 2.5")
    reports = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    assert len(reports) > 10
    for found in reports:
        assert "1" not in found["opened"] and not later & set(found["opened"])
        assert set(found["opened"]) <= {str(p) for p in found["family"]}
    assert any(found["opened"] for found in reports)  # positive control: its own tree
    assert not marker.exists()
    told_matches_seen(session)


def test_the_review_forge_through_sandbox_run(workspace: Path, probe: str) -> None:
    """The review's repro: a forger, then ``pwd``, then ``echo second``, each credited right."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "shellagent",
            "sandbox",
            "run",
            "--json",
            f"{probe} {workspace}/INJECTED; exit 7",
            "pwd",
            "echo second",
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    results = json.loads(proc.stdout)
    assert [r["exit_code"] for r in results] == [7, 0, 0]
    assert [r["shell_restarted"] for r in results] == [False, False, False]
    assert results[1]["output"] == f"{workspace}\n"
    assert results[2]["output"] == "second\n"
    assert not (workspace / "INJECTED").exists()


# A complete dump as scripts.BOOT writes it: cwd /etc, a function named ls.
FORGED_DUMP = (
    "printf 'D1\\0/etc\\n\\0' >&10; printf '0022\\n\\0\\0\\0\\0declare -f ls\\n\\0' >&10; "
    "printf 'ls () \\n{ \\n    echo fake\\n}\\n\\0E\\0' >&10"
)


def test_a_forged_dump_is_not_kept_when_its_shell_is_killed(session: Sandbox) -> None:
    session.run("cd /usr")
    result = session.run(f"{FORGED_DUMP}; kill -9 $$")
    assert result.exit_code == 137 and "were not kept" in result.note
    assert session.cwd == "/usr" and "ls" not in session.functions
    told_matches_seen(session)


def test_a_forged_dump_that_is_kept_is_exactly_what_the_next_command_gets(
    session: Sandbox,
) -> None:
    """A command may choose its own state by writing its dump (fd 10 holds the dump pipe
    while the command runs): then that state is what the host hears and the next command
    starts with, and the exit code is still its shell's own."""
    session.run("cd /usr")
    result = session.run(f"{FORGED_DUMP}; exec 10>&-; (exit 5)")
    assert result.exit_code == 5
    assert session.cwd == "/etc" and session.functions == frozenset({"ls"})
    told_matches_seen(session)
    assert session.run("ls").output == "fake\n"


def test_a_process_flooding_the_dump_pipe_neither_hangs_the_driver_nor_outlives_it(
    session: Sandbox,
) -> None:
    # It holds the pipe after its shell has exited and writes as fast as it can: the
    # driver reads at most a pipe's worth per turn, so it still sees the shell exit; the
    # junk is not a dump, and the writer dies when the driver closes the pipe.
    session.run("KEEP=1")
    flood = session.run("(cat /dev/zero >&10) & X=2; sleep 0.3; echo done", timeout=20)
    assert flood.exit_code == 0 and flood.output == "done\n" and not flood.timed_out
    assert "were not kept" in flood.note
    assert session.run('echo "$KEEP ${X-unset}"; pgrep -c -x cat').output == "1 unset\n0\n"


def test_what_the_host_is_told_is_what_the_next_command_sees(session: Sandbox) -> None:
    for command in (
        "cd /usr; f() { echo f; }",
        "g() { :; }; cd /tmp; exit 0",
        "cd() { :; }; builtin cd /etc",
        "unset -f f; h() { :; }",
        "cd /var; exec true",
    ):
        session.run(command)
        told_matches_seen(session)
    # g went with its shell's exit, cd() was not carried (a builtin's name)
    assert session.functions == frozenset({"h"}) and session.cwd == "/etc"


# -- attacks from outside: frames not signed with the session key -------------------------


def _driver(session: Sandbox) -> tuple[int, list[str]]:
    """(host pid, argv) of the sandbox's driver."""
    assert session.pid is not None
    pidns = procs.child_pidns(session.pid)
    (host_pid,) = [pid for pid, inner in procs.members(pidns) if inner == 1] if pidns else [0]
    argv = Path(f"/proc/{host_pid}/cmdline").read_bytes().decode().split("\0")
    return host_pid, [a for a in argv if a]


def test_a_status_frame_the_driver_did_not_sign_is_rejected(session: Sandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root may open the non-dumpable driver's descriptors from outside")
    session.run("cd /usr")
    host_pid, argv = _driver(session)
    forged = wire.Channel(secrets.token_bytes(wire.KEY_BYTES), wire.TO_HOST)
    frame = forged.seal(b"S", [b"0" * 32, b"0", b"/", b"1", b"", b"1", b"0", b"", b""])
    # argv ends: control fd, status fd, the rlimits
    status = os.open(f"/proc/{host_pid}/fd/{argv[-2]}", os.O_WRONLY)
    try:
        result = session.run("sleep 0.5; echo late", timeout=10)
        os.write(status, frame)
    finally:
        os.close(status)
    # The forged frame arrived while the command ran, or just after: either way it is
    # refused and the sandbox is not trusted any more.
    if not result.shell_restarted:
        result = session.run("echo next")
    assert result.shell_restarted and "failed verification" in result.note
    assert session.run("echo fine").output == "fine\n"


def test_a_command_frame_the_host_did_not_sign_runs_nothing(
    session: Sandbox, workspace: Path
) -> None:
    marker = workspace / "INJECTED"
    box = session._box
    assert box is not None
    forged = wire.Channel(secrets.token_bytes(wire.KEY_BYTES), wire.TO_DRIVER)
    os.write(box.ctl_w, forged.seal(b"C", [b"0" * 32, b"n", f"touch {marker}".encode()]))
    deadline = time.monotonic() + 10
    while box.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert box.proc.poll() is not None  # the driver stopped at the first bad frame
    result = session.run("echo next")
    assert result.shell_restarted and result.output == "next\n"
    assert not marker.exists()


def test_the_driver_outlives_signals_and_its_death_takes_the_sandbox_with_it(
    workspace: Path,
) -> None:
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        s.run("sleep 4848.48 & disown")
        assert s.run("kill -9 1 -1; echo alive").output.endswith("alive\n")
        host_pid, _ = _driver(s)
        os.kill(host_pid, signal.SIGKILL)
        # The sandbox may take one more command before it is seen gone; then it is recreated.
        result = s.run("echo back")
        if result.output != "back\n":
            assert result.shell_restarted
            result = s.run("echo back")
        assert result.output == "back\n" and s.restarts == 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        out = subprocess.run(["pgrep", "-f", "4848.48"], capture_output=True, text=True)
        if not out.stdout.strip():
            break
        time.sleep(0.1)
    assert out.stdout.strip() == ""
