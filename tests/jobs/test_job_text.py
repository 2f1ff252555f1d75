"""A job's name and values can never add lines to a unit file, a crontab or the job TOML
(security review H4): names are one line of visible text, scheduler files carry no name
at all, and every value is written with its format's own quoting."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shellagent.agent import Oversight, Parts, Recording, run_task
from shellagent.chars import kind
from shellagent.errors import ConfigError, EnvironmentProblem, InputError
from shellagent.events import ChatMessage
from shellagent.jobs import Installer, Schedule, all_jobs, install, load, make_job
from shellagent.jobs.scheduler import CronScheduler, cron_word, unit_word
from shellagent.jobs.store import dumps, jobs_dir, toml_string
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend
from tests.jobs.conftest import shellagent
from tests.jobs.test_agent_schedule import BACKUP, DONE, Person

INJECTION = "backup\n[Service]\nExecStartPre=/bin/sh -c 'id>/tmp/P'"
BAD_NAMES = {
    "10 KB": "n" * 10240,
    "newline": INJECTION,
    "ANSI escape": "\x1b[2K\rbackup",
    "carriage return": "x\rbackup",
    "bidi override": "backup\u202eexe.txt",
    "zero-width space": "back\u200bup",
}
VISIBLE_BUT_SPECIAL = "50% off $HOME \"quoted\" \\back 'q' ; rm -rf ~ %h ${HOME}"


def no_hidden(text: str) -> bool:
    return all(kind(c) in (None, "newline") for c in text)


@pytest.mark.parametrize("what", sorted(BAD_NAMES))
def test_jobs_add_refuses_a_bad_name_in_one_line_and_writes_nothing(
    what: str, user_home: Path, fake_systemd: Path
) -> None:
    proc = shellagent(
        "jobs", "add", BAD_NAMES[what], "--every", "day", "-y", "--", "true", cwd=user_home
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: the job name ") and proc.stderr.count("\n") == 1
    assert len(proc.stderr) < 300 and no_hidden(proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert list(jobs_dir().iterdir()) == []
    assert not Path(os.environ["SHELLAGENT_SYSTEMD_UNIT_DIR"]).exists()
    assert not fake_systemd.exists()


def test_a_nul_in_a_name_or_a_command_is_refused(user_home: Path) -> None:
    with pytest.raises(InputError, match=r"the job name contains a control character \(U\+0000\)"):
        make_job("back\0up", ["true"], Schedule.parse("daily"), workdir=user_home, writable=[])
    with pytest.raises(InputError, match="command 1 contains a NUL byte"):
        make_job("backup", ["tr\0ue"], Schedule.parse("daily"), workdir=user_home, writable=[])
    with pytest.raises(InputError, match="not valid UTF-8"):
        make_job("backup", ["ls \udcff"], Schedule.parse("daily"), workdir=user_home, writable=[])


def test_a_command_line_that_is_not_utf8_is_an_error_not_a_traceback(
    user_home: Path, fake_crontab: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"shellagent",
            b"jobs",
            b"add",
            b"x",
            b"--every",
            b"day",
            b"-y",
            b"--",
            b"ls \xff",
        ],
        capture_output=True,
        cwd=user_home,
        timeout=60,
    )
    assert proc.returncode == 2 and b"not valid UTF-8" in proc.stderr
    assert b"Traceback" not in proc.stderr


def converse(work: Path, schedule_reply: str) -> MemorySink:
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=work), timeout=30) as shell:
        run_task(
            "back up Documents weekly",
            Parts(
                backend=ScriptedBackend([BACKUP, schedule_reply, DONE]),
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
            ),
            Oversight(approver=Person(), job_installer=Installer()),
            Recording(sink=sink),
        )
    return sink


def test_the_review_repro_a_model_naming_a_job_with_unit_lines_installs_nothing(
    user_home: Path, fake_systemd: Path
) -> None:
    import json

    units = Path(os.environ["SHELLAGENT_SYSTEMD_UNIT_DIR"])
    injected = json.dumps({"every": "week", "on": "sun", "at": "03:00", "name": INJECTION})
    sink = converse(user_home / "work", injected)
    assert all_jobs() == ([], []) and not units.exists()
    told = [e.content for e in sink.of_type(ChatMessage) if e.role == "user"]
    assert any("the job name contains a newline" in text for text in told)
    # Positive control: the same conversation with a plain name installs the timer.
    clean = json.dumps({"every": "week", "on": "sun", "at": "03:00", "name": "backup"})
    converse(user_home / "work", clean)
    assert len(all_jobs()[0]) == 1 and len(list(units.iterdir())) == 2


def test_scheduler_files_never_carry_the_name_and_systemd_reads_them(
    user_home: Path, fake_systemd: Path
) -> None:
    job = make_job(
        VISIBLE_BUT_SPECIAL,
        ["true"],
        Schedule.parse("weekly", "03:00", "sun"),
        workdir=user_home,
        writable=[],
    )
    install(job)
    units = Path(os.environ["SHELLAGENT_SYSTEMD_UNIT_DIR"])
    texts = {p.name: p.read_text() for p in units.iterdir()}
    assert len(texts) == 2
    for text in texts.values():
        assert not set("%$\"';\\~{}") & set(text)  # none of the name's own characters
        description = text.splitlines()[1]
        assert description in (
            f"Description=shellagent job {job.id}",
            f"Description=shellagent job {job.id}: every Sunday at 03:00",
        )
        assert re.fullmatch(r"(\[[A-Za-z]+\]\n([A-Za-z]+=[^\n]*\n)*\n?)+", text), text
    assert load(job.id).name == VISIBLE_BUT_SPECIAL  # the name lives in the job file only
    verify = shutil.which("systemd-analyze")
    if verify is None:
        pytest.skip("systemd-analyze is not installed")
    for path in units.iterdir():
        proc = subprocess.run([verify, "verify", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0 and "ignoring" not in proc.stderr.lower(), proc.stderr


@pytest.fixture
def odd_python(tmp_path: Path) -> Path:
    """The interpreter under a path with every character unit files treat specially."""
    path = tmp_path / "py th%on$x [1];*"
    path.symlink_to(Path(sys.executable).resolve())
    return path


def test_unit_quoting_is_what_systemd_itself_reads(odd_python: Path, tmp_path: Path) -> None:
    verify = shutil.which("systemd-analyze")
    if verify is None:
        pytest.skip("systemd-analyze is not installed")
    from shellagent.jobs.scheduler import exec_line

    def check(line: str) -> subprocess.CompletedProcess[str]:
        unit = tmp_path / "probe.service"
        unit.write_text(f"[Service]\nType=oneshot\n{line}\n")
        return subprocess.run([verify, "verify", str(unit)], capture_output=True, text=True)

    value = "/tmp/a b%h$HOME\"q'\\z"
    env = check(f"Environment={unit_word('SHELLAGENT_CACHE_DIR=' + value)}\nExecStart=/bin/true")
    assert env.returncode == 0 and env.stderr == "", env.stderr
    # systemd finds the executable only if it unquoted the path exactly as written
    found = check(f"ExecStart={exec_line([str(odd_python), '-c', 'print(1)'])}")
    assert found.returncode == 0, found.stderr
    # Positive control: shell quoting (what the units used before) is not systemd's.
    wrong = check(f"ExecStart={shlex.join([str(odd_python), '-c', 'print(1)'])}")
    assert wrong.returncode != 0
    # systemd refuses quotes and backslashes in an executable's name, and names the path it
    # read: exactly the one written, so the escaping of those two is right as well.
    for odd in ('/tmp/a"b', "/tmp/a\\b", "/tmp/a'b\\\""):
        refused = check(f"ExecStart={unit_word(odd)}")
        assert f"special characters: {odd}\n" in refused.stderr, refused.stderr
        with pytest.raises(EnvironmentProblem, match="quote or a backslash"):
            exec_line([odd])


def test_variables_with_control_characters_are_refused_before_anything_is_written(
    user_home: Path, fake_systemd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_CACHE_DIR", "/tmp/x\n[Service]\nExecStartPre=/bin/id")
    job = make_job("backup", ["true"], Schedule.parse("daily"), workdir=user_home, writable=[])
    with pytest.raises(EnvironmentProblem, match="SHELLAGENT_CACHE_DIR holds a control"):
        install(job)
    assert list(jobs_dir().iterdir()) == []
    assert not Path(os.environ["SHELLAGENT_SYSTEMD_UNIT_DIR"]).exists()
    with pytest.raises(EnvironmentProblem):
        CronScheduler().line(job)


def cron_command(line: str) -> str:
    """What cron hands to the shell for ``line`` (crontab(5)): the five time fields off,
    each ``\\%`` becomes ``%``, and the command ends at the first bare ``%``."""
    command = line.split(None, 5)[5]
    out: list[str] = []
    escaped = False
    for ch in command:
        if escaped:
            if ch == "%":
                out[-1] = "%"
            else:
                out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif ch == "%":
            break
        else:
            out.append(ch)
    return "".join(out)


def test_a_crontab_line_reads_back_as_exactly_the_argv_and_variables(
    user_home: Path, fake_crontab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = "/tmp/50% off/$HOME 'q' \"d\""
    monkeypatch.setenv("SHELLAGENT_CACHE_DIR", value)
    job = make_job(
        VISIBLE_BUT_SPECIAL, ["true"], Schedule.parse("daily"), workdir=user_home, writable=[]
    )
    line = CronScheduler().line(job)
    assert "\n" not in line and "50%" not in line.replace("\\%", "")
    words = shlex.split(cron_command(line), comments=True)
    assert f"SHELLAGENT_CACHE_DIR={value}" in words
    start = words.index(sys.executable)
    assert words[start:] == [sys.executable, "-m", "shellagent", "jobs", "run", job.id] + [
        ">/dev/null",
        "2>&1",
    ]
    assert cron_command("0 1 * * * echo 5%x") == "echo 5"  # positive control: bare % cuts
    with pytest.raises(EnvironmentProblem, match="backslash before a %"):
        cron_word("a\\%b")


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200))
def test_toml_strings_read_back_exactly_and_show_nothing_hidden(value: str) -> None:
    written = toml_string(value)
    assert tomllib.loads(f"x = {written}")["x"] == value
    assert "\n" not in written and all(kind(c) is None for c in written)


def test_a_job_file_holds_one_key_per_line_whatever_the_values(user_home: Path) -> None:
    commands = ["printf 'a\\n' > x\n]\nevil = true", 'echo \x1b[31m \u202e \u2028 "\\']
    job = make_job(
        VISIBLE_BUT_SPECIAL, commands, Schedule.parse("daily"), workdir=user_home, writable=[]
    )
    text = dumps(job)
    assert tomllib.loads(text)["commands"] == commands
    assert no_hidden(text) and "evil" not in [ln.split(" ")[0] for ln in text.splitlines()]
    assert text.splitlines()[0] == f"# shellagent job {job.id}"


def test_a_hand_edited_name_with_a_newline_is_a_config_error_naming_the_file(
    user_home: Path, fake_crontab: Path
) -> None:
    job = make_job("backup", ["true"], Schedule.parse("daily"), workdir=user_home, writable=[])
    path, *_ = install(job)
    text = Path(str(path)).read_text().replace('name = "backup"', 'name = "a\\n[Service]\\u001b"')
    Path(str(path)).write_text(text)
    with pytest.raises(ConfigError, match=r"\.toml: name: the job name contains a newline"):
        load(job.id)
    listed = shellagent("jobs", "list", cwd=user_home)
    assert listed.returncode == 0 and "warning:" in listed.stderr and no_hidden(listed.stderr)
    ran = shellagent("jobs", "run", job.id, cwd=user_home)
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr
