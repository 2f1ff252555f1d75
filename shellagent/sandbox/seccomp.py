"""A seccomp filter for the sandbox, assembled as classic BPF and handed to ``bwrap --seccomp``.

Namespaces and dropped capabilities already stop most of this; the filter is the second
wall, in the spirit of Flatpak's: terminal injection (``TIOCSTI``/``TIOCLINUX``, also with
garbage in the upper 32 bits of the request, CVE-2019-10063), io_uring (which bypasses
other syscall checks), ptrace, kernel keyrings, BPF, perf, userfaultfd, module and kexec
loading, and the mount/namespace calls. ``clone3`` answers ENOSYS so libc falls back to
``clone``, which is refused when it asks for a new user namespace (``CLONE_NEWUSER``): the
ephemeral profile run by root joins a prepared namespace, where bwrap's
``--disable-userns`` is not available, and this keeps nested namespaces out there too.
Everything else is allowed. Unknown architectures get no filter (``doctor`` says so).

Two rules are for some sandboxes only: a sandbox whose commands nobody approved (a recipe
trial) gets no Unix sockets (``unix_sockets=False``: read-only binds do not stop a
``connect`` to a host socket), and one whose writes have a disk cap cannot reserve space
with ``fallocate`` (``allocate=False``, see ``diskcap.py``).

Standard library only, without ``platform``: the sandbox's driver loads this module too,
for ``metadata_program``.
"""

from __future__ import annotations

import errno
import posix as os  # not ``os``: see driver.py
import struct

# struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]
NR_OFFSET, ARCH_OFFSET, ARG1_LOW_OFFSET = 0, 4, 24
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
CLONE_NEWUSER = 0x10000000
BPF_JSET_K = 0x45
BPF_ALU_AND_K = 0x54
FALLOC_FL_PUNCH_HOLE, FALLOC_FL_COLLAPSE_RANGE = 0x02, 0x08  # modes that free space
AF_UNIX, SOCK_DGRAM, SOCK_TYPE_MASK = 1, 2, 0xF
ARG0_LOW_OFFSET = 16
X32_SYSCALL_BIT = 0x40000000

