"""Secrets recognised by their shape: tokens with a fixed prefix, key blocks, crypt hashes.

Every pattern starts with the literal prefix of its shapes, matched before the look-behind
that asks for a word boundary, so ``re`` scans for the prefix at C speed; and the patterns
run only over the words long enough to hold a token (``Scan.long_words``). PEM and PuTTY
private keys, which span lines, are matched over the whole text; ``BEGIN``, ``END`` and
``BODY_LINE`` are shared with ``cuts.py``, which tracks key blocks across an output cut.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from shellagent.redaction.scan import SHAPE, Hit, Scan, rx
from shellagent.redaction.values import entropy, looks_random

_ALNUM = "[A-Za-z0-9]"


def _group(first: str, alternatives: dict[str, str]) -> str:
    """One pattern for every shape starting with ``first``: ``first`` is matched before the
    look-behind that asks for a word boundary, so the scan for it stays fast. The group that
    matched names the kind."""
    body = "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in alternatives.items())
    lead = re.escape(first)
    return f"{lead}(?<!{_ALNUM}{lead})(?:{body})"


# Shapes keyed by their first character; each alternative is what follows it.
_SHAPES: tuple[str, ...] = (
    _group(
        "g",
        {
            "github_token": r"h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{22,}",
            "gitlab_token": r"l(?:pat|dt|rt|ptt|soat|cbt|imt|oas|ffct|ft)-[A-Za-z0-9_\-]{20,}",
            "grafana_token": r"lsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|lc_[A-Za-z0-9+/]{32,}={0,2}",
            "groq_key": r"sk_[A-Za-z0-9]{48,}",
        },
    ),
    _group(
        "s",
        {
            "anthropic_key": r"k-ant-[A-Za-z0-9_\-]{16,}",
            "openai_key": r"k-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
            "stripe_key": r"k_(?:live|test)_[A-Za-z0-9]{16,}",
            "shopify_token": r"hp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}",
            "supabase_token": r"bp_[a-f0-9]{40}",
        },
    ),
    _group(
        "r",
        {
            "stripe_key": r"k_(?:live|test)_[A-Za-z0-9]{16,}",
            "replicate_token": r"8_[A-Za-z0-9]{37}",
            "rubygems_key": r"ubygems_[a-f0-9]{48}",
        },
    ),
    _group(
        "h",
        {
            "huggingface_token": r"f_[A-Za-z0-9]{30,}",
            "vault_token": r"v[sbr]\.[A-Za-z0-9_\-]{24,}",
            "slack_webhook": r"ooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        },
    ),
    _group(
        "x",
        {
            "slack_token": r"ox[abprs]-[0-9A-Za-z\-]{10,}|oxe(?:\.xox[bp])?-\d-[A-Za-z0-9\-]{16,}"
            r"|app-\d-[A-Za-z0-9\-]{20,}",
        },
    ),
    _group(
        "A",
        {
            "aws_access_key_id": r"(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}(?![0-9A-Za-z])",
            "google_api_key": r"Iza[0-9A-Za-z_\-]{35}",
            "atlassian_token": r"TATT3[A-Za-z0-9_\-=]{50,}",
            "age_key": r"GE-SECRET-KEY-1[0-9A-Z]{58}",
        },
    ),
    _group("e", {"jwt": r"yJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"}),
    _group("n", {"npm_token": r"pm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"}),
    _group("N", {"newrelic_key": r"R(?:AK|JS|II)-[A-Z0-9]{27}"}),
    _group("p", {"pypi_token": r"ypi-AgE[A-Za-z0-9_\-]{50,}"}),
    _group("P", {"postman_key": r"MAK-[a-f0-9]{24}-[a-f0-9]{34}"}),
    _group(
        "d",
        {
            "docker_token": r"ckr_pat_[A-Za-z0-9_\-]{20,}",
            "digitalocean_token": r"o[por]_v1_[a-f0-9]{64}",
            "databricks_token": r"api[a-h0-9]{32}(?![A-Za-z0-9])",
            "doppler_token": r"p\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
            "discord_webhook": r"iscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}",
        },
    ),
    _group(
        "S",
        {
            "sendgrid_key": r"G\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{32,64}",
            "twilio_key": r"K[0-9a-fA-F]{32}(?![0-9A-Za-z])",
        },
    ),
    _group("y", {"google_oauth_token": r"a29\.[0-9A-Za-z_\-]{20,}"}),
    _group("w", {"stripe_key": r"hsec_[A-Za-z0-9]{24,}"}),
    _group("l", {"linear_key": r"in_api_[A-Za-z0-9]{40}"}),
    _group("k", {"mailgun_key": r"ey-[0-9a-f]{32}(?![0-9A-Za-z])"}),
    _group("L", {"private_key": r"S0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}"}),
    _group(
        "$",
        {"password_hash": r"(?:1|2[abxy]?|5|6|7|apr1|md5|sha1|y|gy|sm3)\$[./A-Za-z0-9=$,]{20,}"},
    ),
)
# Shapes with loose bodies that ordinary kebab-case names could fill: the body must look random.
_LOOSE = frozenset({"openai_key", "anthropic_key", "gitlab_token", "slack_token", "docker_token"})
_TELEGRAM = re.compile(r":AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])")

BEGIN = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
END = r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
# A line inside a key block: base64, an armour header, or blank.
BODY_LINE = (
    r"[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\n]*)?"
    r"[ \t]*\r?"
)
_PEM = (
    BEGIN
    + r"(?:[^\n]*?"  # on one line, e.g. with escaped newlines in JSON
    + END
    + r"|\n(?:"
    + BODY_LINE
    + r"\n)*?[ \t]*"
    + END
    + r"|[^\n]*(?:\n"  # cut off: the rest of the line and every body line after it
    + BODY_LINE
    + r"(?=\n|\Z))*)"
)
# PuTTY's .ppk: the public lines stay, the private lines and their MAC go.
PUTTY_START, PUTTY_END = "Private-Lines:", "Private-MAC:"
_PUTTY = (
    r"Private-Lines:[ \t]*\d+[ \t]*\r?(?:\n[ \t]*[A-Za-z0-9+/=]+[ \t]*\r?(?=\n|\Z))*"
    r"(?:\nPrivate-MAC:[^\n]*)?"
)
_BARE_AWS = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]+")


def shape_hits(scan: Scan) -> Iterator[Hit]:
    text = scan.text
    joined, _ = scan.long_words
    if joined:
        for pattern in _SHAPES:
            for m in rx(pattern).finditer(joined):
                kind = m.lastgroup or "secret"
                if kind in _LOOSE and not looks_random(m.group()[3:]):
                    continue
                if kind == "private_key" and not _is_private_pem(m.group()):
                    continue
                start = scan.from_long_words(m.start())
                end = start + m.end() - m.start()
                yield Hit(start, end, kind, SHAPE, start, end)
        if ":AA" in joined:
            yield from _telegram_tokens(text)
        yield from _bare_aws_secrets(scan)
    if "PRIVATE KEY" in text:
        for m in rx(_PEM).finditer(text):
            yield Hit(m.start(), m.end(), "private_key", SHAPE, m.start(), m.end())
    if PUTTY_START in text:
        for m in rx(_PUTTY).finditer(text):
            yield Hit(m.start(), m.end(), "private_key", SHAPE, m.start(), m.end())


def _telegram_tokens(text: str) -> Iterator[Hit]:
    """``123456789:AA…``: a bot id of 8-10 digits, a colon, and 35 characters."""
    for m in _TELEGRAM.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        if not 8 <= m.start() - start <= 10:
            continue
        if start == 0 or not text[start - 1].isalnum() or text[start - 3 : start] == "bot":
            yield Hit(start, m.end(), "telegram_token", SHAPE, start, m.end())


def _is_private_pem(encoded: str) -> bool:
    """``LS0tLS1CRUdJTi…`` is ``-----BEGIN…`` in base64: a key only if it says PRIVATE KEY."""
    head = encoded[: len(encoded) // 4 * 4][:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head)
    except (binascii.Error, ValueError):
        return False


def _bare_aws_secrets(scan: Scan) -> Iterator[Hit]:
    """40 random characters of base64 on their own: what an AWS secret key looks like.

    Kept when they mix cases and digits with a high entropy, are not hex (a commit id), not a
    path, and are not the last line of a base64 blob (whose lines are longer)."""
    text = scan.text
    for word, word_start in zip(*scan.long_word_list, strict=True):
        if len(word) < 40 or (len(word) > 40 and _BASE64_RUN.fullmatch(word)):
            continue  # one base64 run longer than 40 is a blob, not a key
        for m in _BARE_AWS.finditer(word):
            value = m.group()
            if value.startswith("/") or value.endswith("/") or "//" in value:
                continue
            if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
                continue
            if not any(c.isdigit() for c in value) or entropy(value) < 4.3:
                continue
            start = word_start + m.start()
            line_start = text.rfind("\n", 0, start) + 1
            if line_start:
                previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
                if _BASE64_RUN.fullmatch(previous.strip()) and len(previous.strip()) > 40:
                    continue
            yield Hit(start, start + 40, "aws_secret_access_key", SHAPE, start, start + 40)
