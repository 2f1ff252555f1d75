"""The option values every command shares are refused with one usage line, not a traceback."""

from __future__ import annotations

import pytest

from shellagent.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "tasks.jsonl", "--jobs", "0"], "argument --jobs: must be 1 or more"),
        (["eval", "tasks.jsonl", "--offset", "-1"], "argument --offset: must be 0 or more"),
        (["eval", "tasks.jsonl", "--limit", "x"], "argument --limit: 'x' is not a whole number"),
        (["tasks", "verify", "t.jsonl", "--jobs", "0"], "argument --jobs: must be 1 or more"),
        (["recipes", "test", "--jobs", "two"], "argument --jobs: 'two' is not a whole number"),
        (["env", "serve", "t.jsonl", "--idle-timeout", "0"], "must be more than 0"),
        (["env", "serve", "t.jsonl", "--command-timeout", "soon"], "'soon' is not a number"),
    ],
)
def test_a_bad_option_value_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_good_values_pass() -> None:
    from shellagent.cli.argtypes import count, positive_float, positive_int

    assert (positive_int("3"), count("0"), positive_float("0.5")) == (3, 0, 0.5)