ARCHES = {
    "x86_64": 0xC000003E,
    "aarch64": 0xC00000B7,
}
# Syscall numbers per architecture for the calls the filter names.
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "ioctl": 16,
        "clone": 56,
        "ptrace": 101,
        "syslog": 103,
        "acct": 163,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "pivot_root": 155,
        "init_module": 175,
        "delete_module": 176,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "kexec_load": 246,
        "unshare": 272,
        "perf_event_open": 298,
        "open_by_handle_at": 304,
        "setns": 308,
        "finit_module": 313,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "clone3": 435,
        "mount_setattr": 442,
        "socket": 41,
        "socketpair": 53,
        "fallocate": 285,
    },
    "aarch64": {
        "ioctl": 29,
        "clone": 220,
        "ptrace": 117,
        "syslog": 116,
        "acct": 89,
        "mount": 40,
        "umount2": 39,
        "swapon": 224,
        "swapoff": 225,
        "reboot": 142,
        "pivot_root": 41,
        "init_module": 105,
        "delete_module": 106,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "kexec_load": 104,
        "unshare": 97,
        "perf_event_open": 241,
        "open_by_handle_at": 265,
        "setns": 268,
        "finit_module": 273,
        "kexec_file_load": 294,
        "bpf": 280,
        "userfaultfd": 282,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "clone3": 435,
        "mount_setattr": 442,
        "socket": 198,
        "socketpair": 199,
        "fallocate": 47,
    },
}
DENIED = (
    "ptrace",
    "syslog",
    "acct",
    "mount",
    "umount2",
    "swapon",
    "swapoff",
    "reboot",
    "pivot_root",
    "init_module",
    "delete_module",
    "add_key",
    "request_key",
    "keyctl",
    "kexec_load",
    "unshare",
    "perf_event_open",
    "open_by_handle_at",
    "setns",
    "finit_module",
    "kexec_file_load",
    "bpf",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
)
ENOSYS = ("clone3",)


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(
    machine: str | None = None, *, unix_sockets: bool = True, allocate: bool = True
) -> bytes | None:
    """The compiled filter for this machine's architecture, or None if unsupported;
    ``unix_sockets=False`` refuses Unix sockets (``unix_rules``), ``allocate=False``
    every ``fallocate`` that reserves space (EOPNOTSUPP)."""
    machine = machine or os.uname().machine
    if machine not in ARCHES:
        return None
    numbers = SYSCALLS[machine]
    errno_for = {numbers[name]: errno.EPERM for name in DENIED}
    errno_for.update({numbers[name]: errno.ENOSYS for name in ENOSYS})
    out = [
        _insn(BPF_LD_W_ABS, ARCH_OFFSET),
        _insn(BPF_JEQ_K, ARCHES[machine], jt=1),
        _insn(BPF_RET_K, RET_ERRNO | errno.EPERM),  # a foreign ABI: refuse
        _insn(BPF_LD_W_ABS, NR_OFFSET),
    ]
    if machine == "x86_64":  # x32 syscalls are a second numbering of the same calls
        out += [_insn(BPF_JGE_K, X32_SYSCALL_BIT, jf=1), _insn(BPF_RET_K, RET_ERRNO | errno.EPERM)]
    for nr, err in sorted(errno_for.items()):
        out += [_insn(BPF_JEQ_K, nr, jf=1), _insn(BPF_RET_K, RET_ERRNO | err)]
    if not unix_sockets:
        out += unix_rules(machine, (AF_UNIX,))
    if not allocate:
        # fallocate(fd, mode, offset, len): only the modes that free space pass.
        out += [
            _insn(BPF_JEQ_K, numbers["fallocate"], jf=4),
            _insn(BPF_LD_W_ABS, ARG1_LOW_OFFSET),
            _insn(BPF_JSET_K, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE, jt=1),
            _insn(BPF_RET_K, RET_ERRNO | errno.EOPNOTSUPP),
            _insn(BPF_RET_K, RET_ALLOW),
        ]
    # clone asking for a new user namespace (flags are the first argument).
    out += [
        _insn(BPF_JEQ_K, numbers["clone"], jf=4),
        _insn(BPF_LD_W_ABS, ARG0_LOW_OFFSET),
        _insn(BPF_JSET_K, CLONE_NEWUSER, jf=1),
        _insn(BPF_RET_K, RET_ERRNO | errno.EPERM),
        _insn(BPF_RET_K, RET_ALLOW),
    ]
    # ioctl: only the low 32 bits of the request count, as the kernel compares them.
    out += [
        _insn(BPF_JEQ_K, numbers["ioctl"], jf=4),
        _insn(BPF_LD_W_ABS, ARG1_LOW_OFFSET),
        _insn(BPF_JEQ_K, TIOCSTI, jt=1),
        _insn(BPF_JEQ_K, TIOCLINUX, jf=1),
        _insn(BPF_RET_K, RET_ERRNO | errno.EPERM),
        _insn(BPF_RET_K, RET_ALLOW),
    ]
    return b"".join(out)


def unix_rules(machine: str, families: tuple[int, ...]) -> list[bytes]:
    """``socket`` of any of ``families`` refused (EACCES), and a Unix datagram
    ``socketpair``: a ``sendto`` on one reaches any datagram socket by its path. A
    ``socketpair`` of the other kinds stays (programs use them as pipes; neither end can
    be pointed elsewhere). Each part ends in a return: it loads the arguments over the
    system call number."""
    numbers = SYSCALLS[machine]
    out = [_insn(BPF_JEQ_K, numbers["socket"], jf=len(families) + 3)]
    out.append(_insn(BPF_LD_W_ABS, ARG0_LOW_OFFSET))
    for n, family in enumerate(families):
        last = n == len(families) - 1
        # on a match, jump to the refusal; the last one falls through to it or skips it
        out.append(_insn(BPF_JEQ_K, family, jt=len(families) - 1 - n, jf=1 if last else 0))
    out += [_insn(BPF_RET_K, RET_ERRNO | errno.EACCES), _insn(BPF_RET_K, RET_ALLOW)]
    out += [
        _insn(BPF_JEQ_K, numbers["socketpair"], jf=7),
        _insn(BPF_LD_W_ABS, ARG0_LOW_OFFSET),
        _insn(BPF_JEQ_K, AF_UNIX, jf=4),
        _insn(BPF_LD_W_ABS, ARG1_LOW_OFFSET),
        _insn(BPF_ALU_AND_K, SOCK_TYPE_MASK),
        _insn(BPF_JEQ_K, SOCK_DGRAM, jf=1),
        _insn(BPF_RET_K, RET_ERRNO | errno.EACCES),
        _insn(BPF_RET_K, RET_ALLOW),
    ]
    return out


