"""Passwords on the command lines of the programs that take them.

``mysql -pX``, ``sshpass -p X``, ``curl -u user:X``, ``zip -P X``, ``7z -pX``, ``openssl enc -k
X``, ``ssh-keygen -N X``, ``ldapsearch -w X``, ``docker login -p X`` …; ``htpasswd -b FILE USER
X``; and passwords piped into ``sudo -S``, ``chpasswd`` or ``--password-stdin``. A rule runs
only when its program's name is one of the text's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shellagent.redaction.context import value_of
from shellagent.redaction.scan import CONTEXT, Hit, Scan, rx
from shellagent.redaction.values import is_password

_BETWEEN = r"(?![\w-])[^\n|;&]{0,256}?[ \t]"
_ATTACHED = r"""(?:'(?P<sq>[^'\n]+)'|"(?P<dq>[^"\n]+)"|(?P<bare>[^\s'"|;&<>-][^\s'"|;&<>]*))"""
_SPACED = r"[ \t]*" + _ATTACHED


def _program(name: str, flags: str, value: str, *, split: str = "") -> tuple[bytes, str, str]:
    """``name``'s pattern: the program, anything on its command line, ``flags``, ``value``.
    ``split`` separates a user from the password in the value (``user:password``)."""
    lead = re.escape(name)
    # (``'-pX'``: a flag and its value quoted as one word, as ``shlex.quote`` writes it)
    pattern = f"{lead}(?<![\\w.-]{lead}){_BETWEEN}['\"]?(?:{flags}){value}"
    return name.encode(), pattern, split


_PROGRAMS: tuple[tuple[bytes, str, str], ...] = (
    *(
        _program(name, "-p", _ATTACHED)
        for name in (
            "mysql",
            "mariadb",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlpump",
            "mariadb-dump",
            "mariadb-admin",
        )
    ),  # fmt: skip
    _program("sshpass", "-p", _SPACED),
    _program("redis-cli", "-a", _SPACED),
    _program("valkey-cli", "-a", _SPACED),
    _program("login", "-p", _SPACED),  # docker/podman/helm/oc/az … login -p
    _program("mongo", "-p", _SPACED),
    _program("mongosh", "-p", _SPACED),
    _program("mongodump", "-p", _SPACED),
    _program("mongorestore", "-p", _SPACED),
    _program("zip", "-P", _SPACED),
    _program("unzip", "-P", _SPACED),
    _program("7z", "-p", _ATTACHED),
    _program("7za", "-p", _ATTACHED),
    _program("7zz", "-p", _ATTACHED),
    _program("rar", "-p", _ATTACHED),
    _program("unrar", "-p", _ATTACHED),
    _program("openssl", "-k", r"[ \t]+" + _ATTACHED),
    _program("ssh-keygen", "-[NP]", _SPACED),
    _program("ldapsearch", "-w", _SPACED),
    _program("ldapadd", "-w", _SPACED),
    _program("ldapmodify", "-w", _SPACED),
    _program("ldapdelete", "-w", _SPACED),
    _program("ldapwhoami", "-w", _SPACED),
    _program("ldappasswd", "-[wsa]", _SPACED),
    _program("ipmitool", "-P", _SPACED),
    _program("mosquitto_pub", "-P", _SPACED),
    _program("mosquitto_sub", "-P", _SPACED),
    _program("sqlcmd", "-P", _SPACED),
    _program("bcp", "-P", _SPACED),
    _program("rdesktop", "-p", _SPACED),
    _program("curl", "-u|--user[ =]|-U|--proxy-user[ =]", _SPACED, split=":"),
    _program("http", "-a|--auth[ =]", _SPACED, split=":"),
    _program("https", "-a|--auth[ =]", _SPACED, split=":"),
    _program("lftp", "-u", _SPACED, split=","),
    _program("smbclient", "-U|--user[ =]", _SPACED, split="%"),
    _program("rpcclient", "-U|--user[ =]", _SPACED, split="%"),
    _program("smbmap", "-U|--user[ =]", _SPACED, split="%"),
    _program("xfreerdp", "/p:", _ATTACHED),
    _program("wlfreerdp", "/p:", _ATTACHED),
    _program("rabbitmqctl", r"(?:add_user|change_password)[ \t]+\S+", r"[ \t]+" + _ATTACHED),
)
_PIPED_INTO = (
    r"[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?(?:(?P<chpasswd>chpasswd)"
    r"|sudo(?:[ \t]+-[^\sS]*)*[ \t]+-[a-zA-Z]*S|[^\n|;&]{0,200}?--password-stdin"
    r"|passwd[ \t]+--stdin)"
)
_PIPED = tuple(
    f"{word}(?<![\\w.-]{word})(?:[ \\t]+-[a-zA-Z]+)*[ \\t]+{_ATTACHED}{_PIPED_INTO}"
    for word in ("echo", "printf")
)
_HTPASSWD = re.compile(r"htpasswd(?<![\w.-]htpasswd)(?P<args>[^\n|;&]{0,300})")
_HTPASSWD_ARG = re.compile(r"""'(?P<sq>[^'\n]*)'|"(?P<dq>[^"\n]*)"|(?P<bare>\S+)""")


