"""Secrets recognised by their context: ``NAME=VALUE`` and ``--name VALUE`` where the name
says secret, HTTP ``Authorization`` and ``Cookie`` headers, credentials in URLs, ``.netrc``
and ``.pgpass`` lines, and ``config set NAME VALUE`` commands.

Assignments are anchored on a keyword (``pass``, ``token``, ``key`` …) found in a lower-cased
copy of the text; ``values.classify_name`` then judges the whole name and the value decides
(a password may be any word, a key must look random). Values that are code (``passwd =
acct = ''``) or prose (``- password: The password for …``) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shellagent.redaction.scan import CONTEXT, Hit, Scan, rx
from shellagent.redaction.values import (
    KEYWORDS,
    SHORT_KEYWORDS,
    classify_name,
    is_password,
    is_reference,
    looks_random,
)

# A value after ``=``, ``:`` or a space: quoted (anything but the quote) or bare.
_VALUE = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`,;&|<>()\[\]{}]+))"""
# The rest of a name before its keyword (``db_`` of ``db_password``).
_NAME_TAIL = re.compile(r"[a-z0-9_.-]+$")
# HTTP headers that carry a credential whatever it looks like (``X-Api-Key: hunter2``).
_HEADER_NAME = re.compile(r"x-[a-z0-9-]+|api-?key|private-token|auth-token|access-token")
# (YAML may put a value on the next line, indented, or after | or >)
_ASSIGNMENTS = {
    kw: kw + r"[\w.-]{0,60}[\"']?(?P<op>[ \t]*(?::=|=>|==?|:)[ \t]*|[ \t]+"
    r"|:[ \t]*(?:[|>][-+]?[ \t]*)?\r?\n[ \t]+)" + _VALUE
    for kw in (*KEYWORDS, *SHORT_KEYWORDS)
}


def value_of(m: re.Match[str]) -> tuple[str, int, int, bool] | None:
    """The value a context pattern captured: text, span, and whether it was unquoted."""
    for group, bare in (("dq", False), ("sq", False), ("bare", True)):
        if m.group(group) is not None:
            return m.group(group), m.start(group), m.end(group), bare
    return None


def assignment_hits(scan: Scan) -> Iterator[Hit]:
    """``NAME=VALUE``, ``"name": "value"``, ``--name value``, ``-storepass value``."""
    text, lowered = scan.text, scan.lowered
    seen: set[int] = set()
    for keyword in scan.keywords:
        pattern = _ASSIGNMENTS[keyword]
        short = keyword in SHORT_KEYWORDS
        for m in rx(pattern).finditer(lowered):
            at = m.start()
            if short and (
                (at and lowered[at - 1].isalpha() and not text[at].isupper())
                or lowered[at + len(keyword)].isalpha()
            ):
                continue  # inside another word (path, side), unless camelCase (githubPat)
            back = _NAME_TAIL.search(lowered, max(m.start() - 80, 0), m.start())
            start = back.start() if back else m.start()
            if start in seen:
                continue
            seen.add(start)
            hit = _assignment(text, lowered, m, start)
            if hit is not None:
                yield hit


