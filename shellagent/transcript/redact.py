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
from pathlib import Path
from typing import Any

from shellagent.errors import ConfigError

PLACEHOLDER = "[REDACTED:{}]"

# Shapes, most specific first: (kind, substrings one of which must occur, pattern). The
# substring test is a cheap prefilter: most command output holds none, and skipping the
# regexes keeps redaction at a few µs per event instead of hundreds.
_SHAPES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "private_key",
        ("PRIVATE KEY",),
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    ),
    ("anthropic_key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai_key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", ("k_live_", "k_test_"), r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}",
    ),
    ("gitlab_token", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", ("xox",), r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    (
        "slack_webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
    ),
    ("huggingface_token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    ("google_api_key", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    (
        "aws_access_key_id",
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
    ),
    ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)

# Shapes whose group 1 (the name) is kept and group 2 (the value) replaced. Case-insensitive;
# the prefilter substrings are lower case.
_CONTEXT_SHAPES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "aws_secret_access_key",
        ("secret",),
        r"(?i)(aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})",
    ),
    ("url_password", ("://",), r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@\"']+:)([^/\s@\"']+)(?=@)"),
    (
        "bearer_token",
        ("bearer", "token"),
        r"(?i)\b((?:bearer|token)\s+)([A-Za-z0-9._~+/\-]{16,}=*)",
    ),
    (
        "password",
        ("pass",),
        r"(?i)((?:password|passwd|passphrase)(?:[_.\-][\w.\-]*)?[\"']?\s*[:=]\s*[\"']?)"
        r"((?!\$|\[REDACTED:)[^\s\"',;]{3,})",
    ),
    (
        "secret",
        ("secret", "token", "key", "credential"),
        r"(?i)((?:secret|token|api_?key|apikey|access_?key|private_?key|credentials?|_key)"
        r"(?:[_.\-][\w.\-]*)?[\"']?\s*[:=]\s*[\"']?)"
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
_SCALARS = (int, float, bool, type(None))


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
class _Rule:
    triggers: tuple[str, ...]
    pattern: re.Pattern[str]
    replace: str | Callable[[re.Match[str]], str]


def _compile(
    table: tuple[tuple[str, tuple[str, ...], str], ...], flags: int, *, keep_prefix: bool
) -> tuple[_Rule, ...]:
    rules = []
    for kind, triggers, rx in table:
        placeholder = PLACEHOLDER.format(kind)
        replace: str | Callable[[re.Match[str]], str] = placeholder
        if keep_prefix:
            replace = _keep_prefix(placeholder)
        rules.append(_Rule(triggers, re.compile(rx, flags), replace))
    return tuple(rules)


def _keep_prefix(placeholder: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + placeholder


def configured_secrets(path: Path | None = None) -> list[str]:
    """Values listed one per line in ``<config dir>/secrets`` (``#`` starts a comment).

    For secrets that have no recognisable shape and live in no environment variable: a
    database password, a house alarm code. The file should be mode 0600, like the config dir.
    """
    from shellagent import paths

    path = path or paths.config_dir() / "secrets"
    try:
        lines = path.read_text().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read the secrets file: {exc.strerror}", path=str(path)) from exc
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


@dataclass(frozen=True)
class Redactor:
    """Replaces secrets in text and in JSON-like values with ``[REDACTED:kind]``.

    ``known`` maps a literal secret value to the label of its placeholder. Build the usual
    one with ``Redactor.from_environment()``.
    """

    known: Mapping[str, str] = field(default_factory=dict)
    _known_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _shapes: tuple[_Rule, ...] = field(init=False, repr=False, compare=False)
    _context: tuple[_Rule, ...] = field(init=False, repr=False, compare=False)
    _shape_triggers: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)
    _context_triggers: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = sorted((v for v in self.known if v), key=len, reverse=True)
        known_re = re.compile("|".join(re.escape(v) for v in values)) if values else None
        object.__setattr__(self, "_known_re", known_re)
        object.__setattr__(self, "_shapes", _compile(_SHAPES, re.DOTALL, keep_prefix=False))
        object.__setattr__(self, "_context", _compile(_CONTEXT_SHAPES, 0, keep_prefix=True))
        for name, rules in (
            ("_shape_triggers", self._shapes),
            ("_context_triggers", self._context),
        ):
            pairs = tuple((t, i) for i, rule in enumerate(rules) for t in rule.triggers)
            object.__setattr__(self, name, pairs)

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        secrets: Iterable[str] | Mapping[str, str] = (),
    ) -> Redactor:
        """Redact token shapes, secret env values, ``secrets`` (values, or value -> name) and
        the secrets the user configured in ``<config>/secrets`` (see ``configured_secrets``)."""
        known = secret_env_values(environ)
        known.update({v: "configured_secret" for v in configured_secrets()})
        if isinstance(secrets, Mapping):
            known.update({v: f"secret_{name}" for v, name in secrets.items()})
        else:
            known.update({v: "secret" for v in secrets})
        return cls(known={v: n for v, n in known.items() if len(v) >= 4})

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by its placeholder."""
        if self._known_re is not None and [v for v in self.known if v in text]:
            text = self._known_re.sub(lambda m: PLACEHOLDER.format(self.known[m.group()]), text)
        # One flat pass over every trigger substring, then only the rules that can match.
        hits = {i for trigger, i in self._shape_triggers if trigger in text}
        for i in sorted(hits):
            rule = self._shapes[i]
            text = rule.pattern.sub(rule.replace, text)
        lowered = text.lower()
        hits = {i for trigger, i in self._context_triggers if trigger in lowered}
        for i in sorted(hits):
            rule = self._context[i]
            text = rule.pattern.sub(rule.replace, text)
        return text

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string (not dict keys) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            # Token ids and logprobs: long lists of numbers, copied without a call per item.
            if all(type(v) in _SCALARS for v in value):
                return list(value)
            return [self.redact_value(v) for v in value]
        return value

    def logging_filter(self) -> logging.Filter:
        """A filter that redacts log records before any handler formats them to disk."""
        return RedactingFilter(self)


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
