"""Cut output keeps no piece of a secret whose telling part was cut away (review M4).

The review's case: ``cat blob.txt`` where a 9000-byte prefix pushes a key's ``BEGIN`` line
out of what is kept while its base64 lines survive. Output is cut twice (the sandbox's head
and tail, the loop's observation budget); both cuts are checked, alone, through the real
sandbox (also as an unprivileged user), the transcript on disk and ``export --format sft``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shellagent.agent import AgentConfig, AutoApprover, Oversight, Parts, Recording, run_task
from shellagent.agent.observation import cut
from shellagent.policy import PolicyEngine
from shellagent.redaction import BlockTracker, cut_text
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.output import CappedBuffer
from shellagent.testing import ScriptedBackend
from shellagent.transcript import Redactor, TranscriptWriter
from tests.sandbox.conftest import as_nobody  # noqa: F401  (a fixture, used by name)

from .secret_shapes import Shape
from .secret_structures import SECRETS as STRUCTURES
from .test_redact_corpus import CASES, leaked

PREFIX = "".join(f"{i:05d} an ordinary line of output before the key\n" for i in range(200))[:9000]


def _openssl_key() -> str:
    args = ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def _openssh_key(directory: Path) -> str:
    path = directory / "id"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-f", str(path)], check=True
    )
    return path.read_text()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Real private keys, made for the test run: PKCS#8 and OpenSSH, one of each."""
    return {"pkcs8": _openssl_key(), "openssh": _openssh_key(tmp_path_factory.mktemp("key"))}


def fragments(key: str, text: str) -> list[str]:
    """Pieces of the key's base64 body (16 characters, every 4) that ``text`` holds."""
    lines = [line for line in key.splitlines() if line and "-----" not in line]
    pieces = {line[i : i + 16] for line in lines for i in range(0, max(len(line) - 15, 1), 4)}
    return sorted(p for p in pieces if len(p) == 16 and p in text)


def kept(text: str, head: int, tail: int) -> str:
    c = cut_text(text, head, tail)
    return f"{c.head}\n[… cut …]\n{c.tail}"


# --- the cuts on their own ----------------------------------------------------------------


def test_without_the_guard_a_plain_head_and_tail_leave_the_key_body(keys: dict[str, str]) -> None:
    """The positive control: the review's leak, by slicing as the cuts used to."""
    text = PREFIX + keys["pkcs8"]
    plain = f"{text[:1306]}\n[… cut …]\n{text[-654:]}"
    assert len(fragments(keys["pkcs8"], Redactor().redact(plain))) >= 8


@pytest.mark.parametrize("kind", ["pkcs8", "openssh"])
@pytest.mark.parametrize("limit", [300, 2000, 6000])
def test_the_observation_cut_keeps_no_piece_of_the_key(
    keys: dict[str, str], kind: str, limit: int
) -> None:
    text = PREFIX + keys[kind] + "after the key\n"
    shown = cut(text, limit)
    assert len(shown) <= limit and shown.startswith("00000 an ordinary line")
    assert fragments(keys[kind], Redactor().redact(shown)) == []


@settings(max_examples=60, deadline=None)
@given(
    head=st.integers(0, 20000),
    tail=st.integers(0, 20000),
    suffix=st.integers(0, 3000),
    kind=st.sampled_from(["pkcs8", "openssh"]),
)
def test_wherever_the_cuts_fall_the_redacted_text_holds_no_piece_of_a_key(
    keys: dict[str, str], head: int, tail: int, suffix: int, kind: str
) -> None:
    text = PREFIX + keys[kind] * 2 + "z" * suffix
    assert fragments(keys[kind], Redactor().redact(kept(text, head, tail))) == []


