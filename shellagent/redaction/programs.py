"""Passwords on the command lines of the programs that take them.

``mysql -pX``, ``sshpass -p X``, ``curl -u user:X``, ``zip -P X``, ``7z -pX``, ``openssl enc -k
X``, ``ssh-keygen -N X``, ``ldapsearch -w X``, ``docker login -p X`` …; ``htpasswd -b FILE USER
X``; and passwords piped into ``sudo -S``, ``chpasswd`` or ``--password-stdin``. A rule runs
only when its program's name is one of the text's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from shellagent.redaction.context import value_of
from shellagent.redaction.scan import CONTEXT, Hit, Scan, rx
from shellagent.redaction.values import is_password, looks_random

_ATTACHED = r"""(?:'(?P<sq>[^'\n]+)'|"(?P<dq>[^"\n]+)"|(?P<bare>[^\s'"|;&<>-][^\s'"|;&<>]*))"""
_SPACED = r"[ \t]*" + _ATTACHED


@dataclass(frozen=True)
class _Program:
    """A program that takes a password on its command line: its name (a word of the text),
    the pattern of the name, and the pattern of the flag and the value after it."""

    word: bytes
    lead: str
    argument: str
    split: str  # separates a user from the password in the value (``user:password``)
    once: bool  # a positional argument: only the first match is one


def _program(name: str, flags: str, value: str, *, split: str = "", once: bool = False) -> _Program:
    """``name`` taking its password after ``flags`` (anywhere on its command line) as ``value``."""
    lead = re.escape(name)
    # (``'-pX'``: a flag and its value quoted as one word, as ``shlex.quote`` writes it)
    argument = f"(?<=[ \\t])['\"]?(?:{flags}){value}"
    return _Program(name.encode(), f"{lead}(?<![\\w.-]{lead})(?![\\w-])", argument, split, once)


_PROGRAMS: tuple[_Program, ...] = (
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
    # (-u may end a group of one-letter flags: curl -sSfu user:pass)
    _program("curl", "-[a-zA-Z]*[uU]|--user[ =]|--proxy-user[ =]", _SPACED, split=":"),
    _program("etcdctl", "--user[ =]", _SPACED, split=":"),
    *(_program(name, "-pw", _SPACED) for name in ("plink", "pscp", "psftp", "putty", "kitty")),
    *(
        _program(name, "-[AX]", _SPACED)
        for name in ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmpgetnext", "snmptrap")
    ),
    _program("yt-dlp", "-p|--video-password[ =]", _SPACED),
    _program("youtube-dl", "-p|--video-password[ =]", _SPACED),
    _program("cqlsh", "-p", _SPACED),
    _program("tsql", "-P", _SPACED),
    _program("isql", "-P", _SPACED),
    _program("expo", "-p", _SPACED),
    _program("twine", "-p", _SPACED),
    _program("psexec", "-p", _SPACED),
    _program("psexec.exe", "-p", _SPACED),
    _program("mysqladmin", "password", r"[ \t]+" + _ATTACHED, once=True),  # … password NEW
    _program("smbclient", r"//\S+", r"[ \t]+" + _ATTACHED, once=True),  # //host/share PASS
    # wpa_passphrase SSID PASS, cf auth USER PASS, bw login EMAIL PASS, bw unlock PASS
    _program("wpa_passphrase", r"[^\s-]\S*", r"[ \t]+" + _ATTACHED, once=True),
    _program("cf", r"auth[ \t]+\S+", r"[ \t]+" + _ATTACHED, once=True),
    _program("bw", r"unlock|login[ \t]+\S+", r"[ \t]+" + _ATTACHED, once=True),
    _program(
        "nmcli", r"(?:password|wifi-sec\.psk|802-11-wireless-security\.psk)", r"[ \t]+" + _ATTACHED
    ),  # fmt: skip
    _program("gh", r"secret[ \t]+set[ \t]+\S+(?:[ \t]+-\S+)*?[ \t]+(?:-b|--body)", _SPACED),
    # mc alias set NAME URL ACCESS SECRET (MinIO), and its older mc config host add
    _program(
        "mc",
        r"(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S+[ \t]+\S+[ \t]+\S+",
        r"[ \t]+" + _ATTACHED,
        once=True,
    ),  # fmt: skip
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
    r"[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?"
    r"(?:(?P<chpasswd>chpasswd|base64|openssl[ \t]+base64)"
    r"|sudo(?:[ \t]+-[^\sS]*)*[ \t]+-[a-zA-Z]*S|[^\n|;&]{0,200}?--password-stdin"
    r"|passwd[ \t]+--stdin"
    # logins that read the token from standard input: vault login -, az devops login,
    # gh auth login --with-token
    r"|[^\n|;&]{0,200}?(?:login(?:[ \t]+-\S+)*[ \t]+-(?![\w-])|devops[ \t]+login"
    r"|login[^\n|;&]{0,100}?--with-token))"
)
# (printf's format first: printf '%s\n' PASS)
_PIPED = tuple(
    f"{word}(?<![\\w.-]{word})(?:[ \\t]+-[a-zA-Z]+)*(?:[ \\t]+['\"]?%s(?:\\\\n)?['\"]?)?"
    f"[ \\t]+{_ATTACHED}{_PIPED_INTO}"
    for word in ("echo", "printf")
)
_HTPASSWD = re.compile(r"htpasswd(?<![\w.-]htpasswd)(?P<args>[^\n|;&]{0,300})")
_HTPASSWD_ARG = re.compile(r"""'(?P<sq>[^'\n]*)'|"(?P<dq>[^"\n]*)"|(?P<bare>\S+)""")


