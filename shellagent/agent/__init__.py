"""The agent: the loop, its prompts, and the action schema the model answers in.

    outcome = Agent(cwd=project, approver=AutoApprover()).run("free up space in ~/Downloads")
    outcome = run_task("free up space in ~/Downloads", Parts(backend, session, engine),
                       Oversight(AutoApprover()), Recording(writer))

``front`` is the front door (``Agent``: builds the model, policy, sandbox and transcript,
and wraps a session up through its hooks); ``loop`` runs a session (``run_task``: every
part given, by role: ``parts``), ``session`` holds its state and the steps turns share,
``scheduling`` the schedule action, ``proposal`` the job it proposes and the installer it
is handed to, ``schedule`` the schedule format, ``approval`` is what the user is asked
(and ``ChangesApprover``, what only changes files goes to the change set), ``prompts``
the system prompt, ``observation`` what the model is told back, ``context`` keeps the
conversation inside the model's context, ``actions`` the action schema and grammar.
"""

from __future__ import annotations

from shellagent.agent.actions import Action, FinishAction, RunAction, parse_action
from shellagent.agent.approval import (
    Approval,
    ApprovalRequest,
    Approver,
    AutoApprover,
    ChangesApprover,
    RefuseApprover,
    is_automatic,
)
from shellagent.agent.config import AgentConfig
from shellagent.agent.front import Agent
from shellagent.agent.loop import run_task
from shellagent.agent.outcome import Outcome
from shellagent.agent.parts import ChangeReview, Hooks, Oversight, Parts, Recording
from shellagent.agent.prompts import Environment, system_prompt
from shellagent.agent.proposal import InstalledJob, JobInstaller, JobProposal, describe_job
from shellagent.schedule import Schedule

__all__ = [
    "Action",
    "Agent",
    "AgentConfig",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "ChangeReview",
    "ChangesApprover",
    "Environment",
    "FinishAction",
    "Hooks",
    "InstalledJob",
    "JobInstaller",
    "JobProposal",
    "Outcome",
    "Oversight",
    "Parts",
    "Recording",
    "RefuseApprover",
    "RunAction",
    "Schedule",
    "describe_job",
    "is_automatic",
    "parse_action",
    "run_task",
    "system_prompt",
]
