"""A read-only view of the host's processes and listening sockets for the sandbox.

The sandbox has its own pid and network namespaces, so ``ps`` inside sees only the
sandbox's own processes and ``ss`` no host socket: "which process uses the most memory",
"what listens on 8080" or "is nginx running" cannot be answered. Sharing the namespaces
would expose what must stay out of reach (other processes' environment, memory, file
descriptors; signals to them). Instead the host takes a **snapshot** — name, pid, user,
cpu and memory use, state, start and cpu time, the command line with credentials
hidden (``hide_secrets``), and the listening sockets — before each command that looks at
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
from shellagent.redaction import find, redact_words

REFRESH_EVERY_S = 0.5
# A command line is cut to this many characters (``ps`` cuts to the terminal's width; a
# build tool's line of tens of kilobytes would overflow the line buffers of the sandbox's
# awk-based listings, mawk's sprintf among them).
MAX_ARGS = 4096
# Commands that look at processes or sockets get a fresh snapshot first.
LOOKS = re.compile(r"\b(ps|pgrep|pidof|top|htop|ss|netstat|lsof|pstree|kill|pkill|free)\b")
HIDDEN = "[hidden]"
# An option, variable or header whose name holds one of these words carries a secret.
_SECRET_WORDS = r"pass|secret|token|key|auth|bearer|cookie|jwt|private|pw|cred"
_OPTION = re.compile(
    rf"(?i)(?P<name>--?[\w.-]*(?:{_SECRET_WORDS})[\w.-]*)(?:(?P<eq>=)(?P<value>.*))?"
)
_ASSIGNED = re.compile(rf"(?i)(?P<name>[\w.-]*(?:{_SECRET_WORDS})[\w.-]*)=(?P<value>.+)")
_HEADER = re.compile(rf"(?i)(?P<name>[\w-]*(?:{_SECRET_WORDS})[\w-]*):(?P<value>.*)")
_URL_CREDS = re.compile(r"(?i)(\w[\w+.-]*://)[^/\s@]+@")
_OPAQUE = re.compile(r"^[A-Za-z0-9+/_=-]{24,}$")
# Tokens of the usual services, even too short for the transcript's rules to be sure.
_PREFIXED = re.compile(
    r"(?:sk-|sk_|rk_|xox[abprse]-|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|soat|cbt|ft)-"
    r"|AKIA|ASIA|hf_|pypi-AgE|dop_v1_|shp(?:at|ss|ca|pa)_|ntn_|LTAI|AIza|ya29\.|hv[sbr]\."
    r"|eyJ)[\w.+/=-]{4,}"
)
# Passwords given to known programs by a short option, attached (``-pX``) or next (``-p X``).
_ATTACHED = {
    **dict.fromkeys(
        ("mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck",
         "mariadb-dump", "7z", "7za", "7zz", "rar", "unrar", "sshpass"), "-p"),
    "xfreerdp": "/p:",
    "wlfreerdp": "/p:",
}  # fmt: skip
_NEXT = {
    **dict.fromkeys(("sshpass", "mongo", "mongosh", "mongodump", "mongorestore", "login",
                     "rdesktop"), ("-p",)),
    **dict.fromkeys(("redis-cli", "valkey-cli", "keydb-cli"), ("-a",)),
    **dict.fromkeys(("zip", "unzip", "ipmitool", "mosquitto_pub", "mosquitto_sub", "sqlcmd",
                     "bcp"), ("-P",)),
    "openssl": ("-k",),
    "ssh-keygen": ("-N", "-P"),
    **dict.fromkeys(("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami"),
                    ("-w",)),
    "ldappasswd": ("-w", "-s", "-a"),
}  # fmt: skip
# ``user:PASSWORD`` (curl's, wget's, any program's) or ``user%PASSWORD`` (smbclient's) after
# an option that names the user, whatever the program: ``-u admin:pw``, ``-uadmin:pw``,
# ``--user=admin:pw``. ``docker run -u 1000:1000`` loses its group id: shown too little,
# never too much.
_USER_OPTIONS = ("-u", "-U", "--user", "--proxy-user", "--username", "--login")
_USER_PASS = re.compile(r"(?P<user>[\w.@$\\-]*)(?P<sep>[:%])(?P<password>.+)")
# ``user:PASSWORD@host`` without a scheme (rsync, proxies, ``mysql -h``'s DSNs …) and
# Oracle's ``user/PASSWORD@service`` after its tools.
_USERINFO = re.compile(r"(?P<user>[\w.%+-]+):(?P<password>[^@\s/:]+)@(?=[\w.\[-])")
_SLASH_PASS = re.compile(r"(?P<user>[\w.$#-]+)/(?P<password>[^@\s/]+)(?=@|$)")
_ORACLE = frozenset({"sqlplus", "sqlldr", "expdp", "impdp", "exp", "imp", "rman", "dgmgrl"})
# What ``-k`` or ``-P`` of an unlisted program is hidden after: a word, not a number
# (``sort -k 2``, ``xargs -P 4``), a path, a URL (``curl -k URL``) or another option.
_LOOKS_LIKE_VALUE = re.compile(r"(?![-/~.])(?!\d+(?:[.,]\d+)*$)(?!.*://)[^=\s]{3,}")
_SCHEMES = frozenset(
    {"basic", "bearer", "token", "digest", "ssws", "apikey", "api-key", "key", "otp",
     "negotiate", "ntlm", "sso-key", "hmac", "aws4-hmac-sha256"}
)  # fmt: skip


def hide_secrets(args: list[str]) -> list[str]:
    """A command line, split into words at whitespace (a daemon that rewrote its command
    line into one string, as setproctitle does, is split too), with secrets replaced by
    ``[hidden]``: the value after an option, variable or header whose name says secret;
    the passwords of known programs (``mysql -pX``, ``sshpass -p X``, ``curl -u u:X``,
    ``redis-cli -a X``); credentials in URLs; long opaque words and token shapes; and what
    the transcript's redactor finds in each word and in the whole line."""
    raw = [w for arg in args for w in arg.split()]
    # Words are read without the quotes around them (``bash -c "mysql -pX …"`` shows
    # ``"mysql``); the quotes are put back around what is shown.
    words = [w.strip("'\"") for w in raw]
    programs = {w.rsplit("/", 1)[-1] for w in words}
    out: list[str] = []
    hidden: set[int] = set()  # words that are the value of the word before them
    for i, (word, quoted) in enumerate(zip(words, raw, strict=True)):
        lead = quoted[: len(quoted) - len(quoted.lstrip("'\""))]
        trail = quoted[len(quoted.rstrip("'\"")) :] if word else ""
        if i in hidden:
            out.append(lead + HIDDEN + trail)
            continue
        shown = _hide_word(word, words, i, programs)
        out.append(quoted if shown == word else lead + shown + trail)
        if shown == word:
            hidden.update(_value_after(word, words, i, programs))
    # The transcript's rules over each word and the whole line (a key split into words,
    # a token after ``-H``).
    return redact_words(out, find, lambda kind: HIDDEN)