# The programs whose password needs no flag before it (a rule runs only when one is named).
_POSITIONAL = frozenset(
    {b"wpa_passphrase", b"nmcli", b"cf", b"bw", b"gh", b"mc", b"rabbitmqctl", b"smbclient",
     b"mysqladmin"}
)  # fmt: skip
# Where a program's command line ends, for the flags that may follow its name.
_COMMAND_END = re.compile(r"[\n|;&]")
_REACH = 258  # a flag starts within this many characters of the program's name


def program_hits(scan: Scan) -> Iterator[Hit]:
    text = scan.text
    if (
        " -" not in text
        and "\t-" not in text
        and "/p:" not in text
        and not scan.words & _POSITIONAL
    ):
        return
    for program in _PROGRAMS:
        if program.word not in scan.words:
            continue
        for p in rx(program.lead).finditer(text):
            stop = _COMMAND_END.search(text, p.end(), p.end() + _REACH)
            limit = stop.start() if stop else p.end() + _REACH
            line_end = text.find("\n", p.end())
            end = len(text) if line_end < 0 else line_end
            for m in rx(program.argument).finditer(text, p.end(), end):
                if m.start() >= limit:
                    break
                hit = _password(text, m, p.start(), program.split)
                if hit is not None:
                    yield hit
                if program.once:
                    break


def _password(text: str, m: re.Match[str], start: int, split: str) -> Hit | None:
    found = value_of(m)
    if found is None:
        return None
    _, v_start, v_end, _ = found
    if split:
        cut = text.find(split, v_start, v_end)
        if cut < 0:
            return None
        v_start = cut + 1
    if is_password(text[v_start:v_end], bare=False):
        return Hit(v_start, v_end, "password", CONTEXT, start, v_end)
    return None


# ``chpasswd <<< 'user:PASS'``, ``sudo -S cmd <<< PASS``: the same, as a here-string
_HERE_STRING = re.compile(
    r"(?:(?P<chpasswd>chpasswd)|sudo(?:[ \t]+-[^\sS]*)*[ \t]+-[a-zA-Z]*S\b[^\n|;&<]*?|"
    r"--password-stdin[^\n|;&<]*?)[ \t]*<<<[ \t]*" + _ATTACHED
)


def pipe_hits(scan: Scan) -> Iterator[Hit]:
    """``echo PASS | sudo -S``, ``echo u:p | chpasswd``, ``echo P | … --password-stdin``,
    ``echo -n u:p | base64``, and the same as a here-string (``chpasswd <<< u:p``)."""
    text = scan.text
    if "<<<" in text:
        for m in _HERE_STRING.finditer(text):
            hit = _piped(text, m)
            if hit is not None:
                yield hit
    if "|" not in text or not (b"echo" in scan.words or b"printf" in scan.words):
        return
    for m in (m for pattern in _PIPED for m in rx(pattern).finditer(text)):
        hit = _piped(text, m)
        if hit is not None:
            yield hit


def _piped(text: str, m: re.Match[str]) -> Hit | None:
    found = value_of(m)
    if found is None:
        return None
    _, v_start, v_end, _ = found
    if m.group("chpasswd"):  # user:PASS (chpasswd, and Basic credentials for base64)
        cut = text.find(":", v_start, v_end)
        if cut < 0:
            return None
        v_start = cut + 1
    if not is_password(text[v_start:v_end], bare=False):
        return None
    # What comes after the value (``| chpasswd``) makes it a password: keep it in the match.
    return Hit(v_start, v_end, "password", CONTEXT, m.start(), max(m.end(), v_end))


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


