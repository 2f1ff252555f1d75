"""shellagent: a personal shell agent with a local model, a policy and a bubblewrap sandbox.

    import shellagent

    agent = shellagent.Agent(cwd="~/projects/site", approver=shellagent.AutoApprover())
    outcome = agent.run("list the largest files here")

The names below are the library's front door. They are imported when first used, so
``import shellagent`` stays cheap (``ask`` imports this package on its start-up path).
The errors are here too, as httpx exports its own: ``except shellagent.ShellagentError``
catches anything the package raises on purpose (the tree is drawn in ``errors.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> the module that defines it
_LAZY = {
    "Agent": "shellagent.agent.front",
    "AgentConfig": "shellagent.agent.config",
    "Approval": "shellagent.agent.approval",
    "ApprovalRequest": "shellagent.agent.approval",
    "Approver": "shellagent.agent.approval",
    "AutoApprover": "shellagent.agent.approval",
    "Cancelled": "shellagent.errors",
    "ConfigError": "shellagent.errors",
    "EnvironmentProblem": "shellagent.errors",
    "InputError": "shellagent.errors",
    "InternalError": "shellagent.errors",
    "ModelUnavailable": "shellagent.errors",
    "Outcome": "shellagent.agent.outcome",
    "ProtocolError": "shellagent.protocol",
    "RefuseApprover": "shellagent.agent.approval",
    "SandboxUnavailable": "shellagent.errors",
    "SessionClosed": "shellagent.errors",
    "ShellagentError": "shellagent.errors",
    "TaskFailed": "shellagent.errors",
    "UsageError": "shellagent.errors",
}

__all__ = [
    "Agent",
    "AgentConfig",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "Cancelled",
    "ConfigError",
    "EnvironmentProblem",
    "InputError",
    "InternalError",
    "ModelUnavailable",
    "Outcome",
    "ProtocolError",
    "RefuseApprover",
    "SandboxUnavailable",
    "SessionClosed",
    "ShellagentError",
    "TaskFailed",
    "UsageError",
    "__version__",
]

if TYPE_CHECKING:
    from shellagent.agent.approval import (
        Approval,
        ApprovalRequest,
        Approver,
        AutoApprover,
        RefuseApprover,
    )
    from shellagent.agent.config import AgentConfig
    from shellagent.agent.front import Agent
    from shellagent.agent.outcome import Outcome
    from shellagent.errors import (
        Cancelled,
        ConfigError,
        EnvironmentProblem,
        InputError,
        InternalError,
        ModelUnavailable,
        SandboxUnavailable,
        SessionClosed,
        ShellagentError,
        TaskFailed,
        UsageError,
    )
    from shellagent.protocol import ProtocolError


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shellagent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
