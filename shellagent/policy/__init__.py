"""The command policy: every command the model proposes is judged allow, ask or deny.

    engine = PolicyEngine.load(workspace=Path.cwd())
    decision = engine.check("ls -la && rm -rf build")
    decision.decision, decision.reasons, decision.segments

Modules: ``words`` (quote removal), ``parse`` (tree-sitter-bash → simple commands),
``wrappers`` (sudo, env, xargs, bash -c …), ``specs`` (program specs: every option and its
effect), ``options`` (reading an argv like getopt_long against a spec), ``scripts`` (sed,
awk, dc and shell-option readers), ``programs`` (flags, subcommands, written paths),
``pathclass`` (path classes), ``rules`` (TOML format and matching), ``engine`` (the
decision), ``always`` (always-allow store), ``examples`` (policy self-tests).
"""

from __future__ import annotations

from shellagent.policy.engine import Decision, PolicyEngine, Segment, ShellState
from shellagent.policy.examples import ExampleFailure, check_examples
from shellagent.policy.rules import Policy, load_policy
from shellagent.policy.sources import default_policy_path, preset_path

__all__ = [
    "Decision",
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
