"""The command policy: every command the model proposes is judged allow, ask or deny.

    engine = PolicyEngine.load(workspace=Path.cwd())
    evaluation = engine.check("ls -la && rm -rf build")
    evaluation.decision, evaluation.reasons, evaluation.segments   # Decision.ASK, …

Modules: ``words`` (quote removal), ``parse`` (tree-sitter-bash → simple commands),
``wrappers`` (sudo, env, xargs, bash -c …), ``specs`` (program specs: every option and its
effect), ``options`` (reading an argv like getopt_long against a spec), ``scripts`` (sed,
awk, dc and shell-option readers), ``programs`` (flags, subcommands, written paths),
``pathclass`` (path classes), ``rules`` (TOML format and matching), ``values`` (variables'
values bash evaluates as code), ``decision`` (``Decision``, ``Segment``, ``Evaluation``: what
the policy says), ``engine`` (judging a line), ``always`` (always-allow store), ``examples``
(policy self-tests).
"""

from __future__ import annotations

from shellagent.policy.decision import Decision, Evaluation, Segment
from shellagent.policy.engine import PolicyEngine, ShellState
from shellagent.policy.examples import ExampleFailure, check_examples
from shellagent.policy.rules import Policy, load_policy
from shellagent.policy.sources import default_policy_path, preset_path

__all__ = [
    "Decision",
    "Evaluation",
    "ExampleFailure",
    "Policy",
    "PolicyEngine",
    "Segment",
    "ShellState",
    "check_examples",
    "default_policy_path",
    "load_policy",
    "preset_path",
]