def _hide_word(word: str, words: list[str], i: int, programs: set[str]) -> str:
    """``word`` with the secret it holds itself hidden."""
    m = _OPTION.fullmatch(word)
    if m and m.group("eq"):
        return f"{m.group('name')}={HIDDEN}" if m.group("value") else word
    if not word.startswith("-"):
        m = _ASSIGNED.fullmatch(word)
        if m and not m.group("name").startswith(("http", "/")):
            return f"{m.group('name')}={HIDDEN}"
        m = _HEADER.fullmatch(word)
        if m and m.group("value").strip():
            return f"{m.group('name')}:{HIDDEN}"
    for program, flag in _ATTACHED.items():
        if program in programs and word.startswith(flag) and len(word) > len(flag):
            return flag + HIDDEN
    shown = _user_password(word, words[i - 1] if i > 0 else "", "lftp" in programs)
    if shown != word:
        return shown
    if programs & _ORACLE and not word.startswith("-"):
        m = _SLASH_PASS.match(word)
        if m:
            return f"{m.group('user')}/{HIDDEN}{word[m.end() :]}"
    if "://" in word and _URL_CREDS.search(word):
        return _URL_CREDS.sub(rf"\1{HIDDEN}@", word)
    if "@" in word and _USERINFO.search(word):
        return _USERINFO.sub(rf"\g<user>:{HIDDEN}@", word)
    if (_OPAQUE.match(word) and not word.startswith("/")) or _PREFIXED.match(word):
        return HIDDEN
    return word


def _user_password(word: str, previous: str, comma: bool) -> str:
    """``word`` with the password of a ``user:password`` value of a user option hidden:
    the word after the option, or the option with its value attached (``comma``: lftp's
    ``user,password`` too)."""
    if previous in _USER_OPTIONS:
        value, keep = word, ""
    elif word.startswith(("--user=", "--proxy-user=", "--username=", "--login=")):
        keep, _, value = word.partition("=")
        keep += "="
    elif word.startswith(("-u", "-U")) and not word.startswith("--") and len(word) > 2:
        keep, value = word[:2], word[2:]
    else:
        return word
    m = _USER_PASS.fullmatch(value)
    if not m and comma:
        m = _USER_PASS.fullmatch(value.replace(",", ":", 1))
    if not m:
        return word
    return f"{keep}{m.group('user')}{value[len(m.group('user'))]}{HIDDEN}"


def _value_after(word: str, words: list[str], i: int, programs: set[str]) -> list[int]:
    """The positions of the words after ``word`` that are its secret value."""
    if i + 1 >= len(words):
        return []
    following = words[i + 1]
    m = _OPTION.fullmatch(word)
    if m and not m.group("eq"):
        name = m.group("name").lower().lstrip("-")
        return [] if name.startswith("no-") or name.endswith("stdin") else [i + 1]
    if word.lower() in ("cookie:", "set-cookie:"):
        end = i + 1  # every pair of the header: ``a=1; b=2``
        while end + 1 < len(words) and words[end].endswith(";"):
            end += 1
        return list(range(i + 1, end + 1))
    if not word.startswith("-") and word.endswith(":") and _HEADER.fullmatch(word):
        # ``Authorization: Bearer X``: the scheme stays, the credential goes
        if following.lower() in _SCHEMES and i + 2 < len(words):
            return [i + 2]
        return [i + 1]
    for program, flags in _NEXT.items():
        if program in programs and word in flags:
            return [i + 1]
    if word in ("-k", "-P") and _LOOKS_LIKE_VALUE.fullmatch(following):
        return [i + 1]  # a key or password of a program not listed (not a number or path)
    return []


