"""Engines for the policy tests: a fixed home and workspace so paths classify the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.policy import PolicyEngine, ShellState

HOME = Path("/home/user")
WORKSPACE = HOME / "project"
STATE = ShellState(cwd=WORKSPACE)
CHECKLIST_POLICY = Path(__file__).parent / "checklist_policy.toml"


@pytest.fixture(scope="session")
def engine() -> PolicyEngine:
    from shellagent.policy import default_policy_path

    return PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)


@pytest.fixture(scope="session")
def checklist_engine() -> PolicyEngine:
    """The example rules of checklist section F: allow ls, cat, grep, git status; deny rm, curl."""
    return PolicyEngine.load([CHECKLIST_POLICY], home=HOME, workspace=WORKSPACE)
