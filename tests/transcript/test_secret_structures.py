"""Secrets found by their structure (``secret_structures.py``): every one is redacted, every
look-alike comes out unchanged, alone and through one redactor for the whole corpus."""

from __future__ import annotations

import pytest

from shellagent.transcript import Redactor

from .secret_shapes import Shape
from .secret_structures import LOOK_ALIKES, SECRETS

PIECE = 12  # as in test_redact_corpus: no run of this many characters of a secret may survive


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def test_the_corpus_has_sixty_secrets_and_forty_look_alikes() -> None:
    names = [s.name for s in SECRETS]
    assert len(names) >= 60 and len(set(names)) == len(names)
    assert len(LOOK_ALIKES) >= 40 and len(set(LOOK_ALIKES)) == len(LOOK_ALIKES)
    for shape in SECRETS:
        assert shape.secrets and all(s in shape.text for s in shape.secrets), shape.name


@pytest.mark.parametrize("shape", SECRETS, ids=[s.name for s in SECRETS])
def test_every_secret_found_by_its_structure_is_redacted(shape: Shape) -> None:
    out = Redactor().redact(shape.text)
    assert "[REDACTED:" in out
    for secret in shape.secrets:
        assert not leaked(secret, out), out


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_every_structural_look_alike_is_kept(text: str) -> None:
    assert Redactor().redact(text) == text


def test_the_look_alikes_are_kept_after_the_secrets_through_one_redactor() -> None:
    # One redactor learns every secret it found; none of the look-alikes holds one.
    redactor = Redactor()
    for shape in SECRETS:
        redactor.redact(shape.text)
    changed = [t for t in LOOK_ALIKES if redactor.redact(t) != t]
    assert not changed, changed
