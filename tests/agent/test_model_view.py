"""What the model is shown is redacted like what is stored: command output (the real sandbox
and FakeShell), a value it showed once as a secret when it comes back alone, the worked
examples and a follow-up's digest in the opening messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent.examples import Example, Step
from shellagent.agent.followup import Earlier
from shellagent.agent.loop import opening
from shellagent.agent.prompts import Environment
from shellagent.testing import FakeShell

from .conftest import Run, cmd, done

PIECE = 12  # no run of this many characters of a secret may reach the model

# A credentials file as an allowed `cat` prints it: a token by its shape, a password by its
# name, a base64-wrapped key and an Oracle login; and a line that is no secret.
_GITHUB = "ghp_" + "Q7vLm2Xc9RtB4nKp8WzYd3Hs6Jf1Ga5Ue0Ti"
_PASSWORD = "Hunter-Gale-4471"
_WRAPPED = "QVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPXE4THZSMm5XNy9ZcEtjRDVmTWIrWnMwSGdVZTROYVRpOW9Rdw=="
_ORACLE = "Sable-Crest-3309"
CREDENTIALS = (
    f"github: {_GITHUB}\n"
    f"DB_PASSWORD={_PASSWORD}\n"
    f"aws_blob: {_WRAPPED}\n"
    f"sqlplus scott/{_ORACLE}@//db.acme.local:1521/ORCL\n"
    "region: eu-west-1\n"
)
SECRETS = (_GITHUB, _PASSWORD, _WRAPPED, _ORACLE)


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def shown_to_model(run: Run) -> str:
    return "\n".join(m["content"] for call in run.backend.calls for m in call)


@pytest.fixture
def credentials_shell(request: pytest.FixtureRequest, workspace: Path) -> Any:
    """The real sandbox reading the file, or FakeShell answering with its text."""
    (workspace / "creds.txt").write_text(CREDENTIALS)
    if request.param == "sandbox":
        return request.getfixturevalue("sandbox")
    return FakeShell(
        {"cat creds.txt": (CREDENTIALS, 0), f"echo {_PASSWORD}": (f"{_PASSWORD}\n", 0)},
        cwd=str(workspace),
    )


@pytest.mark.parametrize("credentials_shell", ["sandbox", "fake"], indirect=True)
def test_the_model_never_sees_a_secret_an_allowed_cat_printed(
    run_agent: Callable[..., Run], credentials_shell: Any
) -> None:
    run = run_agent([cmd("cat creds.txt", "read"), done("read it")], credentials_shell)
    assert run.outcome.reason == "finished"
    assert run.outcome.commands[0].output == CREDENTIALS  # the shell did print them
    seen = shown_to_model(run)
    assert "region: eu-west-1" in seen  # the output reached the model
    assert [s for s in SECRETS if leaked(s, seen)] == []
    observation = run.observations()[0]
    assert "DB_PASSWORD=[REDACTED:password]" in observation
    assert "[REDACTED:github_token]" in observation


@pytest.mark.parametrize("credentials_shell", ["sandbox", "fake"], indirect=True)
def test_a_secret_shown_once_is_hidden_when_a_later_output_repeats_it_alone(
    run_agent: Callable[..., Run], credentials_shell: Any
) -> None:
    replies = [cmd("cat creds.txt"), cmd(f"echo {_PASSWORD}"), done("ok")]
    run = run_agent(replies, credentials_shell)
    assert run.outcome.commands[1].output == f"{_PASSWORD}\n"
    assert run.observations()[1] == "exit 0\n[REDACTED:password]"
    assert not leaked(_PASSWORD, shown_to_model(run).replace(f"echo {_PASSWORD}", ""))


def test_worked_examples_and_a_follow_ups_digest_reach_the_model_redacted() -> None:
    example = Example(
        task="show the deploy credentials",
        steps=(Step("cat deploy.env", f"API_TOKEN={_GITHUB}\nDB_PASSWORD={_PASSWORD}\n"),),
        answer=f"the token is {_GITHUB}",
    )
    earlier = Earlier(
        session="s1",
        text=f"Earlier task: log in\n  $ sqlplus scott/{_ORACLE}@//db:1521/ORCL   (exit 0)",
        tasks=1,
        dropped=0,
        changes="none",
        cwd=None,
    )
    env = Environment(cwd="/root", anywhere_writable=True)
    system, user = opening(env, "list the files", [example], earlier=earlier)
    assert "cat deploy.env" in system and "sqlplus scott/" in user
    assert [s for s in SECRETS if leaked(s, system + user)] == []


def test_a_listing_told_back_after_an_invented_path_is_redacted_too(
    run_agent: Callable[..., Run], sandbox: Any, workspace: Path
) -> None:
    # every observation goes through the redactor, not only a command's output: here the
    # directory listing the model is given when it names a file that does not exist
    (workspace / f"{_GITHUB}.txt").write_text("x\n")
    run = run_agent([cmd("cat ./no-such-file.txt"), done("gave up")], sandbox)
    told = run.observations()[0]
    assert told.startswith("Not run: ./no-such-file.txt does not exist here.")
    assert "[REDACTED:github_token].txt" in told
    assert not leaked(_GITHUB, shown_to_model(run))
