"""Always-allow: exact segments, three scopes, a private file, never for denials."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from shellagent.errors import InputError
from shellagent.paths import config_dir
from shellagent.policy import PolicyEngine, ShellState, default_policy_path
from tests.policy.conftest import HOME, WORKSPACE


def fresh() -> PolicyEngine:
    return PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)


def test_session_scope_lasts_only_for_this_engine() -> None:
    engine = fresh()
    state = ShellState(cwd=WORKSPACE)
    message = engine.remember_always("make test", "session", WORKSPACE)
    assert "for the rest of this session" in message
    assert engine.check("make test", state).decision == "allow"
    assert engine.check("make install", state).decision == "ask"
    assert fresh().check("make test", state).decision == "ask"


def test_directory_scope_persists_in_a_private_file_for_that_directory_only() -> None:
    fresh().remember_always("make test", "directory", WORKSPACE)
    path = config_dir() / "always.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    engine = fresh()
    assert engine.check("make test", ShellState(cwd=WORKSPACE)).decision == "allow"
    assert engine.check("make test", ShellState(cwd=Path("/home/user/other"))).decision == "ask"


def test_everywhere_scope_applies_in_any_directory() -> None:
    message = fresh().remember_always("npm run build", "everywhere", WORKSPACE)
    assert "in every directory" in message
    assert fresh().check("npm run build", ShellState(cwd=Path("/srv/x"))).decision == "allow"


def test_a_denied_command_cannot_be_always_allowed() -> None:
    with pytest.raises(InputError, match="denied"):
        fresh().remember_always("ls && sudo ls", "everywhere", WORKSPACE)


def test_a_command_with_runtime_arguments_cannot_be_always_allowed() -> None:
    with pytest.raises(InputError, match="cannot be always allowed"):
        fresh().remember_always("rm $(cat list)", "session", WORKSPACE)


def test_remembering_stores_every_asked_segment_not_a_prefix() -> None:
    engine = fresh()
    engine.remember_always("mkdir out && cp a out/", "session", WORKSPACE)
    state = ShellState(cwd=WORKSPACE)
    assert engine.check("cp a out/", state).decision == "allow"
    assert engine.check("mkdir out", state).decision == "allow"
    assert engine.check("cp a out/ b", state).decision == "ask"
    assert engine.check("cp -r a out/", state).decision == "ask"


def test_an_unknown_scope_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown scope"):
        fresh().remember_always("make", "forever", WORKSPACE)
