"""The sandbox's driver: pid 1 inside, the only process that talks to the host.

The host starts bwrap with ``--as-pid-1`` and the standard-library Python of its own
interpreter (``-I -S``), which loads this module and its siblings (``landlock``,
``seccomp``, ``wire``, ``scripts``, ``state``) from code the host compiled and put in a
memfd (see ``program``). The driver never runs a command itself. For each command it takes
a bash process it started beforehand (see ``scripts.py`` for what that bash does), hands
it the command, relays its output, waits for it to exit, and reports to the host in a
frame signed with the session key (``wire.py``; the frames are listed in docs/sandbox.md).

Why a command cannot reach it or fake what it says:

* It is not dumpable (``PR_SET_DUMPABLE`` 0), so no process in the sandbox may open its
  ``/proc/1/fd``, read its memory or environment; the sandbox has no ``CAP_SYS_PTRACE``.
  Every command also runs in a Landlock domain of its own (ABI 2+), which keeps it out of
  the ``/proc`` entries of every process outside that domain: the driver, the bash
  processes waiting for later commands, and what earlier commands left running.
* As pid 1 of the pid namespace it ignores every signal sent from inside (``kill -9 1``,
  ``kill -9 -1``), and when it exits the kernel ends everything in the sandbox.
* The exit code is the wait status of the command's bash, never text the command wrote.
  The state carried to the next command (cwd, variables, functions, options, umask) is
  what the command's own shell wrote to its dump file, parsed strictly as data: values
  become single-quoted words, functions are handed over as ``BASH_FUNC_name%%``
  environment entries, which bash imports by parsing one function definition and nothing
  else, and option names must be on a fixed list. The host is told exactly the cwd and
  functions the next command will start with.
* The host's pipes, the session key and the Landlock rulesets are close-on-exec and never
  reach a command. Each command has an output pipe of its own; only the driver writes to
  the host's, so a background process cannot read or write a later command's output.

Commands the host marks read-only run in the ``read_only`` Landlock domain; the others in
the ``isolating`` one (see ``landlock.py``), read-only ones also under a seccomp filter
that refuses metadata changes. Without Landlock both run with no domain, and the host is
told (``R`` carries the ABI).

A read-only command comes with the substitutions the host's policy judged in it (their
offsets and kinds). The driver reads the command with its own lexer of bash's quoting
(``shellagent.substitutions``) and does not run one holding a ``$( )``, backtick, ``<( )``,
``>( )``, ``$(( ))`` or ``$[ ]`` at any other place, or whose quoting it cannot follow: code
the policy never saw would run in it. The command's status then says why (``S``'s last
field) and its exit code is 126.
"""

from __future__ import annotations

import fcntl

# ``posix`` under the name ``os``, here and in the modules the driver loads: the same
# functions, without the 0.9 ms that importing ``os`` (and ``_collections_abc``) added to
# every sandbox's start-up.
import posix as os
import select
import struct
import sys
import time

from shellagent import substitutions
from shellagent.sandbox import landlock, scripts, seccomp, wire
from shellagent.sandbox.state import State, Unreadable

BASH = b"/bin/bash"
IDLE_POLL_MS = 25  # how soon, when idle, to start the second kind of spare shell
DUMP_WATCH_MS = 50  # a command running longer has its dump read as it comes
REAP_POLL_MS = 1000
DUMP_LIMIT = 32 * 1024 * 1024
PIPE_BYTES = 1024 * 1024
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
READ_ONLY, NORMAL = "read_only", "normal"

# -- host side: what the host runs inside bwrap ---------------------------------------------

# Run by ``python -I -S -c``: argv is the memfd with the code, then the two pipes.
BOOTSTRAP = """
import marshal, posix as os, sys
fd = int(sys.argv[1])
units = marshal.loads(os.read(fd, os.fstat(fd).st_size))
os.close(fd)
for name in ("shellagent", "shellagent.sandbox"):
    sys.modules[name] = type(sys)(name)
    sys.modules[name].__path__ = []
for name, code in units:
    module = sys.modules[name] = type(sys)(name)
    exec(code, module.__dict__)
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)
sys.modules["shellagent.sandbox.driver"].main(sys.argv[2:])
"""


_program: list[bytes] = []
_SANDBOX_UNITS = ("landlock", "seccomp", "wire", "scripts", "state", "driver")


