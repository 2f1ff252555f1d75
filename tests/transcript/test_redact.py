from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shellagent import paths
from shellagent.events import Execution, ModelTurn
from shellagent.transcript import RedactingFilter, Redactor, read_transcript

from .scripted import Player, Turn

# Realistic but fake secrets, one per shape.
SHAPES = {
    "anthropic_key": "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHh",
    "openai_key": "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg",
    "github_token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "gitlab_token": "glpat-xY7zQ2wE9rT4uI8oP1aS",
    "slack_token": "xoxb-2048-4096-AbCdEfGhIjKlMnOp",
    "huggingface_token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "aws_access_key_id": "AKIA2E0A8F3B244C9986",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
}
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_token_shapes_become_named_placeholders(kind: str) -> None:
    text = f"found {SHAPES[kind]} in config"
    assert Redactor().redact(text) == f"found [REDACTED:{kind}] in config"


def test_private_key_block_is_redacted_whole_and_text_after_it_kept() -> None:
    assert Redactor().redact(f"{PEM}\nnext line") == "[REDACTED:private_key]\nnext line"


def test_private_key_cut_off_by_output_truncation_is_still_redacted() -> None:
    cut = PEM.split("-----END")[0]
    assert "b3BlbnNz" not in Redactor().redact(cut)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2hunter2 user=bob", "password=[REDACTED:password] user=bob"),
        ('DB_PASSWORD="s3cr3t-value"', 'DB_PASSWORD="[REDACTED:password]"'),
        ("token: abcdef123456", "token: [REDACTED:secret]"),
        ('{"api_key": "zq8Xw2Lk9Vb4"}', '{"api_key": "[REDACTED:secret]"}'),
        (
            "aws_secret_access_key = q3Jx8LtR2vWn/Y7pKcD5fMb+Zs0HgUe4NaTi9oQw",
            "aws_secret_access_key = [REDACTED:aws_secret_access_key]",
        ),
        (
            "git clone https://bob:pa55word@github.com/x/y",
            "git clone https://bob:[REDACTED:url_password]@github.com/x/y",
        ),
        (
            "Authorization: Bearer abcdefghijklmnop1234",
            "Authorization: Bearer [REDACTED:bearer_token]",
        ),
    ],
)
def test_assignments_keep_the_name_and_lose_the_value(text: str, expected: str) -> None:
    assert Redactor().redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens: 1000",
        "export API_KEY=$API_KEY",
        "passwordless=true",
        "PWD=/home/user",
        "git log 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "ls -la /etc && du -sh /var/log",
    ],
)
def test_ordinary_shell_text_is_left_alone(text: str) -> None:
    assert Redactor().redact(text) == text


def test_values_of_secret_environment_variables_are_redacted_by_name() -> None:
    env = {
        "MYTOKEN": "plainvalue-without-shape",
        "DB_PASSWORD": "correct horse battery",
        "AWS_REGION": "eu-west-1x",
        "HOME": "/home/someone",
        "SHORT_TOKEN": "abc",
    }
    redactor = Redactor.from_environment(env)
    text = "got plainvalue-without-shape and correct horse battery in eu-west-1x"
    assert redactor.redact(text) == (
        "got [REDACTED:env:MYTOKEN] and [REDACTED:env:DB_PASSWORD] in eu-west-1x"
    )


def test_configured_secrets_are_redacted_whatever_their_shape() -> None:
    redactor = Redactor.from_environment({}, secrets={"my-wifi-passphrase": "wifi"})
    assert redactor.redact("psk my-wifi-passphrase") == "psk [REDACTED:secret_wifi]"


def test_same_secret_always_gets_the_same_placeholder() -> None:
    r = Redactor()
    token = SHAPES["github_token"]
    assert r.redact(token) == r.redact(f"{token}") == "[REDACTED:github_token]"


@given(
    prefix=st.text(alphabet=st.characters(codec="ascii"), max_size=40),
    suffix=st.text(alphabet=st.characters(codec="ascii"), max_size=40),
    kind=st.sampled_from(sorted(SHAPES)),
)
def test_a_known_token_never_survives_whatever_surrounds_it(
    prefix: str, suffix: str, kind: str
) -> None:
    # Separate the token from word characters, as it would be in real output.
    text = f"{prefix} {SHAPES[kind]}\n{suffix}"
    assert SHAPES[kind] not in Redactor().redact(text)


