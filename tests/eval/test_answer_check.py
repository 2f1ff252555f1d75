"""The answer check: a task's check sees the agent's final answer and its last output."""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

import pytest

from shellagent.eval import EvalAgent, NothingAgent, RunConfig, Task, TaskResult, run_one

from .agents_for_tests import CommandsAgent
from .conftest import make_task

SETUP = (
    "mkdir -p /root/Downloads",
    "head -c 300000 /dev/zero > /root/Downloads/movie.mkv",
    "head -c 2000 /dev/zero > /root/Downloads/notes.txt",
)
LARGEST = make_task(
    "largest",
    task="Which file in ~/Downloads is the largest?",
    setup=SETUP,
    check='grep -qF movie.mkv "$ANSWER" && ! grep -qF notes.txt "$ANSWER"',
)


@pytest.fixture
def config(tmp_path: Path) -> RunConfig:
    return RunConfig(transcripts_dir=tmp_path / "transcripts", setup_timeout=20.0)


def run(agent: EvalAgent, config: RunConfig, task: Task = LARGEST) -> TaskResult:
    return run_one(task, agent, config, threading.Event())


def test_a_right_answer_passes_and_is_recorded(config: RunConfig) -> None:
    agent = CommandsAgent("ls -S ~/Downloads | head -1", answer="The largest is movie.mkv.")
    result = run(agent, config)
    assert result.status == "solved" and result.answer == "The largest is movie.mkv."


@pytest.mark.parametrize(
    "answer",
    ["notes.txt", "movie.mkv, notes.txt", "I could not tell", "Which file in ~/Downloads?"],
)
def test_a_wrong_or_hedged_answer_fails(config: RunConfig, answer: str) -> None:
    result = run(CommandsAgent("ls -S ~/Downloads", answer=answer), config)
    assert result.status == "failed" and result.answer == answer


def test_the_do_nothing_agent_fails_an_answer_checked_task(config: RunConfig) -> None:
    assert run(NothingAgent(), config).status == "failed"


def test_an_agent_that_stops_without_finishing_has_no_answer(config: RunConfig) -> None:
    agent = CommandsAgent("ls -S ~/Downloads", answer="movie.mkv", finish=False)
    result = run(agent, config)
    assert result.status == "failed" and result.answer == ""


def test_before_the_agent_acts_both_files_exist_and_are_empty(config: RunConfig) -> None:
    task = make_task(check='[ -f "$ANSWER" ] && [ ! -s "$ANSWER" ] && [ ! -s "$LAST_OUTPUT" ]')
    result = run(CommandsAgent("true"), config, task)
    assert (result.status, result.invalid_reason) == ("invalid", "already satisfied")


def test_the_last_output_is_the_output_of_the_agents_last_command(config: RunConfig) -> None:
    task = make_task(
        task="Show me the first line of /srv/motd.",
        setup=("mkdir -p /srv", "printf 'hello there\\nsecond\\n' > /srv/motd"),
        check='grep -qx "hello there" "$LAST_OUTPUT"',
    )
    assert run(CommandsAgent("head -1 /srv/motd"), config, task).status == "solved"
    # The right line, then a command that prints nothing: the last output is empty.
    assert run(CommandsAgent("head -1 /srv/motd", "true"), config, task).status == "failed"


def test_answer_text_reaches_the_check_verbatim_and_is_never_run(config: RunConfig) -> None:
    answer = 'it\'s $(touch /tmp/ran) `touch /tmp/ran` "quoted" \\ \n second line ; exit 0'
    check = (
        f'printf %s {shlex.quote(answer)} | cmp -s - "$ANSWER" && [ ! -e /tmp/ran ]'
        " && ! grep -q 'exit 0$' \"$LAST_OUTPUT\""
    )
    result = run(CommandsAgent("echo listing", answer=answer), config, make_task(check=check))
    assert result.status == "solved"


def test_files_or_variables_the_agent_prepares_cannot_stand_in_for_its_answer(
    config: RunConfig,
) -> None:
    agent = CommandsAgent(
        "echo movie.mkv > /tmp/fake; export ANSWER=/tmp/fake LAST_OUTPUT=/tmp/fake",
        "mkdir -p /tmp/tmp.fake; echo movie.mkv > /tmp/tmp.fake/answer",
        answer="notes.txt",
    )
    assert run(agent, config).status == "failed"
    planted = CommandsAgent("echo movie.mkv > /tmp/fake; export ANSWER=/tmp/fake", answer="x")
    assert run(planted, config).status == "failed"


def test_a_check_that_ignores_the_answer_works_as_before(config: RunConfig) -> None:
    task = make_task(check="[ -f /tmp/done ]")
    assert run(CommandsAgent("touch /tmp/done", answer="nonsense"), config, task).status == (
        "solved"
    )
