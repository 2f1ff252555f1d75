"""The persistent shell: one bwrap sandbox per session, commands sent one at a time.

cwd, variables and functions persist between commands. Each command returns its output
(capped, head + tail), exact exit code (pipefail on) and duration. A timed-out command is
killed with every process it started, background ones included, and the shell stays
usable; a shell that exits or is killed is restarted inside the same sandbox and the loss
of state is reported; a sandbox that dies is recreated. See ``scripts.py`` for the wire
format between this module and the bash inside.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import itertools
import os
import secrets
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from shellagent.errors import InputError, SandboxUnavailable, SessionClosed
from shellagent.jsontypes import JsonObject
from shellagent.sandbox import driver, mounts, procs, seccomp, wire
from shellagent.sandbox.bwrap import USERNS_HINT, find_bwrap
from shellagent.sandbox.diskcap import DiskWatch
from shellagent.sandbox.hostview import HostView
from shellagent.sandbox.interface import Grants
from shellagent.sandbox.limits import Cgroup, Limits
from shellagent.sandbox.output import CappedBuffer, refusal_seen, streamer
from shellagent.sandbox.profiles import (
    SYSTEM_PATH,
    Profile,
    bwrap_argv,
    check_writable,
    get_profile,
)

MAX_COMMAND_BYTES = 128 * 1024
STARTUP_TIMEOUT_S = 20.0
KILL_SANDBOX_AFTER_S = 3.0  # after a timeout, if the driver does not report the command done


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
    # Ran in the read-only Landlock domain, and whether something it tried was refused: a
    # write, connection or signal by the kernel, or a change to a variable that makes
    # programs run code by the driver. Either means the policy's read-only claim was wrong.
    confined: bool = False
    refused: bool = False

    def to_json(self) -> JsonObject:
        return asdict(self)


@dataclass(frozen=True)
class _Ready:
    """The driver's ``R`` record: the session's shell is ready."""

    nonce: str
    cwd: str
    last_pid: int
    landlock_abi: int
    functions: frozenset[str]  # carried in from an earlier sandbox (``Sandbox(state=)``)


@dataclass(frozen=True)
class _Exported:
    """The driver's ``X`` record: the shell state, as the dump it was read from."""

    dump: bytes


@dataclass(frozen=True)
class _Status:
    """The driver's ``S`` record: a command finished (authenticated, see ``wire``)."""

    nonce: str
    exit_code: int
    cwd: str
    last_pid: int
    functions: frozenset[str]
    carried: bool  # its changes to cwd, variables and functions were kept
    confined: bool  # it ran in the read-only Landlock domain
    dropped: str  # functions not carried to the next command
    undone: str  # code-running variables a read-only command changed (not kept)
    walled: str = ""  # why the driver did not run a read-only command (``driver.unlisted``)


def _record(kind: bytes, fields: list[str]) -> _Ready | _Status | _Exported:
    if kind == b"R":
        nonce, cwd, last, abi, functions = fields
        return _Ready(nonce, cwd, int(last), int(abi), frozenset(functions.split("\n")) - {""})
    nonce, rc, cwd, last, functions, carried, confined, dropped, undone, walled = fields
    return _Status(
        nonce,
        int(rc),
        cwd,
        int(last),
        frozenset(functions.split("\n")) - {""},
        carried == "1",
        confined == "1",
        dropped,
        undone,
        walled,
    )