# Metadata changes Landlock does not cover (mode, owner, times, extended attributes): a
# command confined as read-only gets these refused too (see ``metadata_program``).
METADATA_CALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "chmod": 90,
        "fchmod": 91,
        "chown": 92,
        "fchown": 93,
        "lchown": 94,
        "utime": 132,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "utimes": 235,
        "fchownat": 260,
        "futimesat": 261,
        "fchmodat": 268,
        "utimensat": 280,
        "fchmodat2": 452,
        "setxattrat": 463,
        "removexattrat": 466,
    },
    "aarch64": {
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "fchmod": 52,
        "fchmodat": 53,
        "fchownat": 54,
        "fchown": 55,
        "utimensat": 88,
        "fchmodat2": 452,
        "setxattrat": 463,
        "removexattrat": 466,
    },
}


# What reaches another process of the session without a file: System V message queues,
# semaphores and shared memory, POSIX message queues (the sandbox's IPC namespace is shared
# by all its commands; Landlock covers none of it). A read-only command has no business
# with them: an approved server started earlier could take orders through them.
IPC_CALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "shmget": 29,
        "shmat": 30,
        "shmctl": 31,
        "semget": 64,
        "semop": 65,
        "semctl": 66,
        "msgget": 68,
        "msgsnd": 69,
        "msgrcv": 70,
        "msgctl": 71,
        "semtimedop": 220,
        "mq_open": 240,
        "mq_unlink": 241,
        "mq_timedsend": 242,
        "mq_timedreceive": 243,
        "mq_notify": 244,
        "mq_getsetattr": 245,
    },
    "aarch64": {
        "mq_open": 180,
        "mq_unlink": 181,
        "mq_timedsend": 182,
        "mq_timedreceive": 183,
        "mq_notify": 184,
        "mq_getsetattr": 185,
        "msgget": 186,
        "msgctl": 187,
        "msgrcv": 188,
        "msgsnd": 189,
        "semget": 190,
        "semctl": 191,
        "semtimedop": 192,
        "semop": 193,
        "shmget": 194,
        "shmctl": 195,
        "shmat": 196,
    },
}

# Sockets a read-only command may not open. Internet and packet ones: Landlock (ABI 4+)
# refuses TCP connect and bind, not UDP, raw or packet sockets, so a read-only command
# given the network could still send data (a DNS query carrying a file's content). Unix
# ones: Landlock (ABI 7) has no right for connecting to a socket file, and read-only
# mounts do not stop it, so a read-only command could drive a server that an earlier,
# approved command left listening, or a host service outside /tmp and /run.
AF_INET, AF_INET6, AF_PACKET = 2, 10, 17
READ_ONLY_REFUSED_FAMILIES = (AF_UNIX, AF_INET, AF_INET6, AF_PACKET)


def metadata_program(machine: str | None = None) -> bytes | None:
    """The filter of commands confined as read-only: EPERM to every call in
    ``METADATA_CALLS`` and ``IPC_CALLS``, EACCES to ``socket`` for Unix, internet and
    packet sockets and to a Unix datagram ``socketpair``; the rest is allowed. None on an
    architecture without a table."""
    machine = machine or os.uname().machine
    if machine not in METADATA_CALLS:
        return None
    out = [
        _insn(BPF_LD_W_ABS, ARCH_OFFSET),
        _insn(BPF_JEQ_K, ARCHES[machine], jt=1),
        _insn(BPF_RET_K, RET_ERRNO | errno.EPERM),
        _insn(BPF_LD_W_ABS, NR_OFFSET),
    ]
    refused = {*METADATA_CALLS[machine].values(), *IPC_CALLS[machine].values()}
    for nr in sorted(refused):
        out += [_insn(BPF_JEQ_K, nr, jf=1), _insn(BPF_RET_K, RET_ERRNO | errno.EPERM)]
    out += unix_rules(machine, READ_ONLY_REFUSED_FAMILIES)
    out.append(_insn(BPF_RET_K, RET_ALLOW))
    return b"".join(out)


def program_fd(*, unix_sockets: bool = True, allocate: bool = True) -> int | None:
    """A readable fd holding the filter, positioned at the start (bwrap reads it once)."""
    code = program(unix_sockets=unix_sockets, allocate=allocate)
    if code is None:
        return None
    fd = os.memfd_create("shellagent-seccomp", os.MFD_CLOEXEC)
    os.write(fd, code)
    os.lseek(fd, 0, 0)
    return fd