@settings(max_examples=40, deadline=None)
@given(
    head=st.integers(256, 9000),
    tail=st.integers(256, 9000),
    seed=st.integers(0, 2**32),
    kind=st.sampled_from(["pkcs8", "openssh"]),
)
def test_the_sandbox_buffer_keeps_no_piece_of_a_key_however_the_bytes_arrive(
    keys: dict[str, str], head: int, tail: int, seed: int, kind: str
) -> None:
    # longer than any head + tail drawn, so every example is cut
    data = (PREFIX * 2 + keys[kind] * 3 + "end\n").encode()
    assert len(data) > 18_000
    chunks = random.Random(seed)
    buf, whole = CappedBuffer(head, tail), CappedBuffer(head, tail)
    whole.feed(data)
    at = 0
    while at < len(data):
        step = chunks.randint(1, 4096)
        buf.feed(data[at : at + step])
        at += step
    assert buf.text() == whole.text()
    assert buf.truncated and "bytes omitted" in buf.text()
    assert fragments(keys[kind], Redactor().redact(buf.text())) == []


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["pkcs8", "openssh"]))
def test_the_block_tracker_reads_the_same_however_the_bytes_arrive(
    keys: dict[str, str], seed: int, kind: str
) -> None:
    data = (PREFIX + keys[kind] + "after\n" + keys[kind]).encode()
    rng = random.Random(seed)
    stop = rng.randint(0, len(data))
    whole, pieces = BlockTracker(), BlockTracker()
    whole.feed(data[:stop])
    at = 0
    while at < stop:
        step = rng.randint(1, 300)
        pieces.feed(data[at : min(at + step, stop)])
        at += step
    assert pieces.open_block() == whole.open_block()


@pytest.mark.parametrize("kind", ["pkcs8", "openssh"])
def test_the_block_tracker_knows_where_a_key_is_open(keys: dict[str, str], kind: str) -> None:
    key = keys[kind]
    begin_line_end = key.index("\n") + 1
    middle = begin_line_end + (len(key) - begin_line_end) // 2
    for stop, expected in [
        (0, None),  # before the key
        (begin_line_end, "pem"),  # just after the BEGIN line
        (middle, "pem"),  # in the middle of a base64 line
        (len(key), None),  # after the END line
    ]:
        tracker = BlockTracker()
        tracker.feed((PREFIX + key[:stop]).encode())
        assert tracker.open_block() == expected, stop
    tracker = BlockTracker()
    tracker.feed((PREFIX + key[:middle] + "\nnot base64: the block is over\n").encode())
    assert tracker.open_block() is None


SINGLE_LINE = [c for c in CASES if "\n" not in c["text"].strip()]