def test_log_records_are_redacted_before_they_are_formatted(tmp_path: Path) -> None:
    logfile = tmp_path / "daemon.log"
    handler = logging.FileHandler(logfile)
    handler.addFilter(RedactingFilter(Redactor()))
    logger = logging.getLogger("shellagent.test.redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("command output: %s", SHAPES["openai_key"])
        try:
            raise RuntimeError(SHAPES["slack_token"])
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = logfile.read_text()
    assert "[REDACTED:openai_key]" in text and "[REDACTED:slack_token]" in text
    assert SHAPES["openai_key"] not in text and SHAPES["slack_token"] not in text


def test_secret_in_a_reply_also_drops_its_token_ids(record_session: Player) -> None:
    path = record_session(
        "leak",
        [Turn(cmd=f"echo {SHAPES['github_token']}", token_ids=[1, 2, 3], logprobs=[-0.1] * 3)],
    )
    turn = read_transcript(path).events[3]
    assert isinstance(turn, ModelTurn) and turn.redacted is True
    assert turn.token_ids is None and turn.logprobs is None


def test_session_printing_tokens_env_secrets_and_env_file_leaves_no_secret_on_disk(
    record_session: Player, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checklist G6/G8: echo a token, printenv a secret variable, cat a .env file."""
    env_secret = "Zq8!local-only-value-42"
    monkeypatch.setenv("MYTOKEN", env_secret)
    workdir = tmp_path / "project"
    workdir.mkdir()
    dotenv = {
        "STRIPE_KEY": "rk_live_51Habcdefghijklmnop",
        "DB_PASSWORD": "p4ss-w0rd-in-dotenv",
        "GITHUB_TOKEN": SHAPES["github_token"],
        "SESSION_SECRET": "f00dfacecafebeef0123",
    }
    (workdir / ".env").write_text("".join(f"{k}={v}\n" for k, v in dotenv.items()))
    (workdir / "id_ed25519").write_text(PEM + "\n")

    # The daemon's log goes through the same redactor.
    logfile = paths.ensure_private_dir(paths.data_dir()) / "shellagent.log"
    handler = logging.FileHandler(logfile)
    handler.addFilter(RedactingFilter(Redactor.from_environment()))
    logger = logging.getLogger("shellagent.test.g6")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        path = record_session(
            "show me my credentials",
            [
                Turn(cmd=f"echo {SHAPES['anthropic_key']}", why="echo a key"),
                Turn(cmd="printenv MYTOKEN"),
                Turn(cmd="cat .env"),
                Turn(cmd="cat id_ed25519"),
                Turn(cmd=f"curl -s https://admin:{env_secret}@example.invalid/ || true"),
                Turn(done=f"Your token is {env_secret}"),
            ],
            cwd=workdir,
            env=dict(os.environ),
        )
        for event in read_transcript(path).events:
            logger.info("event %s", event)
    finally:
        logger.removeHandler(handler)
        handler.close()

    # The commands really printed the secrets: the model saw them.
    secrets = [SHAPES["anthropic_key"], env_secret, *dotenv.values(), "b3BlbnNzaC1rZXktdjEA"]
    files = [p for p in paths.data_dir().rglob("*") if p.is_file()]
    assert path in files and logfile in files
    for file in files:
        data = file.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f"{secret!r} leaked into {file}"
        assert file.stat().st_mode & 0o777 == 0o600 or file == logfile
    text = path.read_text()
    for placeholder in ("anthropic_key", "env:MYTOKEN", "password", "github_token", "private_key"):
        assert f"[REDACTED:{placeholder}]" in text
    for directory in (paths.data_dir(), paths.transcripts_dir()):
        assert directory.stat().st_mode & 0o777 == 0o700


def test_secrets_listed_in_the_config_dir_never_reach_the_disk(tmp_path: Path) -> None:
    from shellagent import paths
    from shellagent.transcript import Redactor, TranscriptWriter

    config = paths.ensure_private_dir(paths.config_dir())
    (config / "secrets").write_text("# house alarm\nalarm-code-8812\n")
    writer = TranscriptWriter(redactor=Redactor.from_environment(environ={}))
    writer.write(Execution(turn=1, command="cat codes", output="alarm-code-8812\n", exit_code=0))
    writer.close()
    text = writer.path.read_text()
    assert "alarm-code-8812" not in text and "[REDACTED:configured_secret]" in text


def test_the_redaction_package_exports_a_sorted_complete_surface_on_the_stdlib_alone() -> None:
    import shellagent.redaction as redaction

    assert redaction.__all__ == sorted(redaction.__all__)
    for name in redaction.__all__:
        assert hasattr(redaction, name), name
    # The sandbox cuts output with it: it must not pull in the transcript package.
    code = (
        "import sys, shellagent.redaction; print(sorted(m for m in sys.modules"
        " if m.startswith(('shellagent.transcript', 'pydantic', 'typing_extensions'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