def _assignment(text: str, lowered: str, m: re.Match[str], start: int) -> Hit | None:
    op = m.group("op").strip()
    if op == "==" or (start and lowered[start - 1] == "{"):
        return None
    if start and lowered[start - 1] == "$" and not (op == "=" and m.group("bare") is None):
        return None  # a reference ($PASSWORD); but PHP's and Perl's $password = "…" set one
    if lowered.endswith("://", 0, start):
        return None  # scheme://user:password@host is the URL rule's
    name = lowered[start : m.start("op")].rstrip("\"'")
    flag = name.startswith("-")
    dashes = len(name) - len(name.lstrip("-"))
    name = name.lstrip("-")
    found = value_of(m)
    if found is None or not name or name in ("cookie", "set-cookie"):
        return None  # (a cookie header's pairs are the header rule's)
    _, v_start, v_end, bare = found
    value = text[v_start:v_end]
    if bare and _code_or_prose(lowered, op, name, value, v_end):
        return None
    raw_op = m.group("op")
    if "\n" in raw_op and (value.endswith(":") or text.startswith(("- ", "#"), v_start)):
        return None  # the next line is a mapping's key, a list or a comment: not the value
    if bare and "=" in op and raw_op[0] not in " \t" and raw_op[-1] in " \t":
        # "posts password= followed by …", "MYSQL_PWD= mysql …": a setting is written
        # NAME=VALUE or NAME = VALUE, never with a space after the sign only
        return None
    openssl = value.startswith("pass:")  # openssl's -passin pass:SECRET
    if openssl:
        value, v_start = value[5:], v_start + 5
    if not op:  # NAME VALUE: a --flag (or a java-style -flag), a setter, or a line of .netrc
        if bare and value.startswith("-"):
            return None
        if _SETTER.search(lowered, max(start - 40, 0), start):
            pass  # setx NAME VALUE, set -gx NAME VALUE (fish), ENV NAME VALUE (Dockerfile)
        elif not flag or (dashes == 1 and len(name) < 4):
            return _netrc_line(text, lowered, start, name, value, v_start, v_end)
    kind = "password" if openssl else classify_name(name, flag=flag)
    if kind is None:
        return None
    header = op == ":" and _HEADER_NAME.fullmatch(name) is not None
    if kind == "password" or header:
        ok = is_password(value, bare=bare and not header)
    else:
        ok = looks_random(value)
    if not ok:
        return None
    return Hit(v_start, v_end, kind, CONTEXT, start, v_end)


# What comes before a space-separated ``NAME VALUE`` that sets a variable: ``setx`` (Windows),
# ``set -gx`` (fish), ``setenv`` (csh, launchctl), ``ENV`` (a Dockerfile), ``SetEnv`` (Apache).
_SETTER = re.compile(
    r"(?:^|[\s;&|(])(?:setx|setenv|set(?:[ \t]+-[a-z]+)+|env)[ \t]+$", re.MULTILINE
)
# After an unquoted value in ``name = value``: the rest of an expression (``passwd = acct = ''``,
# ``user, password = user, password``, ``pwd = user + 'x'``).
_EXPRESSION_NEXT = re.compile(r"[ \t]*(?:[=+*/%^<>!,]|(?:if|or|and|else|for|in|not|is)\b)")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_STOPWORDS = frozenset(
    {
        "a", "also", "an", "and", "are", "as", "at", "be", "but", "by", "can", "for", "from",
        "has", "if", "in", "is", "it", "may", "must", "not", "of", "on", "only", "or", "should",
        "so", "than", "that", "the", "then", "to", "was", "when", "which", "while", "will", "with",
    }
)  # fmt: skip


def _code_or_prose(lowered: str, op: str, name: str, value: str, v_end: int) -> bool:
    """Whether an unquoted value is part of code or of a sentence rather than a setting."""
    if v_end < len(lowered) and lowered[v_end] in "([":
        return True  # a call or an index: password = getpass()

    spaced = op and lowered[v_end - len(value) - 1] in " \t"
    if spaced and _EXPRESSION_NEXT.match(lowered, v_end):
        return True
    if _IDENTIFIER.fullmatch(value) and classify_name(value) is not None:
        return True  # a variable named after the secret: self.passwd = password_mgr
    if value.lower() in _STOPWORDS or name.endswith("."):
        return True  # "Same as --pass but used in …", "--tlspassword. Added in 7.52"
    # "password: The password for the authentication." A setting's value ends its line.
    line_end = lowered.find("\n", v_end)
    rest = lowered[v_end : len(lowered) if line_end < 0 else line_end].strip()
    return op == ":" and bool(rest) and rest[0] not in ",}]#;'\""