class _Sandbox:
    """One running bwrap process: the driver inside, its two pipes and the output pipe."""

    def __init__(
        self,
        argv: list[str],
        plan: mounts.MountPlan,
        inherited: tuple[int, ...] = (),
        *,
        limits: Limits,
        prefix: list[str] | None = None,
        seed: bytes | None = None,
        umask: int | None = None,
        unix_sockets: bool = True,
        allocate: bool = True,
    ) -> None:
        self.plan = plan
        key = secrets.token_bytes(wire.KEY_BYTES)
        self.tx = wire.Channel(key, wire.TO_DRIVER)
        self.rx = wire.Channel(key, wire.TO_HOST)
        ctl_r, self.ctl_w = _pipe()
        self.status_r, st_w = _pipe()
        self.out_r, out_w = _pipe()
        code_fd = _memfd("shellagent-driver", driver.program())
        child_fds = [ctl_r, st_w, code_fd, *inherited]
        filter_fd = seccomp.program_fd(unix_sockets=unix_sockets, allocate=allocate)
        if filter_fd is not None:
            argv = [*argv, "--seccomp", str(filter_fd)]
            child_fds.append(filter_fd)
        python, prefixes = driver.interpreter()
        binds: list[str] = []
        for tree in prefixes:
            # Bound from an fd opened here: bwrap may run as an unprivileged id (a shifted
            # throwaway root) that could not even traverse /root to a pyenv under it.
            fd = os.open(tree, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            child_fds.append(fd)
            binds += ["--ro-bind-fd", str(fd), tree]
        cmd = [
            *argv,
            "--as-pid-1",
            *binds,
            "--",
            python,
            "-I",
            "-S",
            "-c",
            driver.BOOTSTRAP,
            str(code_fd),
            str(ctl_r),
            str(st_w),
            limits.rlimits(),
        ]
        cmd = [*(prefix or []), *cmd]  # joins the session's cgroup, then execs bwrap
        try:
            # bwrap stays alive outside the driver, and a process's environment can be
            # read through /proc: give it nothing of the caller's (API keys).
            self.proc = subprocess.Popen(
                cmd,
                env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"},
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=out_w,
                pass_fds=tuple(child_fds),
                start_new_session=True,
                close_fds=True,
                umask=-1 if umask is None else umask,
            )
        finally:
            for fd in (*child_fds, out_w):
                os.close(fd)
        with contextlib.suppress(BrokenPipeError):  # bwrap failed: _start reports why
            self._write(wire.key_frame(key))
            # the state to start from (an export of an earlier sandbox), or none
            self._write(self.tx.seal(b"I", seed.split(b"\0") if seed else [b""]))
        for fd in (self.status_r, self.out_r):
            os.set_blocking(fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.out_r, selectors.EVENT_READ, "out")
        self.selector.register(self.status_r, selectors.EVENT_READ, "status")
        self.out_clear = False  # the output pipe was read empty after the last command
        self.status_buf = b""
        self.ready = False
        self.last_pid = 0
        self.cwd = ""
        self.functions: frozenset[str] = frozenset()
        self.landlock_abi = 0
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
        self.plan.release()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.ctl_w, view) :]

    def ask_state(self) -> None:
        """Ask the driver for its state (answered by an ``X`` record)."""
        self._write(self.tx.seal(b"X", [b""]))

    def send(
        self, command: str, nonce: str, confined: bool, judged: Sequence[tuple[int, str]]
    ) -> None:
        listed = ",".join(f"{offset}{kind}" for offset, kind in judged) if confined else ""
        fields = [nonce.encode(), b"r" if confined else b"n", command.encode(), listed.encode()]
        self._write(self.tx.seal(b"C", fields))

    def read_status(self) -> list[_Ready | _Status | _Exported] | None:
        """Complete, verified status records read so far; None once the sandbox is gone."""
        try:
            chunk = os.read(self.status_r, 65536)
        except BlockingIOError:
            return []
        if not chunk:
            return None
        self.status_buf += chunk
        records: list[_Ready | _Status | _Exported] = []
        while True:
            try:
                parts = wire.split(self.status_buf)
                if parts is None:
                    break
                kind, payload, tag, self.status_buf = parts
                fields = self.rx.open(kind, payload, tag)
            except wire.WireError as exc:
                raise _Desync from exc
            if kind == b"X":  # NUL-separated like the dump itself
                records.append(_Exported(b"\0".join(fields)))
                continue
            need = {b"R": 5, b"S": 10}.get(kind)
            if need != len(fields):
                raise _Desync
            try:
                records.append(_record(kind, [f.decode("utf-8", "replace") for f in fields]))
            except ValueError as exc:  # a verified record of the wrong shape: never trusted
                raise _Desync from exc
        return records

    def drain(self, sink: Callable[[bytes], None], budget_s: float = 0.1) -> None:
        """Pass what the output pipe holds to ``sink``, for at most ``budget_s``."""
        end = time.monotonic() + budget_s
        self.out_clear = False
        while time.monotonic() < end:
            try:
                chunk = os.read(self.out_r, 65536)
            except BlockingIOError:
                self.out_clear = True  # only the next command's output comes after this
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
    """A pipe whose ends sit at fd 10 or above, clear of the driver's standard streams."""
    r, w = os.pipe()
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (r, w)]
    os.close(r)
    os.close(w)
    return high[0], high[1]


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Sandbox:
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
        state: bytes | None = None,
    ) -> None:
        """``state`` is what ``export_state`` of an earlier session returned: variables,
        functions, options and umask start from it (not the working directory, and not the
        variables that make programs run code, which stay this sandbox's)."""
        self.profile = get_profile(profile, cwd=cwd) if isinstance(profile, str) else profile
        self._seed = state
        self.limits = self.profile.limits or Limits.default()
        cap = self.profile.capped
        if cap is not None:  # no one file may outgrow the cap either
            size = min(self.limits.file_bytes, cap.limit)
            self.limits = dataclasses.replace(self.limits, file_bytes=size)
        protected = mounts.protected_paths(self.profile.hidden)  # scanned once for both uses
        check_writable(self.profile, protected)
        self.timeout = timeout
        self.head, self.tail = head, tail
        self.bwrap = find_bwrap()
        self._lock = threading.Lock()
        # Ties a status to its command. A counter is enough: frames are signed and numbered,
        # so none can be replayed or forged (``wire.py``).
        self._nonces = itertools.count(1)
        self._interrupt = threading.Event()
        self._closed = False
        self._expired = False
        self._box: _Sandbox | None = None
        self._host_view: HostView | None = None
        self._timer: threading.Timer | None = None
        self.restarts = 0
        self._watch: DiskWatch | None = None
        self._trips_seen = 0
        self._start(protected)
        if cap is not None and self.profile.overlays:
            # started with the first command: nothing writes before it, and started here it
            # would wait for the GIL while the host view takes its first snapshot
            uppers = [o.upper for o in self.profile.overlays]
            self._watch = DiskWatch(uppers, cap, self._disk_full)
        if max_session_s is not None:
            self._timer = threading.Timer(max_session_s, self._expire)
            self._timer.daemon = True
            self._timer.start()

    # -- lifecycle ---------------------------------------------------------------------

    def _start(
        self, protected: list[Path] | None = None, skip: frozenset[Path] = frozenset()
    ) -> None:
        """Start the sandbox (``protected``: ``mounts.protected_paths``, if just scanned;
        ``skip``: host sockets not to hide, because bwrap failed on them)."""
        tmp_bytes = self.limits.tmp_bytes if self.bwrap.has_tmpfs_size else None
        plan = (
            mounts.ephemeral_plan(self.bwrap.has_overlay, tmp_bytes=tmp_bytes)
            if self.profile.ephemeral
            else mounts.default_plan(
                self.profile.writable,
                self.profile.workdir,
                self.profile.network,
                hide=self.profile.hidden,
                tmp_bytes=tmp_bytes,
                overlays=self.profile.overlays,
                protected=protected,
                skip_sockets=skip,
            )
        )
        try:
            if self.profile.host_view and not self.profile.ephemeral:
                view = HostView()
                plan.held.append(view)
                plan.args += view.bind_args()
                self._host_view = view
            argv = bwrap_argv(self.bwrap, self.profile, plan)
            group = Cgroup.create(self.limits)
            if group is not None:
                plan.held.append(group)
            prefix = group.wrap([]) if group is not None else None
            seed, self._seed = self._seed, None  # a sandbox made again later starts afresh
            box = _Sandbox(
                argv,
                plan,
                limits=self.limits,
                prefix=prefix,
                seed=seed,
                umask=self.profile.umask,
                unix_sockets=self.profile.unix_sockets,
                allocate=self.profile.capped is None,
            )
        except BaseException:
            plan.release()
            raise
        early = CappedBuffer(4096, 0)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not box.ready:
            if time.monotonic() > deadline or self._pump(box, early.feed, 0.2) is None:
                box.drain(early.feed)
                box.kill()
                plan.settle_sockets()
                gone = frozenset(p for p in plan.sockets if str(p) in early.text())
                if gone and not skip:  # a host socket went away while bwrap started
                    return self._start(protected, gone)
                raise SandboxUnavailable(
                    f"the sandbox did not start: {early.text().strip() or 'no output'}",
                    hint=_startup_hint(early.text()),
                )
        box.drain(lambda _: None)
        plan.settle_sockets()
        self._box = box
        if self._host_view is not None:
            self._host_view.begin()

    def close(self) -> None:
        self._closed = True
        if self._timer:
            self._timer.cancel()
        if self._watch is not None:
            self._watch.stop()
        if self._box:
            self._box.kill()
            self._box = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _expire(self) -> None:
        self._expired = True
        box = self._box
        if box:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(box.proc.pid, signal.SIGKILL)

    def _disk_full(self, reason: str) -> None:
        """The disk watcher's trip (from its thread): every process of the session but
        its init is killed, the running command, servers and background jobs alike (which
        of them writes cannot be told); the next result says why."""
        box = self._box
        if box is not None and box.alive:
            procs.kill_new(box.namespace(), 2, {1})

    @property
    def disk_stopped(self) -> str:
        """Why the disk watcher last stopped the session's processes, or ``""``."""
        return self._watch.reason if self._watch is not None else ""

    def export_state(self, timeout: float = 5.0) -> bytes | None:
        """The shell's state (variables, functions, options, umask, cwd) as the driver read
        it from the last command, for ``Sandbox(state=…)`` of a later sandbox; None when no
        command has left one or the sandbox is gone. Opaque bytes: the next driver parses
        them as strictly as any command's dump."""
        with self._lock:
            box = self._box
            if box is None or not box.alive:
                return None
            try:
                box.ask_state()
            except OSError:
                return None
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    records = self._pump(box, lambda _: None, 0.1)
                except _Desync:
                    return None
                if records is None:
                    return None
                for record in records:
                    if isinstance(record, _Exported):
                        return record.dump or None
            return None

    def interrupt(self) -> None:
        """Stop the running command as a timeout would (safe from another thread)."""
        self._interrupt.set()

    @property
    def cwd(self) -> str:
        return self._box.cwd if self._box else ""

    @property
    def grants(self) -> Grants:
        """What this sandbox's commands may touch, from its profile."""
        p = self.profile
        return Grants(
            profile=p.name,
            workdir=p.workdir,
            writable=p.writable,
            anywhere_writable=p.ephemeral,
            network=p.network,
            overlaid=tuple(o.lower for o in p.overlays),
        )

    @property
    def functions(self) -> frozenset[str]:
        return self._box.functions if self._box else frozenset()

    @property
    def landlock_abi(self) -> int:
        """The Landlock ABI inside the sandbox; 0 means commands cannot be confined."""
        return self._box.landlock_abi if self._box else 0

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
        confined: bool = False,
        judged: Sequence[tuple[int, str]] = (),
    ) -> CommandResult:
        """Run ``command``; ``confined`` runs it where the kernel refuses every change
        (the policy allowed it as read-only), when the kernel has Landlock. ``judged``:
        the substitutions the policy judged in it (``Evaluation.substitutions``); a
        confined command holding any other is not run (exit code 126, ``refused``)."""
        validate_command(command)
        with self._lock:
            if self._closed or self._expired:
                raise SessionClosed(
                    "this sandbox session has ended"
                    + (" (it reached its time limit)" if self._expired else ""),
                    hint="start a new session",
                )
            self._interrupt.clear()
            limit = self.timeout if timeout is None else timeout
            if self._watch is not None:
                self._watch.busy(True)
            try:
                return self._run(command, limit, on_output, confined, judged)
            finally:
                if self._watch is not None:
                    self._watch.busy(False)

    def _run(
        self,
        command: str,
        timeout: float,
        on_output: Callable[[str], None] | None,
        confined: bool = False,
        judged: Sequence[tuple[int, str]] = (),
    ) -> CommandResult:
        box = self._box
        assert box is not None
        lost = ""
        if box.proc.poll() is not None:  # died since the last command
            self._recreate()
            box = self._box
            assert box is not None
            lost = "the sandbox had exited; it was recreated and all shell state was lost"
        if self._host_view is not None:
            self._host_view.refresh(command)
        if self._watch is not None and not self._watch.started:
            self._watch.start()
        if not box.out_clear:  # what the last command's drain left is not this one's
            box.drain(lambda _: None)
        buf = CappedBuffer(self.head, self.tail)
        feed = streamer(buf, on_output)
        nonce = str(next(self._nonces))
        start = time.monotonic()
        first_new_pid = box.last_pid + 1
        try:
            box.send(command, nonce, confined, judged)
        except BrokenPipeError:
            return self._lost(command, buf, start, "the sandbox had died; it was recreated")
        deadline = start + timeout
        timed_out = False
        while True:
            now = time.monotonic()
            stop = self._interrupt.is_set() or self._expired
            if (now >= deadline or stop) and not timed_out:
                timed_out, deadline = True, now
            if timed_out:
                procs.kill_new(box.namespace(), first_new_pid, {1})
                if now - deadline > KILL_SANDBOX_AFTER_S or self._expired:
                    return self._lost(
                        command,
                        buf,
                        start,
                        "the command did not stop; the sandbox was destroyed and recreated",
                        timed_out,
                    )
            try:
                records = self._pump(box, feed, 0.05 if timed_out else 0.5)
            except KeyboardInterrupt:  # Ctrl-C stops the command, not the session
                self._interrupt.set()
                continue
            except _Desync:
                return self._lost(
                    command,
                    buf,
                    start,
                    "the shell's status channel failed verification; the sandbox was recreated",
                    timed_out,
                )
            if records is None:
                return self._lost(
                    command,
                    buf,
                    start,
                    "the sandbox exited; it was recreated and all shell state was lost",
                    timed_out,
                )
            for record in records:
                if isinstance(record, _Status) and record.nonce == nonce:
                    if timed_out:  # what the command forked just before it died, too
                        procs.sweep_range(box.namespace(), first_new_pid, record.last_pid)
                    box.drain(feed)
                    return self._finished(command, buf, start, record, timed_out, lost)

    def _pump(
        self, box: _Sandbox, feed: Callable[[bytes], None], wait_s: float
    ) -> list[_Ready | _Status | _Exported] | None:
        """Read what is ready on both pipes; status records, or None if the sandbox died."""
        records: list[_Ready | _Status | _Exported] = []
        for key, _ in box.selector.select(wait_s):
            if key.data == "out":
                box.drain(feed, 0.02)
                continue
            got = box.read_status()
            if got is None:
                return None
            for record in got:
                if isinstance(record, _Ready):
                    box.ready, box.cwd = True, record.cwd
                    box.last_pid, box.landlock_abi = record.last_pid, record.landlock_abi
                    box.functions = record.functions
                elif isinstance(record, _Status):
                    box.cwd, box.last_pid = record.cwd, record.last_pid
                    box.functions = record.functions
                records.append(record)
        if not records and box.proc.poll() is not None:
            box.drain(feed)
            return None
        return records

    def _finished(
        self,
        command: str,
        buf: CappedBuffer,
        start: float,
        record: _Status,
        timed_out: bool,
        lost: str,
    ) -> CommandResult:
        """The result of a command's status record."""
        carried, confined = record.carried, record.confined
        dropped, undone = record.dropped, record.undone
        notes = [lost]
        stopped = self._watch is not None and self._watch.trips != self._trips_seen
        if not carried and not timed_out and not stopped:  # the disk note says why
            notes.append(
                "the command ended its shell before it finished (exit, exec, errexit or a "
                "signal): its changes to the working directory, variables and functions "
                "were not kept"
            )
        if dropped:
            notes.append(
                f"functions not carried to the next command (a builtin's name, or too "
                f"large): {dropped}"
            )
        kernel = confined and refusal_seen(buf.text())
        if kernel:
            notes.append(
                "the policy allowed this command as read-only, but the kernel refused "
                "something it tried to do (a write, a connection or a signal)"
            )
        if undone:
            notes.append(
                "the policy allowed this command as read-only, but it changed variables "
                "that make programs run other code, the umask, functions or shell options; "
                f"the change was not kept: {undone}"
            )
        if record.walled:
            notes.append(f"not run: {record.walled}")
        refused = kernel or bool(undone) or bool(record.walled)
        return self._result(
            command, buf, start, record.exit_code, timed_out, bool(lost), notes, confined, refused
        )

    def _result(
        self,
        command: str,
        buf: CappedBuffer,
        start: float,
        code: int,
        timed_out: bool,
        restarted: bool = False,
        notes: list[str] | None = None,
        confined: bool = False,
        refused: bool = False,
    ) -> CommandResult:
        notes = list(notes or [])
        if timed_out:
            why = "interrupted" if self._interrupt.is_set() else "timed out"
            notes.insert(
                0,
                f"the command {why}; every process it started was killed and its changes "
                "to the shell state were not kept",
            )
        output = buf.text()
        if timed_out:
            output += ("" if output.endswith("\n") or not output else "\n") + "[timed out]"
        watch = self._watch
        if watch is not None and watch.trips != self._trips_seen:
            self._trips_seen = watch.trips
            notes.append(
                f"stopped: {watch.reason}; every process of the session was killed (this "
                "command's and any an earlier one left running)"
            )
        removed = self._box.plan.sweep() if self._box else []
        if removed:
            names = ", ".join(str(p) for p in removed)
            notes.append(f"removed {names}: git would act on it outside the sandbox")
        return CommandResult(
            command=command,
            output=output,
            exit_code=124 if timed_out else code,
            duration_s=round(time.monotonic() - start, 6),
            timed_out=timed_out,
            truncated=buf.truncated,
            shell_restarted=restarted,
            note="; ".join(filter(None, notes)),
            confined=confined,
            refused=refused,
        )

    def _lost(
        self, command: str, buf: CappedBuffer, start: float, why: str, timed_out: bool = False
    ) -> CommandResult:
        """The whole sandbox is gone: make a new one (unless the session has ended)."""
        if self._expired:
            if self._box:
                self._box.kill()
                self._box = None
            why = "the session reached its time limit; the sandbox was destroyed"
        else:
            self._recreate()
        code = 124 if timed_out else 137
        return self._result(command, buf, start, code, timed_out, True, [why])

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


def validate_command(command: str) -> None:
    if "\0" in command:
        raise InputError("the command contains a NUL byte, which bash cannot run", hint="remove it")
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
