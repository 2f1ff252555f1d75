"""A read-only view of the host's processes and listening sockets for the sandbox.

The sandbox has its own pid and network namespaces, so ``ps`` inside sees only the
sandbox's own processes and ``ss`` no host socket: "which process uses the most memory",
"what listens on 8080" or "is nginx running" cannot be answered. Sharing the namespaces
would expose what must stay out of reach (other processes' environment, memory, file
descriptors; signals to them). Instead the host takes a **snapshot** — name, pid, user,
cpu and memory use, state, start and cpu time, the command line with secret-looking
arguments hidden, and the listening sockets — before each command that looks at
processes, and binds it read-only at ``/run/host``. ``ps``, ``pgrep``, ``pidof`` and
``ss``/``netstat`` in the sandbox's PATH read it for the usual listings (``ps aux``,
``ps -ef``, ``ps -eo pid,comm,%mem --sort=-%mem``, ``pgrep -a nginx``, ``ss -ltnp``) and
fall back to the real tools for anything else. A pid from the view names a host process
the sandbox can neither signal nor inspect: there is no such pid inside.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import threading
import time
from pathlib import Path

from shellagent import paths

REFRESH_EVERY_S = 0.5
# A command line is cut to this many characters (``ps`` cuts to the terminal's width; a
# build tool's line of tens of kilobytes would overflow the line buffers of the sandbox's
# awk-based listings, mawk's sprintf among them).
MAX_ARGS = 4096
# Commands that look at processes or sockets get a fresh snapshot first.
LOOKS = re.compile(r"\b(ps|pgrep|pidof|top|htop|ss|netstat|lsof|pstree|kill|pkill|free)\b")
_SECRET_ARG = re.compile(
    r"(?i)^(--?(password|passwd|pass|pwd|token|secret|api[-_]?key|key|auth|credentials?)"
    r"(=.*)?|-p\S+)$"
)
_SECRET_KV = re.compile(r"(?i)^[\w.-]*(pass|secret|token|key|auth|cred)[\w.-]*=.+$")
_URL_CREDS = re.compile(r"(?i)^(\w+://)[^/\s:@]+:[^/\s@]+@")
_OPAQUE = re.compile(r"^[A-Za-z0-9+/_=-]{24,}$")


def hide_secrets(args: list[str]) -> list[str]:
    """A command line with secret-looking arguments replaced by ``[hidden]``."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append("[hidden]")
            hide_next = False
            continue
        if _SECRET_ARG.match(arg):
            key, eq, _ = arg.partition("=")
            if eq:
                out.append(f"{key}=[hidden]")
            elif arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
                out.append("-p[hidden]")
            else:
                out.append(arg)
                hide_next = True
        elif _SECRET_KV.match(arg):
            out.append(arg.split("=", 1)[0] + "=[hidden]")
        elif _URL_CREDS.match(arg):
            out.append(_URL_CREDS.sub(r"\1[hidden]@", arg))
        elif _OPAQUE.match(arg) and not arg.startswith("/"):
            out.append("[hidden]")
        else:
            out.append(arg)
    return out


def _processes() -> list[str]:
    """One tab-separated line per host process: user pid ppid %cpu %mem vsz rss tty stat
    start time comm args (the fields of ``ps aux`` and ``ps -ef``)."""
    import pwd

    ticks = os.sysconf("SC_CLK_TCK")
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    with open("/proc/meminfo") as f:
        total_kb = int(f.readline().split()[1])
    boot = time.time() - uptime
    users: dict[int, str] = {}
    lines = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
            uid = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        state, ppid, tty_nr = fields[0], fields[1], int(fields[4])
        cpu_s = (int(fields[11]) + int(fields[12])) / ticks
        started = boot + int(fields[19]) / ticks
        vsz_kb = int(fields[20]) // 1024
        rss_kb = int(fields[21]) * page_kb
        alive = max(1e-6, time.time() - started)
        if uid not in users:
            try:
                users[uid] = pwd.getpwuid(uid).pw_name
            except KeyError:
                users[uid] = str(uid)
        args = " ".join(hide_secrets(cmdline)) if cmdline else f"[{comm}]"
        if len(args) > MAX_ARGS:
            args = args[: MAX_ARGS - 3] + "..."
        lines.append(
            "\t".join(
                [
                    users[uid],
                    entry,
                    ppid,
                    f"{100 * cpu_s / alive:.1f}",
                    f"{100 * rss_kb / total_kb:.1f}",
                    str(vsz_kb),
                    str(rss_kb),
                    "?" if tty_nr == 0 else f"tty{tty_nr & 0xFF}",
                    state,
                    time.strftime("%H:%M", time.localtime(started)),
                    time.strftime("%H:%M:%S", time.gmtime(cpu_s)),
                    comm.replace("\t", " "),
                    args.replace("\t", " ").replace("\n", " "),
                ]
            )
        )
    return sorted(lines, key=lambda line: int(line.split("\t")[1]))


def _listening() -> str:
    ss = shutil.which("ss")
    if ss:
        out = subprocess.run(
            [ss, "-ltnup"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
        if out:
            return out
    return "Netid State Local Address:Port Process\n"


class HostView:
    """The snapshot directory of one sandbox, refreshed on demand, removed at the end."""

    def __init__(self) -> None:
        base = paths.ensure_private_dir(paths.cache_dir() / "hostview")
        base.chmod(0o711)
        self.dir = base / f"{os.getpid()}-{secrets.token_hex(4)}"
        (self.dir / "bin").mkdir(parents=True, mode=0o755)
        self.dir.chmod(0o755)
        shims = Path(__file__).with_name("hostbin")
        for name, source in (
            ("ps", "ps"),
            ("pgrep", "pgrep"),
            ("pidof", "pgrep"),
            ("ss", "ss"),
            ("netstat", "ss"),
        ):
            script = self.dir / "bin" / name
            script.write_text((shims / source).read_text())
            script.chmod(0o755)
        for name in ("processes", "listening"):
            (self.dir / name).touch(mode=0o644)
        self._last = 0.0
        self._first: threading.Thread | None = None

    def begin(self) -> None:
        """Take the first snapshot (about 12 ms: /proc and ``ss``) in the background once
        the sandbox is up, while the first command is being chosen: taken while bwrap
        starts, it competed with it for these two cores. Every command waits for it
        (``refresh``), so none sees an empty view."""
        self._first = threading.Thread(target=self._write, name="hostview", daemon=True)
        self._first.start()

    def bind_args(self) -> list[str]:
        return ["--ro-bind", str(self.dir), "/run/host"]

    def refresh(self, command: str = "", *, force: bool = False) -> None:
        """A fresh snapshot if ``command`` looks at processes (or ``force``); called before
        every command, so it first waits for the snapshot taken at start-up."""
        first, self._first = self._first, None
        if first is not None:
            first.join()
        now = time.monotonic()
        if not force and (not LOOKS.search(command) or now - self._last < REFRESH_EVERY_S):
            return
        self._write()

    def _write(self) -> None:
        self._last = time.monotonic()
        for name, text in (
            ("processes", "\n".join(_processes()) + "\n"),
            ("listening", _listening()),
        ):
            path = self.dir / name
            # rewritten in place: a bind mount keeps showing the same inode
            with open(path, "w") as f:
                f.write(text)
            path.chmod(0o644)

    def release(self) -> None:
        first = self._first
        if first is not None:
            first.join()
        shutil.rmtree(self.dir, ignore_errors=True)
