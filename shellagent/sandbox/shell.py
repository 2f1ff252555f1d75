"""The persistent shell: one bwrap sandbox per session, commands sent one at a time.

cwd, variables and functions persist between commands. Each command returns its output
(capped, head + tail), exact exit code (pipefail on) and duration. A timed-out command is
killed with every process it started, background ones included, and the shell stays
usable; a shell that exits or is killed is restarted inside the same sandbox and the loss
of state is reported; a sandbox that dies is recreated. See ``scripts.py`` for the wire
format between this module and the bash inside.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import secrets
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shellagent.errors import InputError, SandboxUnavailable, SessionClosed
from shellagent.sandbox import mounts, procs, seccomp, userns
from shellagent.sandbox.bwrap import USERNS_HINT, find_bwrap
from shellagent.sandbox.output import CappedBuffer, clean
from shellagent.sandbox.profiles import Profile, bwrap_argv, check_writable, get_profile
from shellagent.sandbox.scripts import DRIVER, SUPERVISOR

MAX_COMMAND_BYTES = 128 * 1024
STARTUP_TIMEOUT_S = 20.0
KILL_DRIVER_AFTER_S = 1.0  # after a timeout, if killing the command's processes was not enough
KILL_SANDBOX_AFTER_S = 3.0  # ... and if even a fresh driver does not answer


@dataclass(frozen=True)
class CommandResult:
    command: str
    output: str
    exit_code: int
    duration_s: float
    timed_out: bool = False
    truncated: bool = False
    shell_restarted: bool = False
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Sandbox:
    """One running bwrap process and the three pipes to the bash inside it."""

    def __init__(self, argv: list[str], plan: mounts.MountPlan,
                 inherited: tuple[int, ...] = ()) -> None:
        self.plan = plan
        ctl_r, self.ctl_w = _pipe()
        self.status_r, st_w = _pipe()
        self.out_r, out_w = _pipe()
        child_fds = [ctl_r, st_w, *inherited]
        filter_fd = seccomp.program_fd()
        if filter_fd is not None:
            argv = [*argv, "--seccomp", str(filter_fd)]
            child_fds.append(filter_fd)
        cmd = argv + ["--", "/bin/bash", "--noprofile", "--norc", "-c", SUPERVISOR,
                      "shellagent-supervisor", str(ctl_r), str(st_w), DRIVER]
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
                pass_fds=tuple(child_fds), start_new_session=True, close_fds=True,
            )
        finally:
            for fd in (*child_fds, out_w):
                os.close(fd)
        for fd in (self.status_r, self.out_r):
            os.set_blocking(fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.out_r, selectors.EVENT_READ, "out")
        self.selector.register(self.status_r, selectors.EVENT_READ, "status")
        self.status_buf = b""
        self.supervisor_pid = 0
        self.driver_pid = 0
        self.last_pid = 0
        self.cwd = ""
        self.lost_cwd = ""  # the cwd of a driver that died, to restore in its successor
        self.functions: frozenset[str] = frozenset()
        self.alive = True
        self.pidns: int | None = None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.alive = False
        self.selector.close()
        for fd in (self.ctl_w, self.status_r, self.out_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.plan.remove_created()

    def send(self, command: str, nonce: str) -> None:
        data = b"C" + command.encode() + b"\0N" + nonce.encode() + b"\0"
        view = memoryview(data)
        while view:
            written = os.write(self.ctl_w, view)
            view = view[written:]

    def read_status(self) -> list[list[str]] | None:
        """Complete status records read so far; None once the sandbox is gone."""
        try:
            chunk = os.read(self.status_r, 65536)
        except BlockingIOError:
            return []
        if not chunk:
            return None
        self.status_buf += chunk
        records = []
        while True:
            fields = self.status_buf.split(b"\0")
            need = {b"P": 2, b"R": 4, b"D": 2, b"S": 6}.get(fields[0])
            if need is None:
                if not fields[0] and len(fields) == 1:
                    break
                raise _Desync
            if len(fields) <= need:
                break
            records.append([f.decode("utf-8", "replace") for f in fields[:need]])
            self.status_buf = b"\0".join(fields[need:])
        return records

    def drain(self, sink: Callable[[bytes], None], budget_s: float = 0.1) -> None:
        end = time.monotonic() + budget_s
        while time.monotonic() < end:
            try:
                chunk = os.read(self.out_r, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            sink(chunk)

    def namespace(self) -> int | None:
        if self.pidns is None:
            self.pidns = procs.child_pidns(self.proc.pid)
        return self.pidns


class _Desync(Exception):
    pass


def _pipe() -> tuple[int, int]:
    """A pipe whose ends sit at fd 10 or above, so the bash side can move them to 3 and 4."""
    r, w = os.pipe()
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (r, w)]
    os.close(r)
    os.close(w)
    return high[0], high[1]


class Session:
    """A persistent bash in a bwrap sandbox. Use as a context manager, or call close()."""

    def __init__(
        self,
        profile: Profile | str = "default",
        *,
        timeout: float = 30.0,
        max_session_s: float | None = None,
        head: int = 8192,
        tail: int = 8192,
        cwd: Path | None = None,
    ) -> None:
        self.profile = get_profile(profile, cwd=cwd) if isinstance(profile, str) else profile
        check_writable(self.profile)
        self.timeout = timeout
        self.head, self.tail = head, tail
        self.bwrap = find_bwrap()
        self._lock = threading.Lock()
        self._interrupt = threading.Event()
        self._closed = False
        self._expired = False
        self._box: _Sandbox | None = None
        self._timer: threading.Timer | None = None
        self.restarts = 0
        self._start()
        if max_session_s is not None:
            self._timer = threading.Timer(max_session_s, self._expire)
            self._timer.daemon = True
            self._timer.start()

    # -- lifecycle ---------------------------------------------------------------------

    def _start(self) -> None:
        plan = (
            mounts.ephemeral_plan(self.bwrap.has_overlay)
            if self.profile.ephemeral
            else mounts.default_plan(
                self.profile.writable, self.profile.workdir, self.profile.network
            )
        )
        userns_fd = userns.full_map_userns() if self.profile.ephemeral else None
        inherited = () if userns_fd is None else (userns_fd,)
        box = _Sandbox(bwrap_argv(self.bwrap, self.profile, plan, userns_fd), plan, inherited)
        early = CappedBuffer(4096, 0)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not box.driver_pid:
            if time.monotonic() > deadline or not self._pump(box, early.feed, 0.2):
                box.drain(early.feed)
                box.kill()
                raise SandboxUnavailable(
                    f"the sandbox did not start: {early.text().strip() or 'no output'}",
                    hint=_startup_hint(early.text()),
                )
        box.drain(lambda _: None)
        self._box = box

    def close(self) -> None:
        self._closed = True
        if self._timer:
            self._timer.cancel()
        if self._box:
            self._box.kill()
            self._box = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _expire(self) -> None:
        self._expired = True
        box = self._box
        if box:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(box.proc.pid, signal.SIGKILL)

    def interrupt(self) -> None:
        """Stop the running command as a timeout would (safe from another thread)."""
        self._interrupt.set()

    @property
    def cwd(self) -> str:
        return self._box.cwd if self._box else ""

    @property
    def functions(self) -> frozenset[str]:
        return self._box.functions if self._box else frozenset()

    @property
    def pid(self) -> int | None:
        """The host pid of the bwrap process (for tests and diagnostics)."""
        return self._box.proc.pid if self._box else None

    # -- running commands ----------------------------------------------------------------

    def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> CommandResult:
        validate_command(command)
        with self._lock:
            if self._closed or self._expired:
                raise SessionClosed(
                    "this sandbox session has ended"
                    + (" (it reached its time limit)" if self._expired else ""),
                    hint="start a new session",
                )
            self._interrupt.clear()
            return self._run(command, self.timeout if timeout is None else timeout, on_output)

    def _run(
        self, command: str, timeout: float, on_output: Callable[[str], None] | None
    ) -> CommandResult:
        box = self._box
        assert box is not None
        lost = ""
        if box.proc.poll() is not None:  # died since the last command (e.g. `kill $PPID`)
            self._recreate()
            box = self._box
            assert box is not None
            lost = "the sandbox had exited; it was recreated and all shell state was lost"
        box.drain(lambda _: None)  # output of earlier background jobs is not this command's
        buf = CappedBuffer(self.head, self.tail)
        feed = _streamer(buf, on_output)
        nonce = secrets.token_hex(16)
        start = time.monotonic()
        first_new_pid = box.last_pid + 1
        try:
            box.send(command, nonce)
        except BrokenPipeError:
            return self._lost(command, buf, start, "the sandbox had died; it was recreated")
        deadline = start + timeout
        timed_out = False
        driver_killed = False
        while True:
            now = time.monotonic()
            stop = self._interrupt.is_set() or self._expired
            if (now >= deadline or stop) and not timed_out:
                timed_out, deadline = True, now
            if timed_out:
                procs.kill_new(box.namespace(), first_new_pid,
                               {1, box.supervisor_pid, box.driver_pid})
                if now - deadline > KILL_DRIVER_AFTER_S and not driver_killed:
                    procs.kill_inner(box.namespace(), box.driver_pid)
                    driver_killed = True
                if now - deadline > KILL_SANDBOX_AFTER_S or self._expired:
                    return self._lost(command, buf, start, "the command did not stop; "
                                      "the sandbox was destroyed and recreated", timed_out)
            try:
                records = self._pump(box, feed, 0.05 if timed_out else 0.5)
            except KeyboardInterrupt:  # Ctrl-C stops the command, not the session
                self._interrupt.set()
                continue
            except _Desync:
                return self._lost(command, buf, start, "the shell's status channel was "
                                  "corrupted; the sandbox was recreated", timed_out)
            if records is None:
                return self._lost(command, buf, start, "the sandbox exited; it was "
                                  "recreated and all shell state was lost", timed_out)
            for record in records:
                if record[0] == "S" and record[1] == nonce:
                    box.drain(feed)
                    return self._result(command, buf, start, int(record[2]), timed_out,
                                        bool(lost), lost)
                if record[0] == "D":
                    return self._driver_died(command, buf, start, int(record[1]), timed_out)

    def _pump(self, box: _Sandbox, feed: Callable[[bytes], None],
              wait_s: float) -> list[list[str]] | None:
        """Read what is ready on both pipes; status records, or None if the sandbox died."""
        records: list[list[str]] = []
        for key, _ in box.selector.select(wait_s):
            if key.data == "out":
                box.drain(feed, 0.02)
                continue
            got = box.read_status()
            if got is None:
                return None
            for record in got:
                kind = record[0]
                if kind == "P":
                    box.supervisor_pid = int(record[1])
                elif kind == "R":
                    box.driver_pid, box.cwd = int(record[1]), record[2]
                    box.last_pid = int(record[3])
                elif kind == "S":
                    box.cwd, box.last_pid = record[3], int(record[4])
                    box.functions = frozenset(record[5].split())
                elif kind == "D":  # in order: a replacement's R may follow in this batch
                    box.driver_pid, box.lost_cwd = 0, box.cwd
                records.append(record)
        if not records and box.proc.poll() is not None:
            box.drain(feed)
            return None
        return records

    def _result(self, command: str, buf: CappedBuffer, start: float, code: int,
                timed_out: bool, restarted: bool = False, note: str = "") -> CommandResult:
        if timed_out:
            why = "interrupted" if self._interrupt.is_set() else "timed out"
            note = "; ".join(filter(None, [
                f"the command {why}; every process it started was killed", note]))
        output = buf.text()
        if timed_out:
            output += ("" if output.endswith("\n") or not output else "\n") + "[timed out]"
        return CommandResult(
            command=command, output=output, exit_code=124 if timed_out else code,
            duration_s=round(time.monotonic() - start, 6), timed_out=timed_out,
            truncated=buf.truncated, shell_restarted=restarted, note=note,
        )

    def _driver_died(self, command: str, buf: CappedBuffer, start: float, code: int,
                     timed_out: bool) -> CommandResult:
        """The shell exited (``exit``, ``exec``, a kill): wait for its replacement, keep cwd."""
        box = self._box
        assert box is not None
        old_cwd = box.lost_cwd
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not box.driver_pid:
            records = self._pump(box, buf.feed, 0.2)
            if records is None or time.monotonic() > deadline:
                return self._lost(command, buf, start, "the shell exited and could not be "
                                  "restarted; the sandbox was recreated", timed_out)
        self.restarts += 1
        if old_cwd:
            self._run(f"cd -- {shlex.quote(old_cwd)}", 5.0, None)
        note = ("the shell exited and was restarted: variables, functions and options "
                f"were reset; the working directory is {box.cwd}")
        return self._result(command, buf, start, code, timed_out, True, note)

    def _lost(self, command: str, buf: CappedBuffer, start: float, why: str,
              timed_out: bool = False) -> CommandResult:
        """The whole sandbox is gone: make a new one (unless the session has ended)."""
        if self._expired:
            if self._box:
                self._box.kill()
                self._box = None
            why = "the session reached its time limit; the sandbox was destroyed"
        else:
            self._recreate()
        code = 124 if timed_out else 137
        return self._result(command, buf, start, code, timed_out, True, why)

    def _recreate(self) -> None:
        """A fresh sandbox in place of a dead one, in the same directory where possible."""
        box = self._box
        old_cwd = box.cwd if box else ""
        if box:
            box.kill()
            self._box = None
        self._start()
        self.restarts += 1
        if old_cwd and not self.profile.ephemeral:
            self._run(f"cd -- {shlex.quote(old_cwd)} 2>/dev/null", 5.0, None)


def _streamer(buf: CappedBuffer, on_output: Callable[[str], None] | None
              ) -> Callable[[bytes], None]:
    """Feed the buffer; stream the head of the output live, then say the rest is elided."""
    if on_output is None:
        return buf.feed
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(chunk: bytes) -> None:
        before = buf.total
        buf.feed(chunk)
        if before < buf.head_limit:
            text = clean(decoder.decode(chunk[: buf.head_limit - before]))
            if text:
                on_output(text)
            if buf.total >= buf.head_limit:
                on_output("\n[… output continues; the end is shown when the command ends …]\n")

    return feed


def validate_command(command: str) -> None:
    if "\0" in command:
        raise InputError("the command contains a NUL byte, which bash cannot run",
                         hint="remove it")
    size = len(command.encode("utf-8", errors="surrogateescape"))
    if size > MAX_COMMAND_BYTES:
        raise InputError(
            f"the command is {size} bytes; the limit is {MAX_COMMAND_BYTES}",
            hint="write long scripts to a file first and run the file",
        )
    if not command.strip():
        raise InputError("the command is empty")


def _startup_hint(text: str) -> str:
    lowered = text.lower()
    if "namespace" in lowered or "permission denied" in lowered or "uid map" in lowered:
        return USERNS_HINT
    return "run `shellagent doctor` for details"
