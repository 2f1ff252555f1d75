"""A random token next to a word that names a secret: ``your API token is 7fKq…``.

What ``NAME=VALUE`` does not catch, because prose, a table or another program's output puts
words between the name and the value, or the value on the next line: ``Personal access token
(copy it now):`` then the token alone on its line; ``client credential   <token>   expires
…``. A token is a word of 20+ characters that looks random (letters with digits, or a fast
mix of cases), with an entropy of at least ``MIN_ENTROPY`` bits per character; it is not a
path, a dotted or dashed name, a version, a UUID, a placeholder, or a value with its own
label (``SHA256:…``, ``bh=…``). The name is the nearest word before it (on its line, or at
the end of the line above when the token starts its line) that is not filler (``is``,
``the``, ``your`` …); at most one other word may stand between, and a word that says what
the token is instead (``fingerprint``, ``commit``, ``id``, ``public`` …) ends the search.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shellagent.redaction.scan import CONTEXT, Hit, Scan
from shellagent.redaction.values import (
    HARMLESS_LAST,
    classify_name,
    entropy,
    is_example,
    looks_random,
    name_words,
)

MIN_LENGTH = 20
# Bits per character. Random tokens of 20 characters are above it 99 times in 100 whatever
# their alphabet, hex included (2.9 is hex's 1st percentile at 20; alphanumeric's is 3.65).
MIN_ENTROPY = 2.9
_LOOK_BACK = 6  # words before the token that may hold its name
_NAME_MAX = 64  # a longer word is no name; nor one over 32 without a separator
_OTHER_WORDS = 1  # words that are neither filler nor the name, allowed between
_STRIP = "\"'`()[]{}<>,;.!?*"
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~!@#$%^&*]+={0,2}")
_FILLER = frozenset(
    {
        "is", "was", "are", "be", "been", "the", "a", "an", "your", "my", "our", "their", "new",
        "this", "that", "of", "for", "here", "now", "below", "to", "as", "it", "its", "with",
        "has", "have", "generated", "created", "issued", "follows", "following", "please",
        "copy", "save", "store", "keep", "use", "used", "set", "value", "and", "then", "is:",
        "-", "=", ":", "->", "=>", "|", "#",
    }
)  # fmt: skip
# Words that say what the token is, when it is not a secret.
_BLOCKERS = HARMLESS_LAST | frozenset(
    {
        "fingerprint", "checksum", "digest", "hash", "sha", "sha1", "sha256", "sha512", "md5",
        "commit", "revision", "rev", "tree", "parent", "uuid", "guid", "address", "addr",
        "public", "pub", "pubkey", "certificate", "cert", "serial", "request", "trace",
        "span", "etag", "nonce", "ref", "tag", "image", "build", "package", "module", "class",
    }
)  # fmt: skip
# "public key", "host key", "verify key": named, but not secret
_PUBLIC_QUALIFIERS = frozenset({"public", "pub", "publishable", "host", "verify", "verification"})
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_WORDY = re.compile(r"[a-z]{3,}|[A-Z]{3,}")
_LOWER_RUN = re.compile(r"[a-z]+")
_DIGIT, _UPPER = re.compile("[0-9]"), re.compile("[A-Z]")
_SEPARATORS = re.compile(r"[-_./~+]")
_PARENTHETICAL = re.compile(r"\([^()\n]*\)")


def nearby_hits(scan: Scan) -> Iterator[Hit]:
    words, starts = scan.long_word_list
    if not words or not scan.keywords:
        return
    text = scan.text
    for word, word_start in zip(words, starts, strict=True):
        if len(word) < MIN_LENGTH:
            continue
        core = word.strip(_STRIP)
        if not _shaped(core):
            continue
        start = word_start + word.find(core)
        named = _named_before(text, start)  # (before the costlier half of is_token)
        if named is not None and _random(core):
            # the name is the context a cut must keep with the token
            kind, name_start = named
            yield Hit(start, start + len(core), kind, CONTEXT, name_start, start + len(core))


def is_token(value: str) -> bool:
    """A word that looks like a random token of its own (see the module)."""
    return _shaped(value) and _random(value)


def _shaped(value: str) -> bool:
    """The cheap half of ``is_token``: one token's characters, not a path, name or label."""
    # (cheapest first: most long words are paths, options and names)
    if not MIN_LENGTH <= len(value) <= 512 or value[0] in "/~-.":
        return False
    body = value.rstrip("=")
    if ":" in body or "=" in body or not _TOKEN.fullmatch(value):
        return False  # a label of its own (SHA256:…, bh=…), or not one token
    if _DIGIT.search(body) is None:
        # letters alone: random if the cases mix fast (ProxyBasicAuthHandler is words:
        # lower-case runs of 3 and more; a random mix of cases has runs of about 2)
        runs = _LOWER_RUN.findall(body)
        if not runs or _UPPER.search(body) is None or sum(map(len, runs)) >= 3 * len(runs):
            return False
    # words joined by separators (a file, package or flag name: binutils-x86-64-linux-gnu,
    # connection.cpython-311.pyc, lib/python3.11): a random token has few long one-case runs
    parts = _SEPARATORS.split(body)
    if len(parts) > 1:
        if sum(len(p) for p in parts if _WORDY.fullmatch(p)) * 2 >= len(body):
            return False
        if ("." in body or "/" in body) and any(
            len(p) > 3 and p.isalpha() and p.islower() for p in parts
        ):
            return False  # a path or a dotted name: lib/python3.11, app.config.json
    return True


