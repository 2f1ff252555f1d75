"""A real daemon in a subprocess, on a socket in a short private temp dir, with scripted
models chosen per task (``--model scripted:FILE``), and helpers to talk to it."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shellagent.cli.ask_client import Connection, connect, run_on, socket_path
from shellagent.cli.ask_ui import AskUI
from shellagent.events import (
    ApprovalNeeded,
    ApprovalReply,
    ChangesDecision,
    ChangesReady,
    ChoiceRequest,
    ConfirmAnswer,
    ConfirmRequest,
    Summary,
    WireEvent,
)

E = TypeVar("E")

ROOT = Path(__file__).resolve().parents[2]


def cmd(command: str, why: str = "") -> str:
    return json.dumps({"cmd": command, "why": why})


def done(summary: str = "done") -> str:
    return json.dumps({"done": summary})


@dataclass
class DaemonProc:
    proc: subprocess.Popen[bytes]
    runtime: Path
    log: Path

    @property
    def socket(self) -> Path:
        return self.runtime / "daemon.sock"

    def alive(self) -> bool:
        return self.proc.poll() is None


def wait_for_socket(timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            connect().close()
            return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("the daemon did not come up")


def start_daemon(*extra: str) -> DaemonProc:
    runtime = Path(os.environ["SHELLAGENT_RUNTIME_DIR"])
    log = Path(os.environ["SHELLAGENT_STATE_DIR"]) / "daemon.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "shellagent", "daemon", "run", "--quiet", *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_socket()
    except AssertionError:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"daemon did not start: {err.decode()[-2000:]}") from None
    return DaemonProc(proc, runtime, log)


def stop(daemon: DaemonProc) -> None:
    if daemon.alive():
        daemon.proc.send_signal(signal.SIGTERM)
        try:
            daemon.proc.wait(10)
        except subprocess.TimeoutExpired:
            daemon.proc.kill()
            daemon.proc.wait()
    if daemon.proc.stderr:
        daemon.proc.stderr.close()


NO_CONFIRM = "[ask]\nconfirm = false\n"
# The exit status of a task a scripted model finished with commands it wrote itself: no
# recipe did it and nobody checked it, so it is not claimed, and not done as far as a
# script can tell (docs/agent.md, "Exit status"; tests/daemon/test_exit_codes.py).
UNCHECKED = 1


def write_config(text: str = NO_CONFIRM) -> Path:
    """The user's config.toml. By default "Did that do it?" is off, so each test types
    only the keys of what it is about (test_confirm.py tests the question itself).

    The recipe step is off unless the test sets ``ask.recipes``: a scripted model's replies
    are written for the loop it talks to, and every daemon would otherwise train a ranker
    in the background (test_any_model.py tests the recipe step through the daemon)."""
    if "recipes =" not in text:
        text = (
            text.replace("[ask]\n", '[ask]\nrecipes = "off"\n', 1)
            if "[ask]\n" in text
            else text + '\n[ask]\nrecipes = "off"\n'
        )
    path = Path(os.environ["SHELLAGENT_CONFIG_DIR"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def no_confirm_question(private_shellagent_dirs: Path) -> Path:
    return write_config()


@pytest.fixture(autouse=True)
def short_runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Socket paths are limited to 108 bytes: keep the runtime dir short."""
    base = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))
    runtime = base / "run"
    monkeypatch.setenv("SHELLAGENT_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("SHELLAGENT_BACKEND", raising=False)
    yield runtime
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def trained_ranker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, trained once for the run (what `shellagent recipes
    index` does after an install)."""
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import Ranker

    cache = tmp_path_factory.mktemp("ranker")
    Ranker.build(list(load([DATA_DIR]).recipes.values()), cache)
    return cache


@pytest.fixture
def recipes_on(trained_ranker: Path) -> str:
    """The recipe step on, its ranker ready in the test's cache; the config lines that
    turn it on (a test that writes its own config.toml includes them)."""
    shutil.copytree(trained_ranker, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    lines = '[ask]\nconfirm = false\nrecipes = "auto"\n'
    write_config(lines)
    return lines


@pytest.fixture
def daemon() -> Iterator[DaemonProc]:
    d = start_daemon()
    yield d
    stop(d)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    w.mkdir()
    return w


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a model script; returns the ``scripted:PATH`` spec to pass as the model."""
    counter = iter(range(1000))

    def write(*replies: Any) -> str:
        path = tmp_path / f"script{next(counter)}.json"
        path.write_text(json.dumps(list(replies)))
        return f"scripted:{path}"

    return write


@dataclass
class Run:
    """What an in-process client saw: exit code, stdout text, every event."""

    code: int
    out: str
    events: list[WireEvent] = field(default_factory=list)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def summary(self) -> Summary:
        return self.of(Summary)[0]


class RecordingUI(AskUI):
    """Records events; types the next chunk of ``keys`` into the pipe as each prompt opens."""

    def __init__(self, keys: list[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.events: list[WireEvent] = []
        self.keys = keys

    def _type_next(self) -> None:
        if not self.keys:
            raise AssertionError("a prompt opened that the test has no keys for")
        self.pt_input.send_text(self.keys.pop(0))

    def _key(self, message: str, keys: str) -> str:
        # A chunk the key prompt ignores (e.g. Enter) would wait forever: fail at once.
        if self.keys and self.keys[0].lower() not in keys and self.keys[0] not in ("\x03", "\x04"):
            raise AssertionError(f"{message.strip()!r} takes one of {keys!r}, not {self.keys[0]!r}")
        self._type_next()
        return super()._key(message, keys)

    def _line(self, message: str, default: str = "") -> str:
        self._type_next()
        return super()._line(message, default)

    def event(self, event: WireEvent) -> None:
        self.events.append(event)
        super().event(event)

    def approve(self, m: ApprovalNeeded) -> ApprovalReply:
        self.events.append(m)
        return super().approve(m)

    def review_changes(self, m: ChangesReady) -> ChangesDecision:
        self.events.append(m)
        return super().review_changes(m)

    def confirm(self, m: ConfirmRequest) -> ConfirmAnswer:
        self.events.append(m)
        return super().confirm(m)

    def choose(self, m: ChoiceRequest) -> int:
        self.events.append(m)
        return super().choose(m)


def ask_inprocess(
    task: str,
    model: str,
    cwd: Path,
    *,
    keys: list[str] | None = None,
    yes: bool = False,
    dry_run: bool = False,
    max_turns: int | None = None,
    apply: bool = False,
    continues: str | None = None,
) -> Run:
    """Run one task through the daemon; each prompt is answered by the next of ``keys``,
    typed through prompt-toolkit pipe input. ``keys=None``: nobody at a terminal."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    out = io.StringIO()
    with create_pipe_input() as pipe:
        ui = RecordingUI(
            list(keys or []),
            out=out,
            err=io.StringIO(),
            can_prompt=keys is not None,
            dry_run=dry_run,
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
        args = argparse.Namespace(
            task=task,
            cwd=str(cwd),
            model=model,
            dry_run=dry_run,
            yes=yes,
            apply=apply,
            json=False,
            max_turns=max_turns,
            continues=continues,
        )
        # run_on: the same client path as `ask` (a pick after "no" follows up at once)
        code = run_on(lambda: Connection(connect(socket_path())), args, ui)
    return Run(code, out.getvalue(), ui.events)


def ask_cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def shellagent_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellagent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def transcript_events(session: str) -> list[dict[str, Any]]:
    path = Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text().split("\n") if line]


def processes_matching(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in cmdline:
            found.append(int(entry.name))
    return found