def program() -> bytes:
    """The driver and the modules it uses, compiled and marshalled for ``BOOTSTRAP``."""
    if _program:
        return _program[0]
    import marshal
    from pathlib import Path

    units = []
    package = Path(__file__).parents[1]
    for name in ("substitutions", *(f"sandbox.{n}" for n in _SANDBOX_UNITS)):
        path = package.joinpath(*name.split(".")).with_suffix(".py")
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        units.append((f"shellagent.{name}", code))
    _program.append(marshal.dumps(units))
    return _program[0]


# Visible, read-only, in both profiles: an interpreter below them needs no extra mount.
SYSTEM_PREFIXES = ("/usr/", "/opt/", "/srv/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/")
_interpreter: list[tuple[str, tuple[str, ...]]] = []


def interpreter() -> tuple[str, tuple[str, ...]]:
    """The Python that runs the driver (the host's base interpreter, without the venv)
    and the directories to bind read-only so it and its standard library are visible in
    every profile: the ephemeral profile empties ``/root`` and ``/home``, where pyenv or
    uv keep theirs."""
    if _interpreter:
        return _interpreter[0]
    import os.path  # the host's: ``posix`` has no ``path``

    python = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    found: tuple[str, tuple[str, ...]] | None = None
    if not python.startswith(SYSTEM_PREFIXES):
        # An interpreter of the same version in a system directory runs the same marshalled
        # code and is visible everywhere without a bind (a throwaway root with shifted ids
        # cannot even traverse /root to reach a pyenv there).
        minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        for directory in ("/usr/bin", "/usr/local/bin"):
            candidate = os.path.join(directory, minor)
            if found is None and os.access(candidate, os.X_OK):
                found = os.path.realpath(candidate), ()
    if found is None:
        prefixes: list[str] = []
        for prefix in dict.fromkeys(
            os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)
        ):
            if not (prefix + "/").startswith(SYSTEM_PREFIXES) and os.path.isdir(prefix):
                prefixes.append(prefix)
        found = python, tuple(prefixes)
    _interpreter.append(found)
    return found


# -- inside the sandbox ----------------------------------------------------------------------


class BashProcess:
    """One bash started ahead of its command: its state restored, waiting for the job."""

    def __init__(
        self, kind: str, state: State, ruleset: int | None, metadata: bytes | None = None
    ) -> None:
        self.kind = kind
        self.state = state
        self.environment = state.environment()
        self.restore = state.restored
        state_r, state_w = _pipe()
        job_r, job_w = _pipe()
        # The dump goes to a pipe that the driver reads once the shell has exited (or, for a
        # command that runs longer than DUMP_WATCH_MS, as it comes: see ``collect``). Bash
        # writes it in a hundred small writes; a watched pipe would wake the driver at
        # each, and writes to a memfd cost 0.07 ms more per command.
        self.dump, dump_w = _pipe()
        self.dumped: list[bytes] = []
        self.dumped_bytes = 0
        self.out_r, out_w = _pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child execs or exits at once
            pipes = (state_r, job_r, dump_w, out_w)
            _become_shell(pipes, state.cwd, ruleset, metadata, self.environment)
        for fd in (state_r, job_r, dump_w, out_w):
            os.close(fd)
        self.job_w: int | None = job_w
        self.pidfd = os.pidfd_open(self.pid)
        # Written now, while nobody waits: the shell reads it as it starts. A state larger
        # than the pipe (1 MiB) makes the driver wait for the shell here.
        try:
            view = memoryview(self.restore)
            while view:
                view = view[os.write(state_w, view) :]
        except BrokenPipeError:
            pass  # killed already; noticed when it is taken
        os.close(state_w)
        for fd in (job_w, self.out_r, self.dump):
            os.set_blocking(fd, False)

    def fresh_for(self, state: State) -> bool:
        if self.state is state:  # the usual case: the last command changed nothing
            return True
        return self.restore == state.restored and self.environment == state.environment()

    def read_dump(self) -> None:
        """Take what the shell has written of its dump so far, keeping up to DUMP_LIMIT
        bytes (the rest is read and dropped, so the shell never blocks), and at most a
        pipe's worth per call: a process of the command that holds the pipe and keeps
        writing cannot keep the driver here (and, once the shell has exited, what the
        shell wrote fits in the pipe; more came from elsewhere)."""
        start = self.dumped_bytes
        while self.dumped_bytes - start <= PIPE_BYTES:
            try:
                chunk = os.read(self.dump, 1 << 20)
            except (BlockingIOError, InterruptedError):
                return
            if not chunk:
                return
            self.dumped_bytes += len(chunk)
            if self.dumped_bytes <= DUMP_LIMIT:
                self.dumped.append(chunk)

    def close_job(self) -> None:
        if self.job_w is not None:
            os.close(self.job_w)
            self.job_w = None

    def close(self) -> None:
        """Close its pipes, except the output pipe (see ``Driver.lingering``)."""
        self.close_job()
        if self.dump >= 0:
            os.close(self.dump)
            os.close(self.pidfd)
            self.dump = self.pidfd = -1

    def discard(self) -> None:
        try:  # noqa: SIM105 - contextlib imports collections: slower start
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass
        self.close()
        os.close(self.out_r)


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    try:  # noqa: SIM105 - contextlib imports collections: slower start
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:  # above the system's pipe-max-size: the default size will do
        pass
    return r, w