def _netrc_line(
    text: str, lowered: str, start: int, name: str, value: str, v_start: int, v_end: int
) -> Hit | None:
    """``password VALUE`` where a .netrc has it: after ``machine``/``login`` on its line, or
    alone on a line that follows one of those. The line (or the one above) is the context."""
    if name not in ("password", "passwd"):
        return None
    line_start = lowered.rfind("\n", 0, start) + 1
    line_end = lowered.find("\n", v_end)
    before = lowered[line_start:start].split()
    after = lowered[v_end : len(lowered) if line_end < 0 else line_end].split()
    if after and after[0] not in ("machine", "login", "account", "macdef"):
        return None
    context = line_start
    if not before:  # alone on its line: the line above must be netrc too
        context = lowered.rfind("\n", 0, max(line_start - 1, 0)) + 1
        before = lowered[context:line_start].split()[:1]
    if before and before[0] in ("machine", "default", "login", "account") and is_password(value):
        return Hit(v_start, v_end, "password", CONTEXT, context, v_end)
    return None


_AUTHORIZATION = (
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>[a-z][a-z0-9_.-]{1,24})[ \t]+)?"
    r"(?P<bare>[^\s\"',;]+)"
)
# An Authorization header's credentials as auth-params (RFC 9110): Digest's ``response=``,
# OAuth 1's ``oauth_signature=``, SigV4's ``Signature=``; the whole list is the credential.
_AUTH_PARAMS = re.compile(
    r'[A-Za-z0-9_\-]+[ \t]*=[ \t]*(?:"(?:[^"\\\n]|\\.)*"|[^\s,"]*)'
    r'(?:[ \t]*,[ \t]*[A-Za-z0-9_\-]+[ \t]*=[ \t]*(?:"(?:[^"\\\n]|\\.)*"|[^\s,"]*))*'
)
_BEARER = r"bearer[ \t]+" + _VALUE
_COOKIE = re.compile(r"cookie[\"']?[ \t]*:[ \t]*(?P<pairs>[^\n]*)")
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;\s]+)=(?P<value>[^;\s\\]*)")
# (to the last ``@`` before the host: a password may hold one)
_URL_USER = re.compile(r"://(?P<user>[^/\s\"'<>]{1,256})@")
# One-time credentials in a query: an OAuth authorization code, a CAS ticket.
_QUERY_CODE = re.compile(r"[?&;](?:code|ticket|auth_code)=(?P<value>[^&\s#\"'<>;]{16,})")
_PGPASS_PORT = re.compile(r":(?:\d{1,5}|\*):")


def header_hits(scan: Scan) -> Iterator[Hit]:
    """``Authorization: Basic …``, ``Bearer …``, session cookies."""
    text, lowered = scan.text, scan.lowered
    if "authorization" in lowered:
        for m in rx(_AUTHORIZATION).finditer(lowered):
            v_start, v_end = m.span("bare")
            value = text[v_start:v_end]
            scheme = m.group("scheme")
            params = _AUTH_PARAMS.match(text, v_start) if "=" in value else None
            if params is not None and params.end() > v_end:
                v_end = params.end()
                value = text[v_start:v_end]
            if len(value) < 8 or is_reference(value):
                continue
            kind = {"basic": "basic_auth", "bearer": "bearer_token"}.get(
                scheme or "", "authorization"
            )
            yield Hit(v_start, v_end, kind, CONTEXT, m.start(), v_end)
    if "bearer" in lowered:
        for m in rx(_BEARER).finditer(lowered):
            found = value_of(m)
            if found is not None and looks_random(text[found[1] : found[2]]):
                yield Hit(found[1], found[2], "bearer_token", CONTEXT, m.start(), found[2])
    if "cookie" in lowered:
        for m in _COOKIE.finditer(lowered):
            for pair in _COOKIE_PAIR.finditer(text, m.start("pairs"), m.end("pairs")):
                value = pair.group("value")
                if looks_random(value) or (
                    classify_name(pair.group("name")) and is_password(value)
                ):
                    # The header makes it a cookie: a cut must keep them together.
                    yield Hit(
                        pair.start("value"),
                        pair.end("value"),
                        "cookie",
                        CONTEXT,
                        m.start(),
                        pair.end(),
                    )


