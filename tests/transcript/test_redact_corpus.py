"""The secret corpus (``secret_corpus.toml``): every secret shape is redacted, every look-alike
survives unchanged, in memory and on disk through the writer and ``export --format sft``."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from shellagent.transcript import Redactor, export, iter_transcripts

from .scripted import Player, Turn

CORPUS = Path(__file__).with_name("secret_corpus.toml")
CASES: list[dict[str, Any]] = tomllib.loads(CORPUS.read_text())["case"]
PIECE = 12  # no run of this many characters of a secret may survive


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def test_the_corpus_has_sixty_distinct_shapes_each_with_a_look_alike() -> None:
    shapes = [case["shape"] for case in CASES]
    assert len(shapes) >= 60 and len(set(shapes)) == len(shapes)
    for case in CASES:
        assert case["secrets"] and case["benign"], case["shape"]
        for secret in case["secrets"]:
            assert secret in case["text"].replace("\u200b", "").replace("\u2060", "").replace(
                "\u00ad", ""
            ), case["shape"]


@pytest.mark.parametrize("case", CASES, ids=[c["shape"] for c in CASES])
def test_every_secret_shape_is_redacted(case: dict[str, Any]) -> None:
    out = Redactor().redact(case["text"])
    assert "[REDACTED:" in out
    for secret in case["secrets"]:
        assert not leaked(secret, out), out


@pytest.mark.parametrize("case", CASES, ids=[c["shape"] for c in CASES])
def test_every_look_alike_survives_unchanged(case: dict[str, Any]) -> None:
    assert Redactor().redact(case["benign"]) == case["benign"]


def test_the_corpus_never_reaches_the_disk_or_the_export(
    record_session: Player, tmp_path: Path
) -> None:
    """Each secret is printed by a real command; the look-alikes are printed too."""
    texts = tmp_path / "texts"
    texts.mkdir()
    turns = []
    for n, case in enumerate(CASES):
        (texts / f"s{n}").write_text(case["text"])
        (texts / f"b{n}").write_text(case["benign"])
        turns.append(Turn(cmd=f"cat {texts}/s{n}; echo; cat {texts}/b{n}"))
    path = record_session("print them all", [*turns, Turn(done="printed")])
    on_disk = path.read_text()
    out = io.StringIO()
    export("sft", iter_transcripts(), out)
    sft = out.getvalue()
    assert sft.count("\n") == 1  # one successful session, one record
    messages = json.loads(sft)["messages"]
    shown = "\n".join(m["content"] for m in messages)
    look_alikes = "\n".join(case["benign"] for case in CASES)
    for case in CASES:
        # The same string can be a secret in one place and harmless in another (a hex key in
        # an Authorization header, a commit id after git show): only the secret use counts.
        for secret in (s for s in case["secrets"] if s not in look_alikes):
            assert not leaked(secret, on_disk), case["shape"]
            assert not leaked(secret, sft), case["shape"]
        # A value the session showed as a secret is redacted wherever it appears later
        # (the redactor learns it), so a look-alike holding one may change.
        if not any(s in case["benign"] for c in CASES for s in c["secrets"]):
            assert case["benign"].strip() in shown, case["shape"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # a token as the URL's user: one placeholder, not one inside another
            "https://ghp_7YSHmDV0BklRAFXxBhpSYdcuWkYz8DlT3xsp@github.com/acme/app.git",
            "https://[REDACTED:github_token]@github.com/acme/app.git",
        ),
        (
            "https://x-access-token:ghs_RXW50bSDy22DZ6YY773vx10G19EwmfIvaWrv@github.com/a",
            "https://x-access-token:[REDACTED:github_token]@github.com/a",
        ),
        ("mysql -u root -pW1ld-Orchid_88 shop", "mysql -u root -p[REDACTED:password] shop"),
        (
            "curl -u deploy:Gr4nite-Owl-19 https://ci.example.com",
            "curl -u deploy:[REDACTED:password] https://ci.example.com",
        ),
        (
            "Authorization: Basic ZGVwbG95OkdyNG5pdGUtT3dsLTE5",
            "Authorization: Basic [REDACTED:basic_auth]",
        ),
        (
            "openssl pkcs12 -passout pass:Ember-Falcon-3 -out c.p12",
            "openssl pkcs12 -passout pass:[REDACTED:password] -out c.p12",
        ),
        (  # the invisible character goes with the secret it was hiding in
            "token is ghp_7YSHmDV0BklRAFXx\u200bBhpSYdcuWkYz8DlT3xsp!",
            "token is [REDACTED:github_token]!",
        ),
    ],
)
def test_placeholders_replace_exactly_the_secret(text: str, expected: str) -> None:
    assert Redactor().redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=false git status",
        "secret_name: db-credentials",
        "token_type: bearer",
        "ssh-keygen -t ed25519 -N '' -f ~/.ssh/id",
        "sort --key=2 -t, data.csv",
        "user ALL=(ALL) NOPASSWD:ALL",
        "self.password = password",
        "- password: The password for the authentication.",
        "_DD_SIGNATURE = 0x08074b50",
        "zero\u200bwidth and soft\u00adhyphen stay where they are",
    ],
)
def test_names_and_values_that_only_sound_secret_are_kept(text: str) -> None:
    assert Redactor().redact(text) == text