# Tokens given as the argument of a login command: ``vault login TOKEN``, ``cargo login
# TOKEN``, ``ngrok config add-authtoken TOKEN``, ``snyk auth TOKEN``, ``doctl auth init -t T``.
_LOGIN_PROGRAMS = frozenset(
    {b"vault", b"cargo", b"ngrok", b"snyk", b"doctl", b"railway", b"infisical", b"wrangler",
     b"heroku", b"codecov", b"sentry-cli"}
)  # fmt: skip
_LOGIN = re.compile(
    r"(?<![\w.-])(?:vault|cargo|ngrok|snyk|doctl|railway|infisical|wrangler|heroku|codecov"
    r"|sentry-cli)(?![\w-])[^\n|;&]{0,80}?[ \t]"
    r"(?:login|auth(?:[ \t]+init)?|authtoken|add-authtoken)"
    r"(?:[ \t]+-[\w-]+(?:=\S*)?)*(?:[ \t]+-t|[ \t]+--token)?[ \t]+" + _ATTACHED
)
# ``openssl passwd [-1|-5|-6|-apr1|-salt S …] PASSWORD`` (not -stdin or -in FILE)
_OPENSSL_PASSWD = re.compile(
    r"openssl[ \t]+passwd(?:[ \t]+-(?:salt|in)[ \t]+\S+|[ \t]+-\S+)*[ \t]+" + _ATTACHED
)
# ``net use [DRIVE:] \\host\share PASSWORD /user:NAME`` and ``… /user:NAME PASSWORD``
_NET_USE = re.compile(
    r"net[ \t]+use(?:[ \t]+[A-Za-z]:|[ \t]+\*)?[ \t]+\\\\\S+"
    r"(?:[ \t]+/user:\S+)?[ \t]+" + _ATTACHED.replace("[^\\s'\"|;&<>-]", "[^\\s'\"|;&<>/*-]")
)


# ``net user NAME PASSWORD [/add]`` (``*`` asks for it)
_NET_USER = re.compile(
    r"net[ \t]+user[ \t]+(?:\"[^\"\n]+\"|[^\s/\"]+)[ \t]+"
    + _ATTACHED.replace("[^\\s'\"|;&<>-]", "[^\\s'\"|;&<>/*-]")
)


def login_hits(scan: Scan) -> Iterator[Hit]:
    """A token or password given as a positional argument of the command that takes it."""
    text = scan.text
    if scan.words & _LOGIN_PROGRAMS:
        for m in _LOGIN.finditer(text):
            found = value_of(m)
            if found is not None and "=" not in found[0] and looks_random(found[0]):
                yield Hit(found[1], found[2], "token", CONTEXT, m.start(), found[2])
    if b"passwd" in scan.words and b"openssl" in scan.words:
        for m in _OPENSSL_PASSWD.finditer(text):
            found = value_of(m)
            if found is not None and is_password(found[0], bare=False):
                yield Hit(found[1], found[2], "password", CONTEXT, m.start(), found[2])
    if b"net" in scan.words and b"user" in scan.words:
        for m in _NET_USER.finditer(text):
            found = value_of(m)
            if found is not None and is_password(found[0], bare=False):
                yield Hit(found[1], found[2], "password", CONTEXT, m.start(), found[2])
    if b"net" in scan.words and "\\\\" in text:
        for m in _NET_USE.finditer(text):
            found = value_of(m)
            if found is not None and is_password(found[0], bare=False):
                yield Hit(found[1], found[2], "password", CONTEXT, m.start(), found[2])


