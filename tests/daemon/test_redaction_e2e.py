"""Review 2's M7 through the real daemon: secret shapes printed by allowed commands, typed
in the task, on the command lines the policy judges and in the model's summary never reach
the transcript file, ``logs show`` or ``export --format rl``."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.daemon.conftest import UNCHECKED, DaemonProc, ask_inprocess, cmd, done, shellagent_cli
from tests.model.conftest import LocalServer
from tests.model.test_openai_backend import ChatServer
from tests.sandbox.test_hostview import _M6_TOKENS, _M6_VALUES, start_m6_processes
from tests.transcript.secret_shapes import SHAPES
from tests.transcript.secret_structures import SECRETS

PIECE = 12


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


# Review 2's survivors: in the task text too.
_IN_TASK = (
    "DigitalOcean dop_v1_",
    "Shopify shpat_",
    "Notion ntn_",
    "Alibaba LTAI bare",
    "Discord bot token",
    "Mailgun key- alnum",
    "Terraform Cloud .atlasv1.",
    "Telegram bot token",
)
_PYPI = next(s for s in SHAPES if s.name == "PyPI pypi-").secrets[0]
# review 2's clear values in the policy verdict's segments (argv, key) and reasons (which
# cut the command short, and the token with it)
_ON_COMMAND_LINES = (
    "mysql -u root -pW1ld-Orchid-88 shop -e 'select 1' || true",
    "curl -s -u alice:S3cr3t-Fjord http://127.0.0.1:9/ || true",
    f"twine upload -u __token__ -p {_PYPI} dist/* || true",
)


def _chunks(lines: list[str], limit: int = 1500) -> list[tuple[int, int]]:
    """Line ranges (1-based, inclusive) whose text fits the observation budget."""
    ranges, start, size = [], 1, 0
    for n, line in enumerate(lines, 1):
        if size and size + len(line) + 1 > limit:
            ranges.append((start, n - 1))
            start, size = n, 0
        size += len(line) + 1
    ranges.append((start, len(lines)))
    return ranges


@pytest.mark.slow
def test_secret_shapes_reach_neither_transcript_nor_logs_nor_rl_export(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    # one shape per line (a key block's lines joined by spaces: it stays in one range)
    lines = [shape.text.replace("\n", " ") for shape in SHAPES]
    (workdir / "shapes.txt").write_text("\n".join(lines) + "\n")
    ranges = _chunks(lines)
    in_task = [s for s in SHAPES if s.name in _IN_TASK]
    task = "check these keys still work: " + " ".join(s.secrets[0] for s in in_task)
    summary = f"printed them; the first was {in_task[0].secrets[0]}"
    replies = [cmd(f"sed -n '{a},{b}p' shapes.txt", "show") for a, b in ranges]
    replies += [cmd(c, "try") for c in _ON_COMMAND_LINES]
    model = script(*replies, done(summary))
    run = ask_inprocess(task, model, workdir, yes=True, max_turns=len(replies) + 1)
    assert run.code == UNCHECKED, run.out[-2000:]
    secrets = [s for shape in SHAPES for s in shape.secrets] + ["W1ld-Orchid-88", "S3cr3t-Fjord"]

    files = list((Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").iterdir())
    assert len(files) == 1
    on_disk = files[0].read_text()
    assert on_disk.count('"type":"execution"') == len(replies)
    session = files[0].stem
    shown = shellagent_cli("logs", "show", session, "--full")
    assert shown.returncode == 0, shown.stderr
    exported = shellagent_cli("export", "--format", "rl")
    assert exported.returncode == 0 and exported.stdout.count("\n") == 1, exported.stderr
    for name, text in (
        ("transcript", on_disk),
        ("logs show", shown.stdout),
        ("rl export", exported.stdout),
        ("daemon log", daemon.log.read_text()),
    ):
        left = [s for s in secrets if leaked(s, text)]
        assert not left, (name, left[:5])
    # and the shapes were really there to be redacted, task and summary included
    assert on_disk.count("[REDACTED:") >= len(SHAPES)
    assert "dop_v1_" not in on_disk and "[REDACTED:digitalocean_token]" in on_disk
    verdicts = [line for line in on_disk.splitlines() if '"type":"policy"' in line]
    assert any("twine" in line and '"segments"' in line for line in verdicts)


@pytest.mark.slow
def test_host_command_line_credentials_reach_neither_the_model_nor_the_transcript(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    # review 2's M6: six values started on host command lines, two of which survived in
    # the transcript; here all of review 2's kinds
    tag = f"sa-m6-{uuid.uuid4().hex[:8]}"
    procs = start_m6_processes(tag)
    try:
        model = script(cmd(f"ps auxww | grep -F {tag} | grep -v grep", "look"), done("listed"))
        run = ask_inprocess("which processes run", model, workdir, yes=True)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert run.code == UNCHECKED, run.out[-2000:]
    (path,) = (Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").iterdir()
    on_disk = path.read_text()
    assert on_disk.count(tag) >= 9  # the listing is there
    values = [*_M6_VALUES.values(), *_M6_TOKENS]
    assert not [v for v in values if v in on_disk]
    assert not [v for v in values if v in run.out]  # what the model saw, streamed to the user


class _Scripted(ChatServer):
    """An ``openai:`` endpoint that answers each request with the next reply of a script
    and keeps every request it was sent (``requests``)."""

    script: ClassVar[list[str]] = []

    def answer(self, body: dict[str, Any]) -> None:
        type(self).reply = self.script[min(len(self.requests), len(self.script) - 1)]
        super().answer(body)


@pytest.mark.slow
def test_an_openai_endpoint_receives_no_secret_an_allowed_cat_printed(
    daemon: DaemonProc, workdir: Path
) -> None:
    # review 3's M4: credential files read by an allowed `cat` went to the endpoint in
    # clear. Here the structural corpus, a few files at a time, within the output budget.
    groups: list[list[str]] = [[]]
    for n, shape in enumerate(SECRETS):
        if sum(len(t) + 1 for t in groups[-1]) + len(shape.text) > 1400:
            groups.append([])
        groups[-1].append(shape.text)
        (workdir / f"c{n}.txt").write_text(f"file c{n}\n{shape.text}\n")
    names, n = [], 0
    for group in groups:
        names.append(" ".join(f"c{i}.txt" for i in range(n, n + len(group))))
        n += len(group)
    handler: type[_Scripted] = type(
        "Endpoint",
        (_Scripted,),
        {"requests": [], "script": [*(cmd(f"cat {g}", "read") for g in names), done("read")]},
    )
    with LocalServer(handler) as server:
        model = f"openai:{server.url}/v1#m"
        run = ask_inprocess("read the files", model, workdir, yes=True, max_turns=len(names) + 1)
    assert run.code == UNCHECKED, run.out[-2000:]
    sent = json.dumps([r["messages"] for r in handler.requests], ensure_ascii=False)
    assert len(handler.requests) == len(names) + 1
    assert all(f"file c{i}" in sent for i in range(len(SECRETS)))  # every output got there
    left = [s.name for s in SECRETS if any(leaked(x, sent) for x in s.secrets)]
    assert not left, left
    (path,) = (Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").iterdir()
    on_disk = path.read_text()
    assert not [s.name for s in SECRETS if any(leaked(x, on_disk) for x in s.secrets)]
