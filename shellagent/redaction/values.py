"""What makes a string a secret value rather than a look-alike, and a name a secret's name.

A rule that finds ``NAME=VALUE`` asks two questions: does the name say "secret"
(``DB_PASSWORD``, ``X-Api-Key``, ``aws_secret_access_key``, but not ``GIT_CONFIG_KEY_0``'s
neighbours ``secret_name`` or ``token_type``), and does the value look like one (not
``$VAR``, ``<password>``, a path, a dotted config name like ``core.fsmonitor``, a number).
Passwords may be ordinary words; keys and tokens must look random.
"""

from __future__ import annotations

import math
import re
from typing import Literal

NameKind = Literal["password", "secret", "aws_secret_access_key"]

# A value that stands for a secret without being one: variable references, templates,
# placeholders, masks, literals that mean "nothing here".
_PLACEHOLDER = re.compile(
    r"""\$[{(]?[\w@*#?!-]      # $VAR ${VAR} $(cmd) $1
    | %[\w(]                   # %s %(name)s %VAR%
    | \{\{ | \{%  | <%         # templates
    | <[^<>]*>$                # <password>
    | [*x•.\-_]{3,}$           # masks
    | \[REDACTED
    | (?:true|false|yes|no|on|off|none|null|nil|undefined|required|optional|prompt|empty
      |enabled?|disabled?|redacted|string|example|changeme|all
      |secret|password|passwd|passphrase|pass|pwd|pw|token|key|apikey|api_key|phrase
      |my_?(?:password|pass|secret|token)|your_?(?:password|secret|token))$
    """,
    re.VERBOSE | re.IGNORECASE,
)
# Where a password comes from, in the syntax of the tools that take one (openssl, keytool).
_SOURCE = re.compile(r"(?:file|env|fd|stdin)(?::|$)", re.IGNORECASE)
_PATH = re.compile(r"(?:/|~/|\.\.?/|[A-Za-z]:\\)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# Lower-case words and dotted / dashed / slashed names: identifiers, not keys.
_WORDS = re.compile(r"[a-z]+(?:[._\-/:][a-z]+)*|[A-Z]+(?:[._\-][A-Z]+)*")
_NUMBERISH = re.compile(
    r"0x[0-9a-f]{1,16}"  # 0x08074b50 (a longer one is a key: PRIVATE_KEY=0x…)
    r"|v?\d+(?:[._\-:]\d+)*[a-z]{0,3}"  # 42, 1.2.3, 3600s, 10:30
    r"|\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|s-1(?:-\d+)+",  # a Windows security id (S-1-5-21-…): names an account, not a secret
    re.IGNORECASE,
)
# A value written to show what a secret looks like, not to be one: the documented examples
# (AWS's ``AKIAIOSFODNN7EXAMPLE``) and masked or filled-in placeholders (``ghp_xxxx…``,
# ``xoxb-0000000000-…``). A random token holds neither by chance.
_EXAMPLE = re.compile(r"example|placeholder|[x*•#]{6}|0{8}", re.IGNORECASE)
# Values of a well-known public shape that sit under secret-sounding names.
_PUBLIC = re.compile(
    r"pk_(?:live|test)_|age1[02-9ac-hj-np-z]{58}$|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-"
    # a digest labelled with its algorithm: a host key's fingerprint, npm's integrity, go.sum
    r"|(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|h1)[:\-=][A-Za-z0-9+/=_\-]{16,}$",
    re.IGNORECASE,
)
# nsswitch.conf says ``passwd: files systemd``.
_NSS_SOURCES = frozenset({"files", "compat", "systemd", "sss", "nis", "nisplus", "ldap", "db"})

# Every secret-sounding name holds one of these (``classify_name`` decides); rules look for a
# name only in texts that hold one. The short ones count only as words of a name (``db_pw``,
# ``GITHUB_PAT``, ``connect.sid``), not inside another word (``path``, ``side``).
KEYWORDS = (
    "pass", "pwd", "secret", "token", "key", "auth", "cred", "sig", "sess", "salt",
    "bearer", "cookie", "jwt", "private",
)  # fmt: skip
SHORT_KEYWORDS = ("pw", "pat", "sid", "otp", "dsn")
_SHORT_WORDS = {k: re.compile(k + "(?![a-z])") for k in SHORT_KEYWORDS}


def keywords_in(lowered: str) -> tuple[str, ...]:
    """The keywords a lower-cased text holds (a short one only as a word of its own, not in
    path or inside): a cheap test before the rules that look for a secret's name."""
    found = [k for k in KEYWORDS if k in lowered]
    for k in SHORT_KEYWORDS:
        if k in lowered and any(
            m.start() == 0 or not lowered[m.start() - 1].isalpha()
            for m in _SHORT_WORDS[k].finditer(lowered)
        ):
            found.append(k)
    return tuple(found)


_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "pwd")
_PASSWORD_WORDS = frozenset({"pass", "pw", "pword"})
# words that end in "pass" and say nothing of a password
_NOT_PASSWORDS = frozenset(
    {"bypass", "compass", "surpass", "overpass", "underpass", "trespass", "multipass",
     "onepass", "firstpass", "secondpass", "twopass", "singlepass"}
)  # fmt: skip
_SECRET_WORDS = frozenset(
    {
        "secret", "secrets", "token", "key", "apikey", "credential", "credentials", "creds",
        "auth", "authorization", "sig", "signature", "cookie", "session", "sessionid", "sid",
        "salt", "dsn", "jwt", "otp", "passkey", "privatekey", "pepper", "bearer", "pat",
        "authtoken", "accesstoken",
    }
)  # fmt: skip
# Session cookies named as one word: PHPSESSID, JSESSIONID, ASP.NET_SessionId's sessionid.
_SESSION_ENDINGS = ("sessid", "sessionid")
_SECRET_ENDINGS = ("token", "secret", "apikey", "key", "password", "passwd", "passphrase")
# A name whose last word is one of these holds something about a secret, not the secret.
HARMLESS_LAST = frozenset(
    {
        "id", "ids", "name", "names", "file", "files", "filename", "path", "paths", "dir",
        "directory", "url", "uri", "urls", "endpoint", "host", "hostname", "port", "user",
        "username", "login", "email", "type", "kind", "length", "len", "size", "count", "max",
        "min", "limit", "ttl", "timeout", "expiry", "expires", "expiration", "expire", "age",
        "days", "seconds", "version", "format", "header", "headers", "field", "prefix", "suffix",
        "hint", "policy", "mode", "algorithm", "alg", "enabled", "disabled", "required", "env",
        "var", "label", "arn", "region", "profile", "location", "provider", "method", "scheme",
        "rotation", "lifetime", "level", "strength", "reset", "command", "cmd", "script",
        "helper", "program", "fd", "stdin", "charset", "encoding", "pattern", "regex",
        "store", "manager", "backend", "source", "template", "authentication", "prompt",
        "parallelism", "layout", "bindings", "binding", "remote", "index", "list",
    }
)  # fmt: skip
# First words of flags that take no secret: --no-password, --ask-password, --password-stdin.
_NEGATING_FIRST = frozenset(
    {"no", "ask", "prompt", "read", "use", "with", "without", "require", "allow", "disable",
     "enable", "show", "hide", "reset", "change", "generate", "random", "empty", "skip"}
)  # fmt: skip
_PUBLIC_WORDS = frozenset({"public", "publishable", "pub", "pubkey", "pinnedpubkey"})
_DIGIT, _LOWER, _UPPER = re.compile("[0-9]"), re.compile("[a-z]"), re.compile("[A-Z]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def name_words(name: str) -> list[str]:
    """``DB_PASSWORD`` -> [db, password]; ``apiKey`` -> [api, key]; trailing numbers dropped."""
    words = [w.lower() for part in _SPLIT.split(name) for w in _CAMEL.split(part) if w]
    while words and words[-1].isdigit():
        words.pop()
    return words


def classify_name(name: str, *, flag: bool = False) -> NameKind | None:
    """Whether ``NAME`` in ``NAME=VALUE`` (or the flag ``--NAME VALUE``) names a secret."""
    words = name_words(name)
    if not words or any(w in _PUBLIC_WORDS or w.startswith(("pub", "public")) for w in words):
        return None  # public keys, publishable keys, pinned public keys
    if any(w.startswith(("no", "un")) and w[2:].endswith(_PASSWORD_ENDINGS) for w in words):
        return None  # sudoers' NOPASSWD:
    if flag and words[0] in _NEGATING_FIRST:
        return None
    last = words[-1]
    if words[-3:] == ["private", "key", "id"]:
        return "secret"  # a GCP service account's private_key_id names its key: kept secret
    if last in HARMLESS_LAST:
        return None
    if "aws" in words and "secret" in words:
        return "aws_secret_access_key"
    if last in _PASSWORD_WORDS or last.endswith(_PASSWORD_ENDINGS):
        return "password"
    if last.endswith("pass") and (flag or last not in _NOT_PASSWORDS):
        return "password"  # keytool -storepass, -keypass; SSHPASS, DBPASS, ROOTPASS
    if any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words):
        return "secret"
    if last.endswith(_SESSION_ENDINGS):
        return "secret"
    return None


