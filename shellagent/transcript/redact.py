"""Secret redaction for everything shellagent writes to disk: transcripts and logs.

Three sources of truth (the rules are in the ``shellagent.redaction`` package):

1. *Known values*: the values of secret-looking environment variables of the writing process
   (``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY`` …) and secrets configured by
   the user. Replaced wherever they appear, whatever their shape.
2. *Shapes*: cloud and service keys with a fixed prefix (``ghp_``, ``AKIA``, ``sk-``,
   ``pypi-AgE``, ``npm_``, ``dckr_pat_``, ``SG.``, ``ya29.`` …), JWTs, PEM and PuTTY private keys,
   crypt hashes, and a bare 40-character AWS secret key.
3. *Context*: ``password=…``-style assignments, ``--password X``, passwords on the command
   lines of the programs that take them (``mysql -pX``, ``sshpass -p X``, ``curl -u u:p``,
   ``htpasswd -b``, ``zip -P`` …), ``Authorization`` and ``Cookie`` headers, credentials in URLs.

Overlapping finds merge into one placeholder named after the most specific rule
(``https://[REDACTED:github_token]@github.com``, never a placeholder inside a placeholder),
and invisible characters slipped into a secret do not hide it. A secret becomes a stable
placeholder naming its kind, ``[REDACTED:github_token]``, or for known values
``[REDACTED:env:NAME]``, so exports stay readable and identical secrets map to identical
text. Redaction happens when a record is written (``Redactor.redact_record``, which every
writer to disk calls: transcripts, history, job runs, eval results), never at export. What
the model is shown of command output, worked examples and a follow-up's digest goes through
``Redactor.redact`` too (``agent/loop.py``), so a secret a command printed reaches neither
the disk nor the model's endpoint. A long output is cut so that the kept part can be
redacted on its own (``redaction/cuts.py``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shellagent.errors import ConfigError
from shellagent.redaction import Hit, Known, find, redact_words
from shellagent.redaction.scan import KNOWN

PLACEHOLDER = "[REDACTED:{}]"

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
# The same text recurs within a turn (a command in the reply, the policy verdict and the
# execution; an output in the execution and in the observation): recent results are kept.
_CACHE_ENTRIES = 64
_CACHE_MAX_CHARS = 32 * 1024
# What a redactor learns (``Redactor.find``): values up to this long, this many of them.
_LEARN_MAX = 512
_LEARN_MAX_N = 256
_LEARNING = threading.Lock()


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
    one with ``Redactor.from_environment()``. A redactor also learns: a secret a rule found
    (``mysql -pHunter2…`` in a command) is a known value from then on, so the same value
    alone (``the password is Hunter2…`` in a summary) or cut short (``mysql -pHunt…`` in a
    policy reason) is redacted too, in the same record and in every later one.
    """

    known: Mapping[str, str] = field(default_factory=dict)
    _known: Known = field(init=False, repr=False, compare=False)
    _recent: dict[str, str] = field(init=False, repr=False, compare=False)
    _learned: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_known", Known(self.known))
        object.__setattr__(self, "_recent", {})
        object.__setattr__(self, "_learned", {})

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
        done = self._recent.get(text)
        if done is not None:
            return done
        hits = self.find(text)
        done = text
        if hits:
            parts: list[str] = []
            at = 0
            for hit in hits:
                parts += (text[at : hit.start], PLACEHOLDER.format(hit.kind))
                at = hit.end
            parts.append(text[at:])
            done = "".join(parts)
        if len(text) <= _CACHE_MAX_CHARS:
            if len(self._recent) >= _CACHE_ENTRIES:
                self._recent.clear()
            self._recent[text] = done
        return done

    def find(self, text: str) -> list[Hit]:
        """The secrets in ``text``, in order (see ``shellagent.redaction.find``); what a rule
        found is learned (see the class)."""
        hits = find(text, self._known)
        for hit in hits:
            if hit.rank != KNOWN and MIN_SECRET_LENGTH <= hit.end - hit.start <= _LEARN_MAX:
                self._learn(text[hit.start : hit.end], hit.kind)
        return hits

    def _learn(self, value: str, kind: str) -> None:
        if value in self._learned or value in self.known or len(self._learned) >= _LEARN_MAX_N:
            return
        with _LEARNING:  # the daemon's log filter is called from several threads
            self._learned[value] = kind
            object.__setattr__(self, "_known", Known({**self.known, **self._learned}))
            self._recent.clear()  # results cached before may hold the value in clear

    def redact_record(self, record: Any) -> Any:
        """A copy of a record (a JSON-like value) as it may be written to disk: every string,
        dict keys included, redacted; a list of strings (an argv) also as one line, so that
        ``["mysql", "-pX"]`` or a key block split into words is found. A secret found
        anywhere in the record is redacted everywhere in it, also where it is cut short.
        Every writer to disk goes through here (``docs/transcripts.md``)."""
        learned = len(self._learned)
        clean = self.redact_value(record)
        if len(self._learned) != learned:
            clean = self.redact_value(record)  # now with what the record itself taught
        return clean

    def redact_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string (dict keys too) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {
                self.redact(k) if isinstance(k, str) else k: self.redact_value(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            # Token ids and logprobs: long lists of numbers, copied without a call per item.
            if all(type(v) in _SCALARS for v in value):
                return list(value)
            if len(value) > 1 and all(isinstance(v, str) for v in value):
                return self.redact_words(list(value))
            return [self.redact_value(v) for v in value]
        return value

    def redact_words(self, words: list[str]) -> list[str]:
        """An argv (or any list of strings) redacted as the line it makes: a secret whose
        context is in another word (``-u`` before ``alice:pw``) or that spans several words
        (a key block) is replaced in each word it touches."""
        return redact_words(words, self.find, PLACEHOLDER.format)


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
