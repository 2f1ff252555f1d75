"""A person at the keyboard, scripted: one request through the real daemon, every question
answered as a person would.

Run by ``newuser_trial.py --person`` and ``--refuse`` as the trial's account (it imports
the installed package, as ``ask`` does). The user sits at a terminal (``ask`` asks it
everything it would ask a person, a job to install included, which ``-y`` never does)
and answers like this:

- with ``--refuse``, the first thing they can say no to, they refuse: a command to
  approve ("no", with ``--reason``), a "did that do it?" ("no"), or a result ``ask`` was
  not sure of (not kept); without it they refuse nothing;
- where other ways are then offered, they pick the ``--pick``-th (none when fewer are
  offered);
- after that they say yes to what runs, skip "did that do it?" (the request's check
  judges) and apply the changes at the end.

Prints one JSON object: whether a no was said and to what, the alternatives offered (recipe,
plain words, command), the one picked, the last answer and the last command's output (for
the request's check), how each session ended, and the exit code ``ask`` would return.

    python bench/scripted_user.py "back up Documents weekly"
    python bench/scripted_user.py --refuse --pick 1 --reason "not what I asked" "count the pdfs"
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from typing import Any

from shellagent.cli.ask_client import Connection, connect_or_start, run_on
from shellagent.cli.ask_ui import AskUI
from shellagent.events import (
    Alternative,
    ApprovalNeeded,
    ApprovalReply,
    ChangesDecision,
    ChangesReady,
    ChoiceRequest,
    ConfirmAnswer,
    ConfirmRequest,
    Output,
    Result,
    Summary,
    WireEvent,
)


class ScriptedUser(AskUI):
    """``AskUI`` with a scripted person behind it (see the module's docstring)."""

    def __init__(self, refuse: bool, pick: int, reason: str) -> None:
        self.screen = io.StringIO()  # what a person would have read
        super().__init__(out=self.screen, err=io.StringIO(), can_prompt=True)
        self.refuse = refuse
        self.pick = pick
        self.reason = reason
        self.refused_at = ""  # what the no was said to: "command", "confirm" or "unsure"
        self.refused_command = ""
        self.offered: list[Alternative] = []
        self.chosen = ""
        self.printed: list[str] = []  # each command's output, in order
        self.summaries: list[Summary] = []
        self._current = ""

    def event(self, event: WireEvent) -> None:
        if isinstance(event, Output):
            self._current += event.data
        elif isinstance(event, Result):
            self.printed.append(self._current)
            self._current = ""
        elif isinstance(event, Summary):
            self.summaries.append(event)
        super().event(event)

    def approve(self, m: ApprovalNeeded) -> ApprovalReply:
        if not self.refuse or self.refused_at:
            return ApprovalReply(id=m.id, decision="approve", command=m.command)
        self.refused_at, self.refused_command = "command", m.command
        return ApprovalReply(id=m.id, decision="refuse", command=m.command, reason=self.reason)

    def confirm(self, m: ConfirmRequest) -> ConfirmAnswer:
        if not self.refuse or self.refused_at:  # the check decides: what ask claimed stands
            return "skip"
        self.refused_at = "confirm"
        return "no"

    def pick_after_no(self, m: ConfirmRequest) -> int:
        pick = self._take(m.alternatives)
        self.picked = self.chosen or None  # after "no" the pick runs as a follow-up (run_on)
        return pick

    def choose(self, m: ChoiceRequest) -> int:
        if not self.refuse:  # what there is stays: the check judges it
            return 0
        if not self.refused_at:  # not sure of what ran: the user does not keep it
            self.refused_at = "unsure"
        if self.offered:  # one pick per trial: after it, what there is stays
            return 0
        return self._take(m.alternatives)

    def review_changes(self, m: ChangesReady) -> ChangesDecision:
        return "apply"

    def _take(self, alternatives: tuple[Alternative, ...]) -> int:
        self.offered = list(alternatives)
        if not 1 <= self.pick <= len(alternatives):
            return 0
        self.chosen = alternatives[self.pick - 1].recipe
        return self.pick


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--refuse", action="store_true", help="say no to the first answer")
    parser.add_argument("--pick", type=int, default=1, help="which alternative to take (1-3)")
    parser.add_argument("--reason", default="that is not what I asked")
    args = parser.parse_args()
    user = ScriptedUser(args.refuse, args.pick, args.reason)
    ask = argparse.Namespace(
        task=args.task, cwd=os.getcwd(), model=None, dry_run=False, yes=False, apply=False,
        json=False, max_turns=None, continues=None,
    )  # fmt: skip
    code = run_on(lambda: Connection(connect_or_start(quiet=True)), ask, user)
    last: dict[str, Any] = {}
    if user.summaries:
        s = user.summaries[-1]
        last = {"summary": s.summary, "claimed": s.claimed, "reason": s.reason}
    print(
        json.dumps(
            {
                "exit_code": code,
                "refused_at": user.refused_at,
                "refused_command": user.refused_command,
                "offered": [
                    {"recipe": a.recipe, "says": a.says, "command": a.command} for a in user.offered
                ],
                "picked": user.chosen,
                "answer": last.get("summary", ""),
                "last_output": user.printed[-1] if user.printed else "",
                "sessions": [
                    {
                        "reason": s.reason,
                        "claimed": s.claimed,
                        "verdict": s.verdict,
                        "commands": list(s.commands),
                    }
                    for s in user.summaries
                ],  # fmt: skip
                "screen": user.screen.getvalue()[-2000:],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