def is_example(value: str) -> bool:
    """A documented example or a placeholder written in a secret's shape (``…EXAMPLE``,
    ``ghp_xxxxxxxx…``, ``xoxb-000000…``): shown to say what a secret looks like."""
    return _EXAMPLE.search(value) is not None


def is_reference(value: str) -> bool:
    """A placeholder, a variable, a path, a URL or a password source: not a secret itself."""
    return bool(
        _PLACEHOLDER.match(value)
        or _PATH.match(value)
        or _URL.match(value)
        or _SOURCE.match(value)
        or _PUBLIC.match(value)
    )


def is_password(value: str, *, bare: bool = True) -> bool:
    """Whether ``value``, found where a password goes, is one. Any word of 3+ characters is,
    unless it is a reference (``$PW``, ``<pw>``, a path) or, unquoted, a dotted name."""
    value = value.strip()
    if len(value) < 3 or is_reference(value) or value.lower() in _NSS_SOURCES:
        return False
    return not (bare and _DOTTED_NAME.fullmatch(value))


def looks_random(value: str) -> bool:
    """Whether ``value``, found where a key or token goes, looks like one: 8+ characters,
    not a reference, not words or a dotted name, not a number, version or date; letters
    with digits, or a long mix of cases, or a long high-entropy string."""
    if len(value) < 8 or is_reference(value):
        return False
    if _WORDS.fullmatch(value) or _NUMBERISH.fullmatch(value):
        return False
    if value.isascii():  # (the common case, at C speed)
        has_digit = _DIGIT.search(value) is not None
        has_lower = _LOWER.search(value) is not None
        has_upper = _UPPER.search(value) is not None
    else:
        has_digit = any(c.isdigit() for c in value)
        has_lower = any(c.islower() for c in value)
        has_upper = any(c.isupper() for c in value)
    if has_digit and (has_lower or has_upper):
        return True
    if has_lower and has_upper:
        switches = sum(
            1 for a, b in zip(value, value[1:], strict=False) if a.islower() != b.islower()
        )
        if len(value) >= 12 and switches * 3 >= len(value):
            return True
    return len(value) >= 20 and entropy(value) >= 3.5


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in map(value.count, set(value))) if n else 0.0
