"""The user's answer is ``Approval.kind`` and the policy's is ``ApprovalRequest.evaluation``;
the old name of each still reads, with a DeprecationWarning."""

from __future__ import annotations

from pathlib import Path

import pytest

import shellagent
from shellagent.policy import PolicyEngine


def test_approval_decision_still_reads_as_its_kind() -> None:
    approval = shellagent.Approval("refuse", reason="no")
    assert approval.kind == "refuse"
    with pytest.warns(DeprecationWarning, match="Approval.kind"):
        assert approval.decision == "refuse"


def test_request_decision_still_reads_as_the_evaluation(tmp_path: Path) -> None:
    evaluation = PolicyEngine.load(workspace=tmp_path).check("rm -rf build")
    request = shellagent.ApprovalRequest("rm -rf build", "clean", evaluation, 1)
    assert request.evaluation.decision == "ask"
    with pytest.warns(DeprecationWarning, match="ApprovalRequest.evaluation"):
        assert request.decision is evaluation
