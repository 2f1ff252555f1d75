"""Landlock, the kernel's unprivileged access control, through its three system calls.

A process that calls ``restrict_self`` enters a *domain*: from then on it and everything it
starts can only do what the domain's rules grant, and it can no longer reach (``ptrace``,
``/proc/PID/fd``, ``/proc/PID/mem``) any process outside its domain. shellagent uses two:

``read_only``  for commands the policy allowed because they only read: every file-system
               right the kernel knows is handled, reading and executing are granted below
               ``/``, writing only to ``/dev/null`` and ``/dev/tty``; TCP bind and connect are
               handled with no rule (ABI 4+); signals and abstract Unix sockets are scoped to
               the domain (ABI 6+). A write, a new file, a rename, a connection or a signal
               to an older process fails with EACCES or EPERM.
``isolating``  for every other command: it grants everything it handles, so the command
               keeps the sandbox's normal rights, but the domain still keeps processes of
               different commands (and the driver) out of each other's ``/proc`` entries.
               It needs ABI 2, where renames across directories can be granted (with ABI 1
               every domain refuses them).

This module uses only the standard library: the sandbox's driver loads it inside the
sandbox, where shellagent's own package is not visible. System call numbers 444-446 are
the same on every architecture. It calls libc through ``_ctypes``, the C half of ``ctypes``:
importing ``ctypes`` itself cost the sandbox's start-up 4 ms of its 30 (measured: 4.1 ms
against 0.4 ms), for the three calls needed here.
"""

from __future__ import annotations

import _ctypes
import posix as os  # not ``os``: see driver.py
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# File-system rights, with the ABI that introduced each.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

# The rights that only apply to files (a rule on a file may grant no others).
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
# Written to by commands that only read: their output and error sinks.
OUTPUT_DEVICES = ("/dev/null", "/dev/tty")


class _Long(_ctypes._SimpleCData):  # type: ignore[type-arg]
    _type_ = "l"


class _Char(_ctypes._SimpleCData):  # type: ignore[type-arg]
    _type_ = "c"


class _Libc:
    _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]  # None: the program itself


class _Function(_ctypes.CFuncPtr):
    """A libc function returning a long; variadic, so every int is passed as a long."""

    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Long


_syscall = _Function(("syscall", _Libc()))  # type: ignore[arg-type]
_prctl = _Function(("prctl", _Libc()))  # type: ignore[arg-type]


def _wide(args: tuple[object, ...]) -> list[object]:
    """Ints as longs; bytes and None pass as a pointer to their data and NULL."""
    return [_Long(a) if isinstance(a, int) else a for a in args]


def syscall(number: int, *args: object) -> int:
    """``syscall(2)``: the result, or -1 with ``errno()`` set."""
    return int(_syscall(_Long(number), *_wide(args)))


def prctl(option: int, *args: int | bytes) -> int:
    return int(_prctl(_Long(option), *_wide(args)))


def errno() -> int:
    """The errno of the last ``syscall`` or ``prctl`` on this thread."""
    return int(_ctypes.get_errno())


def pinned(data: bytes) -> tuple[object, int]:
    """A C copy of ``data`` and its address (the copy lives as long as the object)."""
    array = type("_Bytes", (_ctypes.Array,), {"_type_": _Char, "_length_": len(data)})
    copy = array.from_buffer_copy(data)  # type: ignore[attr-defined]
    return copy, int(_ctypes.addressof(copy))


class LandlockError(OSError):
    """A Landlock system call failed (errno and the call are in the message)."""


def _call(number: int, *args: object) -> int:
    result = syscall(number, *args)
    if result < 0:
        err = errno()
        raise LandlockError(err, f"landlock system call {number}: {os.strerror(err)}")
    return result


def abi_version() -> int:
    """The Landlock ABI this kernel offers; 0 when Landlock is missing or disabled."""
    try:
        return _call(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except LandlockError:
        return 0


def fs_rights(abi: int) -> int:
    """Every file-system right that ABI ``abi`` knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def _ruleset(abi: int, fs: int, net: int = 0, scoped: int = 0) -> int:
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    return _call(SYS_CREATE_RULESET, attr, len(attr), 0)


def _allow(ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o040000:  # not a directory
            rights &= FILE_RIGHTS
        _call(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, struct.pack("=Qi", rights, fd), 0)
    finally:
        os.close(fd)


def _exists(path: str) -> bool:
    try:
        os.stat(path)
    except OSError:
        return False
    return True


def read_only(abi: int) -> int:
    """A ruleset fd for commands that only read (see the module docstring)."""
    handled = fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    ruleset = _ruleset(abi, handled, net, scoped)
    try:
        os.set_inheritable(ruleset, False)
        _allow(ruleset, "/", handled & (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR | FS_IOCTL_DEV))
        for device in OUTPUT_DEVICES:
            if _exists(device):
                _allow(ruleset, device, handled & (FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV))
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def isolating(abi: int) -> int:
    """A ruleset fd that restricts no access but still separates domains (ABI 2+)."""
    rights = FS_MAKE_BLOCK | FS_REFER
    ruleset = _ruleset(abi, rights)
    try:
        os.set_inheritable(ruleset, False)
        _allow(ruleset, "/", rights)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def restrict_self(ruleset: int) -> None:
    """Enter the domain of ``ruleset`` (this thread, and every process it starts)."""
    if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = errno()
        raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
    _call(SYS_RESTRICT_SELF, ruleset, 0)
