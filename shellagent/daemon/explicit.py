"""Approvals that want a person: a change to a place that runs code later which the request
names (``transaction/named.py``) is approved only at the prompt, with its own key.

``ExplicitApprover`` wraps the task's approver: such a request goes to a person (the
client shows the key), and an approver that answers without one (``-y``'s, the refusing
one of an unattended run) refuses it, saying why. Every other request passes through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shellagent.transaction.named import named_in

if TYPE_CHECKING:
    from shellagent.agent import Approval, ApprovalRequest, Approver

__all__ = ["ExplicitApprover"]


class ExplicitApprover:
    """``inner``, except that a named protected place is never approved automatically."""

    def __init__(self, inner: Approver) -> None:
        self.inner = inner

    @property
    def automatic(self) -> bool:
        from shellagent.agent.approval import is_automatic

        return is_automatic(self.inner)

    def __call__(self, request: ApprovalRequest) -> Approval:
        from shellagent.agent import Approval

        named = named_in(request.evaluation)
        if named and self.automatic:
            return Approval(
                "refuse",
                reason=(
                    f"{', '.join(named)} runs code later: only you can approve that, at the "
                    "prompt with its own key (-y never does); run the task again without -y"
                ),
            )
        return self.inner(request)