# Oracle's ``user/password@connect`` (SQL*Plus, SQL*Loader, Data Pump, RMAN, JDBC thin):
# after one of its programs, ``userid=`` or ``thin:``, or followed by ``:port/service``.
_ORACLE_PROGRAMS = frozenset(
    {b"sqlplus", b"sqlldr", b"expdp", b"impdp", b"exp", b"imp", b"rman", b"dgmgrl", b"sqlcl",
     b"userid", b"thin", b"connect", b"conn"}
)  # fmt: skip
_ORACLE_LOGIN = re.compile(
    r"(?<![\w/.$#@-])(?P<user>[A-Za-z_][\w$#.]{0,63})/"
    r"(?:\"(?P<dq>[^\"\n]{1,128})\"|'(?P<sq>[^'\n]{1,128})'|(?P<bare>[^\s/@\"'`|;&<>()]{1,128}))"
    r"(?:@(?P<at>//)?(?P<host>[A-Za-z0-9_.\-]{1,253})(?:(?P<port>:\d{2,5}[/:])|"
    r"(?P<service>/[A-Za-z]\w*(?![\w/.])))?|(?=[\s\"',;)]|$))"
)
_ORACLE_CONTEXT = re.compile(
    r"(?:^|[\s;|&(=:\"'`])(?:(?P<program>sqlplus|sqlldr|expdp|impdp|exp|imp|dgmgrl|sqlcl"
    r"|rman(?:[ \t]+\S+)*?[ \t]+(?:target|auxiliary|catalog)|userid=|thin:)|connect|conn)"
    r"(?:[ \t]+-\S+)*[ \t]*[\"']?$",
    re.IGNORECASE | re.MULTILINE,
)
# ``user:password@host`` without a scheme, after the programs that take it so: MySQL Shell,
# Impacket's tools (``domain/user:password@host``).
_USERINFO_SCRIPTS = (
    "secretsdump", "psexec", "wmiexec", "smbexec", "atexec", "dcomexec", "getTGT", "getST",
    "GetUserSPNs", "GetNPUsers", "mssqlclient", "smbclient",
)  # fmt: skip
_USERINFO_WORDS = frozenset({b"mysqlsh", *(f"{s.lower()}.py".encode() for s in _USERINFO_SCRIPTS)})
_USERINFO_PROGRAMS = re.compile(
    r"(?<![\w.-])(?:mysqlsh|impacket-\w+|(?:" + "|".join(_USERINFO_SCRIPTS) + r")\.py)(?![\w-])"
    r"[^\n|;&]{0,160}?[ \t]['\"]?(?:[\w.-]+/)?[\w.$-]+:(?P<bare>[^\s@'\"]{1,128})@[\w.\-\[\]:]+"
)


_WORD_START = re.compile(r"[\s\"'`(;|&,]")
_SPACE = re.compile(r"\s")


def _oracle_logins(scan: Scan) -> Iterator[re.Match[str]]:
    """``user/password…`` candidates: all, after one of Oracle's programs; else only those
    followed by ``@`` (an EZConnect string needs its host), found from each ``@``."""
    text = scan.text
    if scan.words & _ORACLE_PROGRAMS:
        yield from _ORACLE_LOGIN.finditer(text)
        return
    at = text.find("@")
    while at > 0:
        line_start = text.rfind("\n", 0, at) + 1
        slash = text.rfind("/", max(line_start, at - 200), at)
        # (most @ are in e-mail addresses: no user/… before them in their word)
        if slash > line_start and not _SPACE.search(text, slash, at):
            word = _WORD_START.search(text[max(line_start, slash - 70) : slash][::-1])
            word_start = slash - word.start() if word else max(line_start, slash - 70)
            m = _ORACLE_LOGIN.search(text, word_start, min(at + 300, len(text)))
            if m is not None and m.group("host") is not None and m.start("host") <= at + 3:
                yield m
        at = text.find("@", at + 1)


# EZConnect's host without a port: a domain name (not a version, v1.2.3, as in pkg/mod@v1.2/x)
_DOMAIN = re.compile(r"(?!v?\d+(?:\.\d+)*$)[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+")


def oracle_hits(scan: Scan) -> Iterator[Hit]:
    """``sqlplus user/PASSWORD@db``, ``userid=user/PASSWORD``, ``user/PASSWORD@host:1521/svc``,
    ``mysqlsh user:PASSWORD@host``."""
    text = scan.text
    if "/" in text and (scan.words & _ORACLE_PROGRAMS or "@" in text):
        for m in _oracle_logins(scan):
            found = value_of(m)
            if found is None or not is_password(found[0], bare=False):
                continue
            line_start = text.rfind("\n", 0, m.start()) + 1
            offset = max(line_start, m.start() - 200)
            context = _ORACLE_CONTEXT.search(text[offset : m.start()])
            # a program that takes it, or SQL*Plus's CONNECT with a database; or EZConnect's port
            named = context is not None and bool(context.group("program") or m.group("host"))
            service = m.group("service") and _DOMAIN.fullmatch(m.group("host") or "")
            if named or m.group("port") is not None or service:
                # (the program before it is the context a cut must keep with it)
                outer = offset + context.start() if context is not None else m.start()
                yield Hit(found[1], found[2], "password", CONTEXT, outer, m.end())
    if scan.words & _USERINFO_WORDS or "impacket-" in text:
        for m in _USERINFO_PROGRAMS.finditer(text):
            if is_password(m.group("bare"), bare=False):
                yield Hit(m.start("bare"), m.end("bare"), "password", CONTEXT, m.start(), m.end())
