"""The agent: the loop, its prompts, and the action schema the model answers in.

    outcome = run_task("free up space in ~/Downloads", backend=backend, shell=session,
                       policy=engine, approver=AutoApprover(), sink=writer)

``loop`` runs a session, ``approval`` is what the user is asked, ``prompts`` the system
prompt, ``observation`` what the model is told back, ``context`` keeps the conversation
inside the model's context, ``actions`` the action schema and grammar.
"""

from __future__ import annotations

from shellagent.agent.actions import Action, FinishAction, RunAction, parse_action
from shellagent.agent.approval import (
    Approval,
    ApprovalRequest,
    Approver,
    AutoApprover,
    RefuseApprover,
)
from shellagent.agent.loop import AgentConfig, Outcome, run_task
from shellagent.agent.prompts import Environment, system_prompt

__all__ = [
    "Action",
    "AgentConfig",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "Environment",
    "FinishAction",
    "Outcome",
    "RefuseApprover",
    "RunAction",
    "parse_action",
    "run_task",
    "system_prompt",
]
