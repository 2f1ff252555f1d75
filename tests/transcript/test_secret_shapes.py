"""Secrets never reach the disk: every built shape is redacted and every look-alike kept
(``secret_shapes.py``), and every string field of every record type, planted with secrets,
comes out of the transcript writer, the history store, a job's run log and an eval's
results without one."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest

from shellagent.events import TRANSCRIPT_EVENTS, TranscriptEvent
from shellagent.transcript import Redactor, TranscriptWriter

from .secret_shapes import LOOK_ALIKES, SHAPES, Shape

PIECE = 12  # as in test_redact_corpus: no run of this many characters of a secret may survive


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def test_the_built_corpus_has_120_shapes_and_60_look_alikes() -> None:
    names = [s.name for s in SHAPES]
    assert len(names) >= 120 and len(set(names)) == len(names)
    assert len(LOOK_ALIKES) >= 60 and len(set(LOOK_ALIKES)) == len(LOOK_ALIKES)
    for shape in SHAPES:
        assert shape.secrets and all(s in shape.text for s in shape.secrets), shape.name


def test_the_built_corpus_is_the_same_on_every_run() -> None:
    from . import secret_shapes

    assert [s.text for s in secret_shapes._shapes()] == [s.text for s in SHAPES]


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_every_built_shape_is_redacted(shape: Shape) -> None:
    out = Redactor().redact(shape.text)
    assert "[REDACTED:" in out
    for secret in shape.secrets:
        assert not leaked(secret, out), out


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_every_look_alike_is_kept(text: str) -> None:
    assert Redactor().redact(text) == text


def test_a_checksum_the_task_asked_for_stays_usable() -> None:
    # sha256sum's output is kept: a hex digest is never a secret by its shape, only when a
    # name says so (``secret=<hex>``) or when the session showed it as a secret before.
    line = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  release.tar.gz"
    redactor = Redactor()
    assert redactor.redact(line) == line
    assert (
        redactor.redact(f"sha256sum release.tar.gz\n{line}\n")
        == f"sha256sum release.tar.gz\n{line}\n"
    )


# --- every field of every record ------------------------------------------------------------

# Secrets planted in string fields, one shape per field in turn; argv-like lists get the
# secrets whose context is in another word, and a key block split into words.
_SPLIT_ARGV = [
    (["mysql", "-u", "root", "-pW1ld-Orchid-88", "shop"], "W1ld-Orchid-88"),
    (["curl", "-u", "alice:S3cr3t-Fjord", "https://x.example"], "S3cr3t-Fjord"),
    (["sshpass", "-p", "Birch-Canyon-42", "ssh", "pi@h"], "Birch-Canyon-42"),
]
_KEY_WORDS = next(s for s in SHAPES if s.name == "RSA key split into argv words")


class _Planter:
    def __init__(self) -> None:
        self.n = 0
        self.secrets: list[str] = []

    def text(self, field: str) -> str:
        shape = SHAPES[self.n % len(SHAPES)]
        self.n += 1
        self.secrets += shape.secrets
        return f"{field}: {shape.text}"

    def words(self, field: str) -> list[str]:
        argv, secret = _SPLIT_ARGV[self.n % len(_SPLIT_ARGV)]
        self.n += 1
        self.secrets.append(secret)
        self.secrets += _KEY_WORDS.secrets
        key = _KEY_WORDS.text.split()[2:]  # the key's words, without printf '%s\n'
        return [*argv, *key, self.text(field)]

    def value(self, field: str, hint: Any) -> Any:
        origin, args = get_origin(hint), get_args(hint)
        if hint is str:
            return self.text(field)
        if origin in (types.UnionType, typing.Union):
            inner = [a for a in args if a is not type(None)]
            return self.value(field, inner[0]) if inner else None
        if origin is Literal:
            return args[0]
        if origin is tuple:
            if args and args[0] is str:
                return tuple(self.words(field))
            if args and get_origin(args[0]) is dict:  # a policy verdict's segments
                segment = {
                    "argv": self.words(field),
                    "key": self.text(field),
                    "reasons": [self.text(field)],
                    "program": "mysql",
                    "assignments": [self.text(field)],
                    "writes": self.words(field),
                }
                return (segment,)
            return ()
        if origin is dict:
            return {"cmd": self.text(field), self.text(f"{field} key"): self.text(field)}
        if hint is int:
            return 1
        if hint is float:
            return 0.5
        if hint is bool:
            return True
        return None


def planted_events() -> tuple[list[TranscriptEvent], list[str], int]:
    """One event of every kind, every string field (in lists and dicts too) planted."""
    planter, events, fields = _Planter(), [], 0
    for cls in TRANSCRIPT_EVENTS.values():
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in ("ts", "seq"):
                continue
            kwargs[f.name] = planter.value(f.name, hints[f.name])
            fields += 1
        if cls.kind == "model_turn":
            kwargs["token_ids"], kwargs["logprobs"] = (1, 2, 3), (-0.1, -0.2, -0.3)
        events.append(cls(**kwargs))
    return events, planter.secrets, fields


def test_every_string_field_of_every_record_type_is_redacted_on_disk(tmp_path: Path) -> None:
    events, secrets, fields = planted_events()
    assert len(events) == len(TRANSCRIPT_EVENTS) and fields > 60
    with TranscriptWriter(directory=tmp_path, redactor=Redactor()) as writer:
        for event in events:
            writer.write(event)
    on_disk = writer.path.read_text()
    assert on_disk.count("\n") == len(events)
    left = sorted({s for s in secrets if leaked(s, on_disk)})
    assert not left, left
    turn = next(json.loads(line) for line in on_disk.splitlines() if '"model_turn"' in line)
    assert turn["token_ids"] is None and turn["redacted"] is True


def test_a_secret_cut_short_in_a_policy_reason_is_redacted(tmp_path: Path) -> None:
    # The verdict's reasons quote the command cut to 60 characters: the token is cut too.
    from shellagent.events import PolicySegment, PolicyVerdict

    token = next(s for s in SHAPES if s.name == "PyPI pypi-").secrets[0]
    command = f"twine upload -p {token} dist/*"
    verdict = PolicyVerdict(
        turn=0,
        command=command,
        decision="ask",
        reasons=(f"{command[:59]}…: twine is not a program the policy knows",),
        segments=(
            PolicySegment(
                argv=tuple(command.split()), program="twine", decision="ask", key=command
            ),
        ),
    )
    with TranscriptWriter(directory=tmp_path, redactor=Redactor()) as writer:
        writer.write(verdict)
    on_disk = writer.path.read_text()
    assert not leaked(token, on_disk), on_disk


def test_history_runs_and_eval_results_are_redacted(tmp_path: Path) -> None:
    from shellagent.agent.history import add_session, history_path
    from shellagent.eval.report import write_results
    from shellagent.eval.runner import TaskResult
    from shellagent.jobs import store

    planter = _Planter()
    add_session(
        planter.text("task"),
        [(planter.text("command"), planter.text("output"), 0), ("mysql -pW1ld-Orchid-88", "", 0)],
        planter.text("answer"),
        session="s1",
    )
    store.jobs_dir().mkdir(parents=True, exist_ok=True)
    store.record_run("job1", {"success": False, "reason": planter.text("reason")})
    write_results(
        [
            TaskResult(
                id="t1",
                status="failed",
                detail=planter.text("detail"),
                answer=planter.text("answer"),
            )
        ],  # fmt: skip
        tmp_path / "eval",
    )
    secrets = [*planter.secrets, "W1ld-Orchid-88"]
    for path in (
        history_path(),
        store.jobs_dir() / "job1.runs.jsonl",
        tmp_path / "eval" / "results.jsonl",
        tmp_path / "eval" / "results.csv",
    ):
        text = path.read_text()
        assert "[REDACTED:" in text, path
        left = [s for s in secrets if leaked(s, text)]
        assert not left, (path, left)


def test_a_job_whose_command_holds_a_secret_is_not_installed(tmp_path: Path) -> None:
    from shellagent.errors import InputError
    from shellagent.jobs import install, make_job
    from shellagent.jobs.store import jobs_dir
    from shellagent.schedule import Schedule

    job = make_job(
        name="backup",
        commands=["mysqldump -u root -pW1ld-Orchid-88 shop > shop.sql"],
        schedule=Schedule(every="day", at="03:00"),
        workdir=tmp_path,
        writable=[tmp_path],
    )
    with pytest.raises(InputError, match="holds a secret"):
        install(job)
    assert not jobs_dir().exists() or not list(jobs_dir().glob("*.toml"))
