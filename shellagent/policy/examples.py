"""Run the ``match`` / ``not_match`` examples of every rule: a policy file tests itself.

An example passes when the rule matched (``match``) or did not match (``not_match``) at
least one segment of the example command. Examples are judged with a fixed home
(``/home/user``) and workspace (``/home/user/project``) so ``~`` means the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shellagent.policy.decision import Decision
from shellagent.policy.engine import PolicyEngine
from shellagent.policy.rules import Policy

EXAMPLE_HOME = Path("/home/user")
EXAMPLE_WORKSPACE = EXAMPLE_HOME / "project"


@dataclass(frozen=True)
class ExampleFailure:
    rule: str
    source: str
    command: str
    expected_match: bool
    decision: Decision

    def describe(self) -> str:
        verb = "should match" if self.expected_match else "should not match"
        return (
            f"{self.source}: rule {self.rule} {verb} `{self.command}` (decision: {self.decision})"
        )


def check_examples(policy: Policy) -> tuple[int, list[ExampleFailure]]:
    """Return how many examples ran and the ones that failed."""
    engine = PolicyEngine(policy, home=EXAMPLE_HOME, workspace=EXAMPLE_WORKSPACE)
    failures: list[ExampleFailure] = []
    count = 0
    for rule in policy.rules:
        cases = [(c, True) for c in rule.model.match] + [(c, False) for c in rule.model.not_match]
        for command, expected in cases:
            count += 1
            evaluation = engine.check(command)
            matched = any(rule.id in s.rules for s in evaluation.segments)
            if matched != expected:
                failures.append(
                    ExampleFailure(rule.id, rule.source, command, expected, evaluation.decision)
                )
    return count, failures
