"""Secret redaction for everything shellagent writes to disk: transcripts and logs.

Two sources of truth, applied in this order:

1. *Known values*: the values of secret-looking environment variables of the writing process
   (``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY`` …) and secrets configured by
   the user. Replaced wherever they appear, whatever their shape.
2. *Known shapes*: cloud keys, ``sk-…`` / ``sk-ant-…``, GitHub / GitLab / Slack / Hugging Face
   tokens, JWTs, PEM private key blocks, ``password=…``-style assignments, ``user:pass@`` in URLs.

A secret becomes a stable placeholder naming its kind, ``[REDACTED:github_token]``, or for
known values ``[REDACTED:env:NAME]``, so exports stay readable and identical secrets map to
identical text. Redaction happens when a line is written, never at export: the model may see
the real value in memory during its session, the disk never does.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PLACEHOLDER = "[REDACTED:{}]"

# Shapes, most specific first: the first pattern to claim a span wins.
_SHAPES: tuple[tuple[str, str], ...] = (
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github_token", r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)

# Shapes whose group 1 is kept and group 2 is the secret.
_CONTEXT_SHAPES: tuple[tuple[str, str], ...] = (
    (
        "aws_secret_access_key",
        r"(?i)(aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})",
    ),
    ("url_password", r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@\"']+:)([^/\s@\"']+)(?=@)"),
    ("bearer_token", r"(?i)\b((?:bearer|token)\s+)([A-Za-z0-9._~+/\-]{16,}=*)"),
    (
        "password",
        r"(?i)((?<![A-Za-z0-9])[\w.\-]*(?:password|passwd|passphrase)(?:[_.\-][\w.\-]*)?"
        r"[\"']?\s*[:=]\s*[\"']?)((?!\$|\[REDACTED:)[^\s\"',;]{3,})",
    ),
    (
        "secret",
        r"(?i)((?<![A-Za-z0-9])[\w.\-]*(?:secret|token|api_?key|apikey|access_?key|"
        r"private_?key|credentials?|_key)(?:[_.\-][\w.\-]*)?[\"']?\s*[:=]\s*[\"']?)"
        r"((?!\$|\[REDACTED:|\d+\b|(?:true|false|null|none)\b)[^\s\"',;]{6,})",
    ),
)

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|_KEY$|^AWS_|CREDENTIAL|PRIVATE|"
    r"_AUTH$|^AUTH_|COOKIE|SESSION_?ID",
    re.IGNORECASE,
)
# Names that match the rule above but never hold a secret value.
_HARMLESS_NAME = re.compile(
    r"(_REGION|_PROFILE|_ENDPOINT|_FILE|_PATH|_DIR|_SOCK|_HOST|_PORT|_USER|_USERNAME)$",
    re.IGNORECASE,
)
MIN_SECRET_LENGTH = 8


def secret_env_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Values of secret-looking variables in ``environ`` (default: this process), value -> name."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name, value in env.items():
        if not _SECRET_NAME.search(name) or _HARMLESS_NAME.search(name):
            continue
        value = value.strip()
        if len(value) < MIN_SECRET_LENGTH or value.startswith(("/", "~")):
            continue
        found[value] = f"env:{name}"
    return found


@dataclass(frozen=True)
class Redactor:
    """Replaces secrets in text and in JSON-like values with ``[REDACTED:kind]``.

    ``known`` maps a literal secret value to the label of its placeholder. Build the usual
    one with ``Redactor.from_environment()``.
    """

    known: Mapping[str, str] = field(default_factory=dict)
    _known_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _shapes_re: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _context: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = sorted((v for v in self.known if v), key=len, reverse=True)
        known_re = re.compile("|".join(re.escape(v) for v in values)) if values else None
        shapes = "|".join(f"(?P<{name}>{rx})" for name, rx in _SHAPES)
        object.__setattr__(self, "_known_re", known_re)
        object.__setattr__(self, "_shapes_re", re.compile(shapes, re.DOTALL))
        object.__setattr__(
            self, "_context", tuple((name, re.compile(rx)) for name, rx in _CONTEXT_SHAPES)
        )

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        secrets: Iterable[str] | Mapping[str, str] = (),
    ) -> Redactor:
        """Redact token shapes, secret env values and ``secrets`` (values, or value -> name)."""
        known = secret_env_values(environ)
        if isinstance(secrets, Mapping):
            known.update({v: f"secret:{name}" for v, name in secrets.items()})
        else:
            known.update({v: "secret" for v in secrets})
        return cls(known={v: n for v, n in known.items() if len(v) >= 4})

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by its placeholder."""
        if self._known_re is not None:
            text = self._known_re.sub(lambda m: PLACEHOLDER.format(self.known[m.group()]), text)
        text = self._shapes_re.sub(lambda m: PLACEHOLDER.format(m.lastgroup), text)
        for name, rx in self._context:
            text = rx.sub(_keep_prefix(PLACEHOLDER.format(name)), text)
        return text

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string (not dict keys) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(v) for v in value]
        return value

    def logging_filter(self) -> logging.Filter:
        """A filter that redacts log records before any handler formats them to disk."""
        return RedactingFilter(self)


def _keep_prefix(placeholder: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + placeholder


class RedactingFilter(logging.Filter):
    """Redacts a record's message and arguments in place (attach to handlers that write)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.redact(record.stack_info)
        return True
