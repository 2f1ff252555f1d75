"""Secrets wrapped in base64: a run that decodes to text holding a secret is one.

``echo Z2hwX…= | base64 -d``, a Kubernetes Secret's ``data:``, a ``.dockerconfigjson``, an
``.env`` file through ``base64`` (wrapped at 76 columns): a run of 24+ base64 or base64url
characters, or a block of base64 lines of one length, is decoded; if the result is text
(UTF-8, printable) and the rules find a secret in it (a shape, ``NAME=VALUE`` with a secret's
name, a password in a URL …), the whole run is redacted, every line of a block. Base64 of
ordinary text, of binary data (random bytes, certificates, images) and hex digests are kept:
they do not decode to text holding a secret.

The rules run on the decoded text through ``rules`` (``spans.find`` one level deeper, so a
secret wrapped twice is found too, up to ``spans.MAX_DEPTH``).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator

from shellagent.redaction.scan import KNOWN, SHAPE, Hit, Scan

MIN_RUN = 24  # base64 of 18 bytes: shorter runs are rarely anything wrapped
MAX_DECODED = 64 * 1024  # longer runs are attachments or images, not a wrapped setting
_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=])")
# Two or more lines of base64 of one length (76 for base64(1), 64 for PEM and openssl),
# then a shorter last one: one encoded text, wrapped.
_BLOCK = re.compile(
    r"^[ \t]*(?P<first>[A-Za-z0-9+/]{40,}={0,2})[ \t]*\r?\n"
    r"(?:[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*\r?\n)*"
    r"[ \t]*[A-Za-z0-9+/]{4,}={0,2}[ \t]*$",
    re.MULTILINE,
)
_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_LOWER, _UPPER = re.compile("[a-z]"), re.compile("[A-Z]")

Rules = Callable[[str], list[Hit]]


def wrapped_hits(scan: Scan, rules: Rules) -> Iterator[Hit]:
    words, starts = scan.long_word_list
    if not words:
        return
    # blocks first: their lines are not runs of their own (one decoding, not one a line)
    in_blocks: list[tuple[int, int]] = []
    if "\n" in scan.text and sum(1 for w in words if _block_line(w)) >= 2:
        yield from _blocks(scan.text, rules, in_blocks)
    for word, word_start in zip(words, starts, strict=True):
        if len(word) < MIN_RUN or any(s <= word_start < e for s, e in in_blocks):
            continue
        for m in _RUN.finditer(word):
            run = m.group()
            kind = _secret_inside(run, rules)
            if kind is not None:
                start, end = word_start + m.start(), word_start + m.end()
                yield Hit(start, end, kind, SHAPE, start, end)


def _block_line(word: str) -> bool:
    """A word that may be a line of wrapped base64 (not a hex digest: one case)."""
    return (
        len(word) >= 40
        and _LINE.fullmatch(word) is not None
        and _LOWER.search(word) is not None
        and _UPPER.search(word) is not None
    )


def _blocks(text: str, rules: Rules, seen: list[tuple[int, int]]) -> Iterator[Hit]:
    """Blocks of wrapped base64 holding a secret; ``seen`` gets the span of every block."""
    for m in _BLOCK.finditer(text):
        lines = [(ln.start(), ln.end()) for ln in _LINE.finditer(text, m.start(), m.end())]
        if len({e - s for s, e in lines[:-1]}) != 1:
            continue  # lines of different lengths: not one text, wrapped
        seen.append((m.start(), m.end()))
        kind = _secret_inside("".join(text[s:e] for s, e in lines), rules)
        if kind is not None:
            for start, end in lines:
                yield Hit(start, end, kind, SHAPE, m.start(), m.end())


def _secret_inside(run: str, rules: Rules) -> str | None:
    """The kind of the secret ``run`` decodes to (``base64:github_token``), or None."""
    body = run.rstrip("=")
    if len(body) % 4 == 1 or len(body) * 3 // 4 > MAX_DECODED:
        return None
    if _LOWER.search(body) is None or _UPPER.search(body) is None:
        return None  # hex, digits, one case: an id or a digest, not encoded text
    url = "-" in body or "_" in body
    if url and ("+" in body or "/" in body):
        return None
    head = _decode(body[:32], url)  # most runs are not text: find out from their start
    if head is None or not _is_text(head):
        return None
    raw = _decode(body, url)
    if raw is None or not _is_text(raw):
        return None
    decoded = raw.decode("utf-8", "replace")
    for hit in rules(decoded):
        if hit.rank != KNOWN:
            return f"base64:{hit.kind.removeprefix('base64:')}"
    return None


def _decode(body: str, url: bool) -> bytes | None:
    padded = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    padded += "=" * (-len(padded) % 4)
    if url:
        padded = padded.translate(_URL_TO_STANDARD)
    try:
        return binascii.a2b_base64(padded, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


_URL_TO_STANDARD = str.maketrans("-_", "+/")
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\n\r\t"


def _is_text(raw: bytes) -> bool:
    """Printable text (a few odd characters aside): what a wrapped setting decodes to."""
    if not raw:
        return False
    if len(raw.translate(None, _TEXT_BYTES)) * 20 <= len(raw):
        return True  # ASCII text, at C speed
    # (a run cut from a longer text may cut a character in two at either end)
    decoded = raw.decode("utf-8", "replace")
    if decoded.count("\ufffd") * 20 > len(decoded):
        return False  # binary: random bytes, an image, a DER certificate
    odd = sum(1 for c in decoded if c == "\ufffd" or not (c.isprintable() or c in "\n\r\t"))
    return odd * 20 <= len(decoded)