def _add_filter(code: bytes) -> None:
    """Load a classic-BPF seccomp filter (8-byte instructions) on this thread."""
    buf, address = landlock.pinned(code)
    prog = struct.pack("HxxxxxxQ", len(code) // 8, address)
    if landlock.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        raise OSError(landlock.errno(), "prctl(PR_SET_SECCOMP) failed")
    del buf  # the kernel has copied the program


def _become_shell(
    pipes: tuple[int, int, int, int],
    cwd: bytes,
    ruleset: int | None,
    metadata: bytes | None,
    env: dict[bytes, bytes],
) -> None:  # pragma: no cover - runs in the forked child
    try:
        import _signal  # type: ignore[import-not-found]  # ``signal`` would import ``enum``

        for signum in (_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGINT):
            _signal.signal(signum, _signal.SIG_DFL)
        if ruleset is not None:  # first: the pipes may land on the ruleset's number
            landlock.restrict_self(ruleset)
        if metadata is not None:
            _add_filter(metadata)
            if _CONFINED_DATA:  # a read-only shell: a smaller memory cap (limits.py)
                import resource

                cap = _CONFINED_DATA[0]
                resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
        # Out of the way first: a pipe may already sit on another one's number.
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in pipes]
        targets = (scripts.STATE_FD, scripts.JOB_FD, scripts.DUMP_FD, 1)
        for fd, target in zip(moved, targets, strict=True):
            os.dup2(fd, target)
        os.dup2(1, 2)
        try:  # noqa: SIM105 - contextlib imports collections: slower start
            os.chdir(cwd)
        except OSError:  # gone: the job says so, and the command runs where it can
            pass
        argv = [b"bash", b"--noprofile", b"--norc", b"-c", scripts.BOOT.encode(), b"bash"]
        os.execve(BASH, argv, env)
    except BaseException as exc:
        os.write(2, f"shellagent: cannot start the shell: {exc}\n".encode())
    finally:
        os._exit(127)