_SHOWN: dict[tuple[str, ...], str] = {}


def _shown(cmdline: tuple[str, ...]) -> str:
    """``hide_secrets`` of a command line, joined; most of the host's processes are the same
    from one snapshot to the next, so their lines are kept."""
    shown = _SHOWN.get(cmdline)
    if shown is None:
        if len(_SHOWN) > 4096:
            _SHOWN.clear()
        shown = _SHOWN[cmdline] = " ".join(hide_secrets(list(cmdline)))
    return shown


# The fields of a snapshot line, in order (the shims in ``hostbin`` read them by number).
FIELDS = (
    "user", "pid", "ppid", "%cpu", "%mem", "vsz", "rss", "tty", "stat", "start", "time",
    "comm", "args", "uid", "ni", "nlwp", "etime", "etimes", "lstart", "pgid", "sid", "c",
)  # fmt: skip


def _processes() -> list[str]:
    """One tab-separated line per host process, the ``FIELDS`` (what ``ps aux``, ``ps -ef``
    and the usual ``ps -o`` columns show)."""
    import pwd

    ticks = os.sysconf("SC_CLK_TCK")
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    with open("/proc/meminfo") as f:
        total_kb = int(f.readline().split()[1])
    now = time.time()
    boot = now - uptime
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
        # /proc/PID/stat from its third field on: state ppid pgrp session tty_nr … (proc(5))
        fields = stat[stat.rindex(")") + 2 :].split()
        state, ppid, pgid, sid, tty_nr = fields[0], fields[1], fields[2], fields[3], int(fields[4])
        cpu_s = (int(fields[11]) + int(fields[12])) / ticks
        started = boot + int(fields[19]) / ticks
        vsz_kb = int(fields[20]) // 1024
        rss_kb = int(fields[21]) * page_kb
        elapsed = max(0.0, now - started)
        cpu = 100 * cpu_s / max(1e-6, elapsed)
        if uid not in users:
            try:
                users[uid] = pwd.getpwuid(uid).pw_name
            except KeyError:
                users[uid] = str(uid)
        args = _shown(tuple(cmdline)) if cmdline else f"[{comm}]"
        if len(args) > MAX_ARGS:
            args = args[: MAX_ARGS - 3] + "..."
        row = (
            users[uid], entry, ppid, f"{cpu:.1f}", f"{100 * rss_kb / total_kb:.1f}",
            str(vsz_kb), str(rss_kb), _tty(tty_nr), state, _start(started, now),
            time.strftime("%H:%M:%S", time.gmtime(cpu_s)), comm.replace("\t", " "),
            args.replace("\t", " ").replace("\n", " "), str(uid), fields[16], fields[17],
            _etime(elapsed), str(int(elapsed)),
            time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(started)), pgid, sid,
            str(int(cpu)),
        )  # fmt: skip
        lines.append("\t".join(row))
    return sorted(lines, key=lambda line: int(line.split("\t")[1]))


def _tty(tty_nr: int) -> str:
    """The terminal as ``ps`` names it (``pts/3``, ``tty1``), ``?`` for none."""
    if tty_nr == 0:
        return "?"
    major, minor = (tty_nr >> 8) & 0xFFF, (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    if 136 <= major <= 143:
        return f"pts/{minor + (major - 136) * 256}"
    if major == 4 and minor >= 64:
        return f"ttyS{minor - 64}"
    return f"tty{minor}"


def _start(started: float, now: float) -> str:
    """``ps``'s START: the time today, the day this year (``Nov28``), else the year."""
    then, today = time.localtime(started), time.localtime(now)
    if then[:3] == today[:3]:
        return time.strftime("%H:%M", then)
    if then.tm_year == today.tm_year:
        return time.strftime("%b%d", then)
    return str(then.tm_year)


def _etime(seconds: float) -> str:
    """``ps``'s ELAPSED: ``[[DD-]hh:]mm:ss``."""
    s = int(seconds)
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{s:02d}"
    if hours:
        return f"{hours:02d}:{minutes:02d}:{s:02d}"
    return f"{minutes:02d}:{s:02d}"


def _listening() -> str:
    """The host's listening TCP and UDP sockets, ``ss -Hltnup``'s lines (the ``ss`` shim
    lays them out as asked)."""
    ss = shutil.which("ss")
    if not ss:
        return ""
    return subprocess.run(
        [ss, "-Hltnup"], capture_output=True, text=True, timeout=5, check=False
    ).stdout


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