def program_hits(scan: Scan) -> Iterator[Hit]:
    text = scan.text
    if " -" not in text and "\t-" not in text and "/p:" not in text and "rabbitmq" not in text:
        return
    for name, pattern, split in _PROGRAMS:
        if name not in scan.words:
            continue
        for m in rx(pattern).finditer(text):
            found = value_of(m)
            if found is None:
                continue
            _, v_start, v_end, bare = found
            if split:
                cut = text.find(split, v_start, v_end)
                if cut < 0:
                    continue
                v_start = cut + 1
            if is_password(text[v_start:v_end], bare=False):
                yield Hit(v_start, v_end, "password", CONTEXT, m.start(), v_end)


def pipe_hits(scan: Scan) -> Iterator[Hit]:
    """``echo PASS | sudo -S``, ``echo u:p | chpasswd``, ``echo P | … --password-stdin``."""
    text = scan.text
    if "|" not in text or not (b"echo" in scan.words or b"printf" in scan.words):
        return
    for m in (m for pattern in _PIPED for m in rx(pattern).finditer(text)):
        found = value_of(m)
        if found is None:
            continue
        _, v_start, v_end, _ = found
        if m.group("chpasswd"):
            cut = text.find(":", v_start, v_end)
            if cut < 0:
                continue
            v_start = cut + 1
        if is_password(text[v_start:v_end], bare=False):
            # What comes after the value (``| chpasswd``) makes it a password: keep it in the match.
            yield Hit(v_start, v_end, "password", CONTEXT, m.start(), m.end())


def htpasswd_hits(scan: Scan) -> Iterator[Hit]:
    """``htpasswd -b[c…] FILE USER PASS`` and ``htpasswd -nb USER PASS``."""
    text = scan.text
    if "htpasswd" not in text:
        return
    for m in _HTPASSWD.finditer(text):
        flags, positional = "", list[re.Match[str]]()
        args = list(_HTPASSWD_ARG.finditer(text, m.start("args"), m.end("args")))
        skip = False
        for arg in args:
            word = arg.group()
            if skip:
                skip = False
            elif word.startswith("-") and not positional:
                flags += word[1:]
                skip = word in ("-C", "-r")  # these take a number
            else:
                positional.append(arg)
        wanted = 2 if "n" in flags else 3
        if "b" in flags and len(positional) >= wanted:
            arg = positional[wanted - 1]
            found = value_of(arg)
            if found is not None and is_password(found[0], bare=False):
                yield Hit(found[1], found[2], "password", CONTEXT, m.start(), found[2])