# A line of a Netscape cookie jar (curl -c, wget --save-cookies, browsers' exports):
# domain, subdomains flag, path, secure flag, expiry, name, value; tab-separated.
_COOKIE_JAR_LINE = re.compile(
    r"^(?:#HttpOnly_)?[^\t\n]+\t(?:TRUE|FALSE)\t[^\t\n]*\t(?:TRUE|FALSE)\t\d+\t"
    r"(?P<name>[^\t\n]+)\t(?P<value>[^\t\r\n]+)",
    re.MULTILINE,
)


def cookie_jar_hits(scan: Scan) -> Iterator[Hit]:
    """The value of every cookie in a cookie jar that looks random, as in a Cookie header."""
    text = scan.text
    if "\tTRUE\t" not in text and "\tFALSE\t" not in text:
        return
    for m in _COOKIE_JAR_LINE.finditer(text):
        value = m.group("value")
        if looks_random(value) or (classify_name(m.group("name")) and is_password(value)):
            yield Hit(m.start("value"), m.end("value"), "cookie", CONTEXT, m.start(), m.end())


def url_hits(scan: Scan) -> Iterator[Hit]:
    """``scheme://user:PASSWORD@host``, ``scheme://TOKEN@host``, ``?code=…``."""
    text = scan.text
    if "code=" in text or "ticket=" in text:
        for m in _QUERY_CODE.finditer(text):
            if looks_random(m.group("value")):
                yield Hit(m.start("value"), m.end(), "url_token", CONTEXT, m.start(), m.end())
    if "://" not in text:
        return
    for m in _URL_USER.finditer(text):
        user = m.group("user")
        colon = user.find(":")
        if colon >= 0:
            password = user[colon + 1 :]
            if password and not is_reference(password):
                start = m.start("user") + colon + 1
                yield Hit(start, m.end("user"), "url_password", CONTEXT, m.start(), m.end())
        elif len(user) >= 16 and looks_random(user):
            yield Hit(m.start("user"), m.end("user"), "url_token", CONTEXT, m.start(), m.end())


def pgpass_hits(scan: Scan) -> Iterator[Hit]:
    """``host:port:database:user:PASSWORD`` lines (PostgreSQL's .pgpass)."""
    text = scan.text
    if text.count(":") < 4:
        return
    for m in _PGPASS_PORT.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start : len(text) if line_end < 0 else line_end].rstrip("\r")
        fields = line.split(":")
        if len(fields) != 5 or not all(fields) or any(c.isspace() for c in line):
            continue
        if line_start + len(fields[0]) != m.start():
            continue
        if is_password(fields[4]):
            start = line_start + len(line) - len(fields[4])
            yield Hit(
                start,
                start + len(fields[4]),
                "password",
                CONTEXT,
                line_start,
                start + len(fields[4]),
            )


_CONFIG_SET = (
    r"config(?<![\w-]config)(?:ure)?(?:[ \t]+--?[\w-]+(?:[ =][^\s-]\S*)?)*"
    r"[ \t]+(?:set[ \t]+)?(?P<name>[\w./:@-]+)[ \t]+" + _VALUE
)


def config_hits(scan: Scan) -> Iterator[Hit]:
    """``aws configure set NAME VALUE``, ``npm config set NAME VALUE``, ``git config N V``."""
    text = scan.text
    if "config" not in text:
        return
    for m in rx(_CONFIG_SET).finditer(text):
        found = value_of(m)
        if found is None:
            continue
        name = re.split(r"[./:@]", m.group("name"))[-1] or m.group("name")
        kind = classify_name(name)
        value = text[found[1] : found[2]]
        if kind is None:
            continue
        ok = is_password(value, bare=found[3]) if kind == "password" else looks_random(value)
        if ok:
            yield Hit(found[1], found[2], kind, CONTEXT, m.start(), found[2])
