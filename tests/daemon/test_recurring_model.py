"""The mission's own example with the embedded model, in a real terminal: `ask` a recurring
backup from a fresh home, answer its prompts as a person would (tmux keys, never -y), and
the job ends up in the system's scheduler; `shellagent jobs run ID` then backs the folder
up. Loads the model: run under ``flock /tmp/shellagent-model.lock pytest -m model …``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from tests.daemon.conftest import write_config

pytestmark = [
    pytest.mark.model,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]

TODAY = f"{date.today():%F}"
CASES = [
    # task, cron schedule, the file its run makes (under ~/Backups), a file that must be in it
    ("back up Documents weekly", "0 9 * * 1", f"Documents-{TODAY}.tar.gz", "Documents/notes.md"),
    ("every day at 18:00 copy todo.txt to ~/Backups", "0 18 * * *", f"todo.txt.{TODAY}", None),
    (
        "Please make a compressed backup of my Documents folder every Sunday at 8pm and keep "
        "the last 4.",
        "0 20 * * 0",
        f"Documents-{TODAY}.tar.gz",
        "Documents/letters/landlord.txt",
    ),
]


def _scheduler() -> str | None:
    """Why no scheduler can exist here, or None."""
    from shellagent.errors import EnvironmentProblem
    from shellagent.jobs import detect

    try:
        detect()
    except EnvironmentProblem as exc:
        return f"no scheduler here ({exc.message}); .ci/run installs cron"
    return None


@pytest.fixture(scope="module")
def trained_ranker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, as `install.sh` leaves it in a fresh account's cache."""
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import Ranker

    cache = tmp_path_factory.mktemp("ranker")
    recipes = list(load([DATA_DIR]).recipes.values())
    Ranker.build(recipes, cache)
    return Ranker.cache_path(recipes, cache)


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, trained_ranker: Path) -> Path:
    """A fresh home: a Documents folder holding a few files, a todo list."""
    why_not = _scheduler()
    if why_not:
        pytest.skip(why_not)
    home = outside_tmp / "home"
    (home / "Documents/letters").mkdir(parents=True)
    (home / "Documents/letters/landlord.txt").write_text("Dear landlord,\n")
    (home / "Documents/notes.md").write_text("# notes\nbuy milk\n")
    (home / "Documents/budget.csv").write_text("item,amount\nrent,850\n")
    (home / "todo.txt").write_text("call mum\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SHELLAGENT_SCHEDULER", raising=False)
    cache = Path(os.environ["SHELLAGENT_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy(trained_ranker, cache / trained_ranker.name)
    write_config('[ask]\nrecipes = "auto"\n')  # as installed: "did that do it?" is asked
    return home


def shellagent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellagent", *args],
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )  # fmt: skip


class Terminal:
    """`ask` in a tmux window; answers each prompt with its key as it opens."""

    def __init__(self, home: Path, task: str) -> None:
        self.name = f"sa-{uuid.uuid4().hex[:6]}"
        self.status = home.parent / "status"
        env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("SHELLAGENT_")]
        env += [f"HOME={home}", f"PATH={os.environ['PATH']}"]
        command = (
            f"{sys.executable} -m shellagent.cli.ask {json.dumps(task)}; "
            f"echo $? > {self.status}; sleep 600"
        )
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "160", "-y", "50",
             *[x for kv in env for x in ("-e", kv)], "-c", str(home), command],
            check=True,
        )  # fmt: skip

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name, "-S", "-400"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    def answer(self, keys: dict[str, str], timeout: float = 900) -> str:
        """Type ``keys[prompt]`` at each prompt as it opens, until `ask` exits."""
        answered = 0
        deadline = time.monotonic() + timeout
        while not self.status.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
            lines = [line for line in self.screen().splitlines() if line.strip()]
            last = lines[-1] if lines else ""
            key = next((k for prompt, k in keys.items() if prompt in last), None)
            if key is not None and len(lines) != answered:
                answered = len(lines)
                subprocess.run(["tmux", "send-keys", "-t", self.name, key], check=True)
        assert self.status.exists(), f"ask did not end:\n{self.screen()}"
        return self.screen()

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def jobs_removed(home: Path) -> Iterator[None]:
    """The real scheduler's entries this test made are removed afterwards."""
    yield
    listed = shellagent("jobs", "list", "--json", cwd=home).stdout
    for line in listed.splitlines():
        shellagent("jobs", "rm", json.loads(line)["id"], cwd=home)
    shellagent("daemon", "stop", cwd=home)


@pytest.mark.parametrize(("task", "cron", "made", "inside"), CASES, ids=["weekly", "18h", "own"])
def test_a_recurring_backup_asked_in_a_terminal_becomes_a_job_that_backs_up(
    home: Path, jobs_removed: None, task: str, cron: str, made: str, inside: str | None
) -> None:
    terminal = Terminal(home, task)
    try:
        screen = terminal.answer(
            {
                "run it?": "y",
                "install this job?": "y",
                "apply these changes?": "n",  # the first run's copy goes; the job makes its own
                "did that do it?": "y",
            }
        )
    finally:
        terminal.close()
    assert "install this job?" in screen, screen
    assert "Scheduled job" in screen and terminal.status.read_text().strip() == "0", screen
    (job,) = [
        json.loads(line)
        for line in shellagent("jobs", "list", "--json", cwd=home).stdout.splitlines()
    ]
    table = (
        subprocess.run(["crontab", "-l"], capture_output=True, text=True).stdout
        if shutil.which("crontab")
        else ""
    )
    if table:  # cron, not a systemd user timer
        (line,) = [ln for ln in table.splitlines() if ln.endswith(f"# shellagent-job:{job['id']}")]
        assert line.startswith(f"{cron} "), line
    assert not (home / "Backups" / made).exists()  # the change set was discarded

    ran = shellagent("jobs", "run", job["id"], cwd=home)
    assert ran.returncode == 0, ran.stderr
    backup = home / "Backups" / made
    if inside is None:
        assert backup.read_text() == (home / "todo.txt").read_text()
    else:
        with tarfile.open(backup) as packed:
            assert inside in packed.getnames()