def _random(value: str) -> bool:
    """The costly half of ``is_token``: random enough, and not an id or a stand-in."""
    if _UUID.fullmatch(value) or is_example(value) or not looks_random(value):
        return False  # an id, a stand-in, a number, a version or words
    return entropy(value.rstrip("=")) >= MIN_ENTROPY


def _not_a_name(word: str) -> bool:
    if len(word) > _NAME_MAX or "(" in word or ")" in word:
        return True
    return len(word) > 32 and "_" not in word and "-" not in word and "." not in word


def _named_before(text: str, start: int) -> tuple[str, int] | None:
    """The kind of secret the words before ``start`` name (see the module) and where the
    name starts, or None."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start].split()
    region = line_start
    # the token starts its line: the end of the line above (over an underline: ----, ====),
    # which must end with the name
    allowed = _OTHER_WORDS
    for _ in range(2):
        if any(c.isalnum() for c in " ".join(before)) or line_start == 0:
            break
        above_start = text.rfind("\n", 0, line_start - 1) + 1
        before = _PARENTHETICAL.sub(" ", text[above_start : line_start - 1]).split()
        line_start = region = above_start
        allowed = 0
    others = 0
    words = before[-_LOOK_BACK:]
    for i in range(len(words) - 1, -1, -1):
        word = words[i]
        core = word.strip(_STRIP + ":=")
        low = core.lower()
        if not core or low in _FILLER or word in _FILLER:
            continue
        if low in _BLOCKERS or low.startswith(("ssh-", "ecdsa-", "sk-ssh", "sk-ecdsa", "-----")):
            return None  # what it is instead; an SSH key's type; an armour line (-----BEGIN …)
        if _not_a_name(core):
            pass  # another token, code (f(x))
        else:
            last = name_words(core)[-1:]
            if last in (["signature"], ["sig"]) or (last and last[0] in _BLOCKERS):
                return None  # a published signature (PGP, DKIM, a release); what it is instead
            kind = classify_name(core)
            if kind is not None:
                qualifier = words[i - 1].strip(_STRIP + ":=").lower() if i else ""
                if qualifier in _PUBLIC_QUALIFIERS:
                    return None
                return kind, max(region, text.rfind(word, region, start))
        others += 1
        if others > allowed:
            return None
    return None
