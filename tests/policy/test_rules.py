"""Policy files: precise errors, user overrides on top, examples that test themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.errors import ConfigError
from shellagent.paths import config_dir
from shellagent.policy import (
    PolicyEngine,
    check_examples,
    default_policy_path,
    load_policy,
    preset_path,
)
from tests.policy.conftest import HOME, STATE, WORKSPACE

RULE = """
[[rule]]
id = "ls"
decision = "allow"
reason = "lists"
program = ["ls"]
"""


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["default", "strict", "permissive"])
def test_every_shipped_preset_passes_its_own_examples(name: str) -> None:
    count, failures = check_examples(load_policy([preset_path(name)]))
    assert count > 0
    assert [f.describe() for f in failures] == []


def test_a_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'version = 1\n\n[[rule]]\nid = "x\nreason = 1\n')
    with pytest.raises(ConfigError) as info:
        load_policy([path])
    assert info.value.path == str(path)
    assert info.value.line == 4
    assert str(path) + ":4" in info.value.message


def test_a_schema_error_points_at_the_offending_key(tmp_path: Path) -> None:
    text = (
        "version = 1\n"
        + RULE
        + '\n[[rule]]\nid = "y"\ndecision = "maybe"\nreason = "r"\nprogram = ["x"]\n'
    )
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_policy([path])
    assert info.value.line == text.splitlines().index('decision = "maybe"') + 1
    assert "rule.1.decision" in info.value.message


def test_an_unknown_key_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, RULE + 'programme = ["rm"]\n')
    with pytest.raises(ConfigError, match="programme"):
        load_policy([path])


def test_an_unknown_path_class_is_rejected_with_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, RULE + 'writes = ["sistem"]\n')
    with pytest.raises(ConfigError, match="unknown path class 'sistem'"):
        load_policy([path])


def test_a_user_override_replaces_a_rule_by_id(tmp_path: Path) -> None:
    override = write(
        tmp_path,
        """
[[rule]]
id = "processes"
decision = "allow"
reason = "I stop my own processes often"
program = ["kill"]

[program.kill]
options = ["-s SIGNAL", "-l", "-L"]
operands = ["text"]
numeric_options = true
""",
    )
    engine = PolicyEngine.load([default_policy_path(), override], home=HOME, workspace=WORKSPACE)
    assert engine.check("kill 1234", STATE).decision == "allow"
    assert engine.check("kill -9 1234", STATE).decision == "allow"
    assert engine.check("pkill x", STATE).decision == "ask"  # pkill was in the replaced rule
    unknown = engine.check("kill --timeout 5 TERM 1234", STATE)
    assert unknown.decision == "ask"
    assert "unknown option --timeout of kill" in unknown.reasons[0]


def test_an_allow_rule_without_a_spec_of_the_program_asks(tmp_path: Path) -> None:
    override = write(
        tmp_path,
        """
[[rule]]
id = "processes"
decision = "allow"
reason = "I stop my own processes often"
program = ["kill"]
""",
    )
    engine = PolicyEngine.load([default_policy_path(), override], home=HOME, workspace=WORKSPACE)
    decision = engine.check("kill 1234", STATE)
    assert decision.decision == "ask"
    assert "no spec of kill's options" in decision.reasons[0]


def test_a_user_override_can_remove_a_rule(tmp_path: Path) -> None:
    override = write(tmp_path, 'remove = ["read-only"]\n')
    engine = PolicyEngine.load([default_policy_path(), override], home=HOME, workspace=WORKSPACE)
    assert engine.check("cat notes.txt", STATE).decision == "ask"


def test_load_without_paths_merges_the_users_policy_file() -> None:
    user = config_dir() / "policy.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        '[[rule]]\nid = "deny-ls"\ndecision = "deny"\nreason = "no"\nprogram = ["ls"]\n'
    )
    engine = PolicyEngine.load(home=HOME, workspace=WORKSPACE)
    assert engine.check("ls", STATE).decision == "deny"
    assert engine.check("pwd", STATE).decision == "allow"


def test_a_malformed_user_policy_stops_loading() -> None:
    user = config_dir() / "policy.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[[rule]\n")
    with pytest.raises(ConfigError, match="policy.toml:1"):
        PolicyEngine.load(home=HOME)


def test_unknown_programs_ask(engine: PolicyEngine) -> None:
    decision = engine.check("frobnicate --all", STATE)
    assert decision.decision == "ask"
    assert "not a program the policy knows" in decision.reasons[0]


def test_failing_examples_are_reported(tmp_path: Path) -> None:
    path = write(tmp_path, RULE + 'match = ["pwd"]\nnot_match = ["ls -l"]\n')
    count, failures = check_examples(load_policy([path]))
    assert count == 2
    assert {f.command for f in failures} == {"pwd", "ls -l"}


def test_files_in_a_home_under_a_system_prefix_are_the_users_own() -> None:
    from shellagent.policy import PolicyEngine, ShellState, default_policy_path

    root_home = Path("/root")
    engine = PolicyEngine.load(
        [default_policy_path()], home=root_home, workspace=root_home / "project"
    )
    state = ShellState(cwd=root_home / "project")
    assert engine.check("tar czf ../backup.tgz -C ../Documents .", state).decision == "ask"
    assert engine.check("touch /root/notes.txt", state).decision == "ask"
    assert engine.check("touch /etc/motd", state).decision == "deny"
    assert engine.check("rm -rf /root", state).decision == "deny"  # the home itself, in bulk


def test_a_sed_write_flag_is_not_mistaken_for_exec_by_its_file_name() -> None:
    from shellagent.policy import PolicyEngine, default_policy_path

    engine = PolicyEngine.load([default_policy_path()], home=Path("/home/user"))
    writes = engine.check("sed -n 's/a/b/w /etc/x' f")
    assert writes.decision != "allow"
    assert not any("runs shell commands" in r for r in writes.reasons)
    assert any("runs shell commands" in r for r in engine.check("sed 's/a/b/e' f").reasons)