@pytest.mark.parametrize("case", SINGLE_LINE, ids=[c["shape"] for c in SINGLE_LINE])
def test_a_cut_through_a_secret_at_any_character_keeps_no_piece_of_it(
    case: dict[str, Any],
) -> None:
    """What redaction hides in the whole text it hides in what a cut keeps."""
    before, after = "x " * 300 + "\n", "\n" + " y" * 300
    text = before + case["text"] + after
    for secret in case["secrets"]:
        assert not leaked(secret, Redactor().redact(text))
    start, end = len(before), len(before) + len(case["text"])
    for at in range(start, end + 1, max((end - start) // 12, 1)):
        for shown in (kept(text, at, 40), kept(text, 40, len(text) - at)):
            redacted = Redactor().redact(shown)
            for secret in case["secrets"]:
                assert not leaked(secret, redacted), (at, redacted[-400:])


@pytest.mark.parametrize("shape", STRUCTURES, ids=[s.name for s in STRUCTURES])
def test_a_cut_through_a_secret_found_by_its_structure_keeps_no_piece_of_it(
    shape: Shape,
) -> None:
    """A name and its value, a block of base64 lines, a key after its comment line: the
    context that makes a value a secret stays with it on one side of a cut."""
    before, after = "x " * 300 + "\n", "\n" + " y" * 300
    text = before + shape.text + after
    start, end = len(before), len(before) + len(shape.text)
    for at in range(start, end + 1, max((end - start) // 12, 1)):
        for shown in (kept(text, at, 40), kept(text, 40, len(text) - at)):
            redacted = Redactor().redact(shown)
            for secret in shape.secrets:
                assert not leaked(secret, redacted), (at, redacted[-400:])


def test_a_cut_through_ordinary_output_drops_at_most_the_word_it_splits() -> None:
    text = "".join(
        f"-rw-r--r-- 1 user user {i * 37} Nov 22 02:15 file{i}.txt\n" for i in range(400)
    )
    for head in range(5000, 5060, 7):
        c = cut_text(text, head, 3000)
        assert len(c.dropped_head) <= len("file123.txt") and len(c.dropped_tail) <= 12
        assert len(c.head) + len(c.dropped_head) == head


# --- end to end ---------------------------------------------------------------------------


def _transcripts() -> list[Path]:
    return sorted((Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").glob("*.jsonl"))


def _export_sft(tmp_path: Path) -> str:
    out = tmp_path / "sft.jsonl"
    done = subprocess.run(
        # -y sessions are unverified: exported only when asked for
        [
            sys.executable,
            "-m",
            "shellagent",
            "export",
            "--format",
            "sft",
            "--include-unsuccessful",
            "-o",
            str(out),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return out.read_text()


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short runtime directory: socket paths are limited to 108 bytes."""
    short = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))
    monkeypatch.setenv("SHELLAGENT_RUNTIME_DIR", str(short / "run"))
    yield short
    shutil.rmtree(short, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pkcs8", "openssh"])
def test_the_reviews_case_leaves_no_piece_of_the_key_on_disk_or_in_the_export(
    keys: dict[str, str], kind: str, outside_tmp: Path, tmp_path: Path, runtime_dir: Path
) -> None:
    """``ask`` runs ``cat blob.txt`` in the real sandbox; 9000 bytes come before the key."""
    (outside_tmp / "blob.txt").write_text(PREFIX + keys[kind])
    script = tmp_path / "model.json"
    replies = [
        json.dumps({"cmd": "cat blob.txt", "why": "show it"}),
        json.dumps({"done": "shown"}),
    ]
    script.write_text(json.dumps(replies))
    done = subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", "-y", "--no-daemon", "--model",
         f"scripted:{script}", "show me the blob"],
        cwd=outside_tmp, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    # the model's own commands, nobody confirmed them: exit 1 (the exit-code table)
    assert done.returncode == 1, done.stderr
    [transcript] = _transcripts()
    on_disk = transcript.read_text()
    sft = _export_sft(tmp_path)
    assert "00000 an ordinary line" in on_disk and "characters cut" in on_disk
    assert "00000 an ordinary line" in sft
    assert fragments(keys[kind], on_disk) == []
    assert fragments(keys[kind], sft) == []


@pytest.mark.slow
def test_a_key_cut_by_the_sandbox_itself_leaves_no_piece_on_disk_or_in_the_export(
    keys: dict[str, str], outside_tmp: Path, tmp_path: Path
) -> None:
    """Three keys after the prefix: the sandbox's own 8 KiB head and tail cut through one.
    The observation budget is large, so only the sandbox's cut applies."""
    (outside_tmp / "blob.txt").write_text(PREFIX + keys["pkcs8"] * 3 + "the end\n")
    policy = PolicyEngine.load(workspace=outside_tmp)
    replies = [json.dumps({"cmd": "cat blob.txt", "why": "show"}), json.dumps({"done": "ok"})]
    with (
        Sandbox(get_profile("default", cwd=outside_tmp), timeout=10) as shell,
        TranscriptWriter() as sink,
    ):
        run_task(
            "show me the blob",
            Parts(
                backend=ScriptedBackend(replies),
                shell=shell,
                policy=policy,
                config=AgentConfig(observation_chars=100_000),
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink),
        )
    on_disk = sink.path.read_text()
    [execution] = [e for e in map(json.loads, on_disk.splitlines()) if e["type"] == "execution"]
    assert execution["truncated"] is True and "bytes omitted" in execution["output"]
    assert fragments(keys["pkcs8"], on_disk) == []
    assert fragments(keys["pkcs8"], _export_sft(tmp_path)) == []


@pytest.mark.slow
def test_an_unprivileged_sandbox_cuts_the_same_way(
    keys: dict[str, str],
    as_nobody: Callable[..., list[dict[str, Any]]],  # noqa: F811
) -> None:
    work: Path = as_nobody.workdir  # type: ignore[attr-defined]
    blob = work / "blob.txt"
    blob.write_text(PREFIX + keys["pkcs8"] * 3 + "the end\n")
    blob.chmod(0o644)
    [result] = as_nobody(["cat blob.txt"], timeout=10)
    output = result["output"]
    assert result["truncated"] and "bytes omitted" in output
    assert output.startswith("00000 an ordinary line") and output.endswith("the end\n")
    assert fragments(keys["pkcs8"], Redactor().redact(output)) == []