class Driver:
    def __init__(self, ctl: int, status: int, key: bytes) -> None:
        self.ctl, self.status = ctl, status
        self.rx = wire.Channel(key, wire.TO_DRIVER)
        self.tx = wire.Channel(key, wire.TO_HOST)
        self.buffer = b""
        self.abi = landlock.abi_version()
        self.rulesets: dict[str, int] = {}
        if self.abi >= 1:
            self.rulesets[READ_ONLY] = landlock.read_only(self.abi)
        if self.abi >= 2:
            self.rulesets[NORMAL] = landlock.isolating(self.abi)
        # What Landlock leaves out for read-only commands: mode, owner, times, xattrs.
        self.metadata = seccomp.metadata_program()
        umask = os.umask(0o022)
        os.umask(umask)
        self.state = State.initial(dict(os.environ), os.getcwd().encode(), umask)
        # Shells started ahead, per kind (``missing``): two of the kind the last command
        # used, at once; one of the other once the driver has been idle for IDLE_POLL_MS.
        self.spares: dict[str, list[BashProcess]] = {NORMAL: [], READ_ONLY: []}
        self.exited: dict[int, int] = {}
        self.wanted = [NORMAL, READ_ONLY]
        self.running = 0
        # Output pipes of finished commands, still held by what they left running: read and
        # thrown away, so a background job never blocks and never writes into a later
        # command's output (each command has a pipe of its own; only the driver holds the
        # host's).
        self.lingering: set[int] = set()
        self.last_dump: bytes | None = None  # the dump ``state`` was read from (``X``)
        # ... when ``state`` is exactly that dump (no guarded variable undone, not seeded):
        # a command that changes nothing leaves the same bytes, and they need no parsing.
        self.exact_dump: bytes | None = None

    # -- frames --

    def send(self, kind: bytes, fields: list[bytes]) -> None:
        frame = self.tx.seal(kind, fields)
        view = memoryview(frame)
        while view:
            view = view[os.write(self.status, view) :]

    def next_frame(self, timeout_ms: int) -> tuple[bytes, list[bytes]] | None:
        while True:
            parts = wire.split(self.buffer)
            if parts is not None:
                kind, payload, tag, self.buffer = parts
                return kind, self.rx.open(kind, payload, tag)
            ready = select.select([self.ctl, *self.lingering], [], [], timeout_ms / 1000)[0]
            if not ready:
                return None
            for fd in ready:
                if fd != self.ctl:
                    self.discard_output(fd)
            if self.ctl not in ready:
                continue
            chunk = os.read(self.ctl, 65536)
            if not chunk:
                sys.exit(0)  # the host is gone
            self.buffer += chunk

    # -- the loop --

    def serve(self) -> None:
        self.seed()
        functions = b"\n".join(self.state.functions)
        self.send(b"R", [b"1", self.state.cwd, _last_pid(), str(self.abi).encode(), functions])
        self.prepare(first_only=True)
        while True:
            frame = self.next_frame(IDLE_POLL_MS if self.missing() else REAP_POLL_MS)
            if frame is None:
                self.reap()
                self.prepare(first_only=False)
                continue
            kind, fields = frame
            if kind == b"X" and fields == [b""]:
                self.send(b"X", (self.last_dump or b"").split(b"\0"))
                continue
            if kind != b"C" or len(fields) != 4:
                raise wire.WireError(f"unexpected frame {kind!r}")
            nonce, mode, command, judged = fields
            unjudged = unlisted(command, judged) if mode == b"r" else b""
            if unjudged:
                self.refuse(nonce, unjudged)
            else:
                self.run(nonce, mode, command)

    def seed(self) -> None:
        """The ``I`` frame: the state an earlier sandbox exported (a follow-up task), or
        nothing. It is a dump, parsed as strictly as any command's; the variables that run
        code (``keep_guarded``) and the working directory stay this sandbox's own."""
        frame = None
        while frame is None:
            frame = self.next_frame(REAP_POLL_MS)
        kind, fields = frame
        if kind != b"I":
            raise wire.WireError(f"unexpected frame {kind!r}")
        if fields == [b""]:
            return
        dump = b"\0".join(fields)
        try:
            seeded = State.parse(dump)
        except Unreadable:
            return
        # approved commands set its umask, functions and options
        seeded.keep_guarded(self.state, umask=False, functions=False, options=False)
        seeded.cwd = self.state.cwd
        self.state, self.last_dump = seeded, dump

    def missing(self) -> list[str]:
        """The kinds to start a spare of, one entry per shell, the likeliest first: two of
        the likeliest kind and one of the other."""
        first, second = self.wanted
        usable = [k for k in (first, second) if k == NORMAL or k in self.rulesets]
        wanted = [*usable, first] if first in usable else usable
        have = {kind: len(self.spares[kind]) for kind in usable}
        out = []
        for kind in wanted:
            if have[kind] > 0:
                have[kind] -= 1
            else:
                out.append(kind)
        return out

    def prepare(self, *, first_only: bool) -> None:
        """Start the spare shells that are missing (only those of the likeliest kind if
        asked: with two of it under way, each has two commands' time to get ready, and
        commands sent back to back wait for it half as long)."""
        missing = self.missing()
        for kind in [k for k in missing if k == self.wanted[0]] if first_only else missing:
            self.spares[kind].append(self.spawn(kind))

    def take(self, kind: str) -> BashProcess:
        while self.spares[kind]:
            shell = self.spares[kind].pop(0)
            if shell.fresh_for(self.state) and shell.pid not in self.exited:
                return shell
            shell.discard()
        return self.spawn(kind)

    def spawn(self, kind: str) -> BashProcess:
        metadata = self.metadata if kind == READ_ONLY and READ_ONLY in self.rulesets else None
        return BashProcess(kind, self.state, self.rulesets.get(kind), metadata)

    def reap(self) -> None:
        watched = {s.pid for pool in self.spares.values() for s in pool}
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in watched or pid == self.running:
                self.exited[pid] = status

    def refuse(self, nonce: bytes, why: bytes) -> None:
        """A read-only command not run (``unlisted``): say why, change nothing."""
        message = b"shellagent: not run: " + why + b"\n"
        view = memoryview(message)
        while view:
            view = view[os.write(1, view) :]
        functions = b"\n".join(self.state.functions)
        status = [nonce, b"126", self.state.cwd, _last_pid(), functions, b"1", b"1", b"", b""]
        self.send(b"S", [*status, why])

    def run(self, nonce: bytes, mode: bytes, command: bytes) -> None:
        kind = READ_ONLY if mode == b"r" and READ_ONLY in self.rulesets else NORMAL
        outcome = None
        while outcome is None:  # a spare shell killed since it started is replaced
            shell = self.take(kind)
            self.running = shell.pid
            outcome = self.collect(shell, self.state.job(command))
            if outcome is None:
                shell.discard()
            else:
                shell.close()
        self.running = 0
        dump, status = outcome
        carried, undone = b"0", []
        if dump is not None and dump == self.exact_dump:
            carried = b"1"  # byte for byte the dump ``state`` is: nothing to parse
        elif dump is not None:
            try:
                after = State.parse(dump)
            except Unreadable:
                pass
            else:
                if kind == READ_ONLY:
                    undone = after.keep_guarded(self.state)
                self.state, carried = after, b"1"
                self.last_dump = bytes(dump)
                self.exact_dump = None if undone else self.last_dump
        code = os.waitstatus_to_exitcode(status)
        self.send(
            b"S",
            [
                nonce,
                str(128 - code if code < 0 else code).encode(),
                self.state.cwd,
                _last_pid(),
                b"\n".join(self.state.functions),
                carried,
                b"1" if kind == READ_ONLY else b"0",
                b" ".join(self.state.dropped),
                b" ".join(undone),
                b"",  # not refused (``refuse``)
            ],
        )
        # Let the host, just woken by the status, run on this CPU before the rest, which
        # the status does not depend on, and before the next spare is forked: otherwise it
        # waits for the other CPU to leave its idle state (a command with a pause before
        # it: 2.0 -> 1.5 ms here).
        os.sched_yield()
        self.reap()
        for pool in self.spares.values():
            for stale in [s for s in pool if not s.fresh_for(self.state)]:
                pool.remove(stale)
                stale.discard()
        self.wanted = [kind, READ_ONLY if kind == NORMAL else NORMAL]
        self.prepare(first_only=True)

    def collect(self, shell: BashProcess, job: bytes) -> tuple[bytes | None, int] | None:
        """Write the job, gather the dump, wait for the exit: (dump or None, wait status).

        None when the shell was gone before it could read its job (the command never ran).
        """
        assert shell.job_w is not None
        try:  # at once: the pipe is empty and holds 1 MiB, so this is usually all of it
            written = os.write(shell.job_w, job)
        except (BlockingIOError, InterruptedError):
            written = 0
        except OSError:  # the shell is gone before it read its job
            return None
        pending = memoryview(job)[written:]
        poller = select.poll()
        if pending:
            poller.register(shell.job_w, select.POLLOUT)
        else:
            shell.close_job()
        poller.register(shell.pidfd, select.POLLIN)
        poller.register(shell.out_r, select.POLLIN)
        for fd in self.lingering:
            poller.register(fd, select.POLLIN)
        status: int | None = None
        # The dump pipe is watched once the command has run DUMP_WATCH_MS (by the clock:
        # output of other processes may wake the driver all along), so a dump larger than
        # the pipe never blocks the shell.
        watch_at = time.monotonic() + DUMP_WATCH_MS / 1000
        watching = False
        while status is None:
            left_ms = REAP_POLL_MS
            if not watching:
                left_ms = max(0, round((watch_at - time.monotonic()) * 1000))
                if left_ms == 0:
                    poller.register(shell.dump, select.POLLIN)
                    watching, left_ms = True, REAP_POLL_MS
            for fd, _ in poller.poll(left_ms):
                if fd == shell.job_w and pending:
                    try:
                        pending = pending[os.write(fd, pending) :]
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:  # the shell is gone before it read its job
                        return None
                    if not pending:
                        poller.unregister(fd)
                        shell.close_job()
                elif fd == shell.out_r:
                    if _relay(fd) == 0:
                        poller.unregister(fd)
                elif fd in self.lingering:
                    self.discard_output(fd)
                    if fd not in self.lingering:
                        poller.unregister(fd)
                elif fd == shell.dump:
                    shell.read_dump()
                elif fd == shell.pidfd:
                    status = self.wait(shell.pid)
            if status is None:
                self.reap()
                if shell.pid in self.exited:
                    status = self.exited.pop(shell.pid)
        if pending:
            return None
        while _relay(shell.out_r):  # what it wrote before it exited
            pass
        self.lingering.add(shell.out_r)
        # A shell killed by a signal did not finish its own dump: whatever is there is not
        # its state (a process of the command may have written it).
        shell.read_dump()
        if os.WIFSIGNALED(status) or shell.dumped_bytes > DUMP_LIMIT:
            return None, status
        dump = b"".join(shell.dumped)
        return (dump if dump.endswith(b"E\0") else None), status

    def discard_output(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            os.close(fd)
            self.lingering.discard(fd)

    def wait(self, pid: int) -> int:
        if pid in self.exited:
            return self.exited.pop(pid)
        return os.waitpid(pid, 0)[1]


def unlisted(command: bytes, judged: bytes) -> bytes:
    """Why a read-only ``command`` may not run, or b"": it holds a substitution that is not
    among ``judged`` (what the host's policy judged: ``12c,40a`` for a command at byte 12
    and arithmetic at byte 40), or text whose quoting the lexer cannot follow."""
    listed = set()
    for item in judged.split(b","):
        if item[:-1].isdigit():
            listed.add((int(item[:-1]), item[-1:].decode()))
    missing = substitutions.unlisted(command, listed)
    if not missing:
        return b""
    offset, end, what = missing[0]
    if offset < 0:
        return f"allowed as read-only, but where its quoting ends is not clear ({what})".encode()
    text = command[offset : max(end, offset + 2)]
    shown = text[:40].decode("utf-8", "replace") + ("…" if len(text) > 40 else "")
    return (
        f"allowed as read-only, but it holds {shown!r} at byte {offset}, which bash would "
        "run and the policy did not judge"
    ).encode()


def _relay(fd: int) -> int | None:
    """Pass what the command wrote on to the host: the byte count, 0 at end of file, None
    if nothing is ready."""
    try:
        chunk = os.read(fd, 1 << 16)
    except (BlockingIOError, InterruptedError):
        return None
    view = memoryview(chunk)
    while view:
        view = view[os.write(1, view) :]
    return len(chunk)


_LAST_PID: list[int] = []


def _last_pid() -> bytes:
    """The last pid handed out in the sandbox (the file stays open: read again at 0)."""
    if not _LAST_PID:
        _LAST_PID.append(os.open("/proc/sys/kernel/ns_last_pid", os.O_RDONLY | os.O_CLOEXEC))
    return os.pread(_LAST_PID[0], 32, 0).strip()


def _not_dumpable() -> None:
    if landlock.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError("prctl(PR_SET_DUMPABLE, 0) failed")


_CONFINED_DATA: list[int] = []  # RLIMIT_DATA of a confined command's shell (``confined=``)


def apply_rlimits(spec: str) -> None:
    """The session's limits (``limits.Limits.rlimits``), set before any shell starts: every
    command inherits them and none may raise them (no ``CAP_SYS_RESOURCE``). ``confined``
    is kept for the read-only shells, which lower their own before they start."""
    import resource

    names = {
        "core": resource.RLIMIT_CORE,
        "nproc": resource.RLIMIT_NPROC,
        "fsize": resource.RLIMIT_FSIZE,
        "data": resource.RLIMIT_DATA,
    }
    for pair in filter(None, spec.split(",")):
        name, _, value = pair.partition("=")
        limit = int(value)
        if name == "confined":
            _CONFINED_DATA.append(limit)
            continue
        resource.setrlimit(names[name], (limit, limit))


def main(argv: list[str]) -> None:
    _not_dumpable()  # first: from here on nothing in the sandbox can open our /proc entries
    ctl, status = int(argv[0]), int(argv[1])
    if len(argv) > 2:
        apply_rlimits(argv[2])
    for fd in (ctl, status):
        os.set_inheritable(fd, False)
    import _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # pid 1: ignored when sent from inside
    header = wire.read_exactly(lambda n: os.read(ctl, n), wire.HEADER.size)
    kind, length = wire.HEADER.unpack(header)
    if kind != b"K" or length != wire.KEY_BYTES:
        raise wire.WireError("the first frame must carry the session key")
    key = wire.read_exactly(lambda n: os.read(ctl, n), length)
    Driver(ctl, status, key).serve()
