"""The agent package's public surface: complete, sorted, and the contract's names."""

from __future__ import annotations

import dataclasses
import inspect

import shellagent.agent as agent


def test_all_is_sorted_and_every_name_exists() -> None:
    assert agent.__all__ == sorted(agent.__all__)
    for name in agent.__all__:
        assert hasattr(agent, name), name


def test_every_public_class_and_function_is_in_all() -> None:
    public = {
        name
        for name, value in vars(agent).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("shellagent.agent")
    }
    assert public <= set(agent.__all__)


def test_config_defaults_are_the_documented_ones() -> None:
    config = agent.AgentConfig()
    assert dataclasses.asdict(config) == {
        "max_turns": 15,
        "command_timeout": 30.0,
        "observation_chars": 2000,
        "max_tokens": 256,
        "repeat_limit": 3,
        "capture_logprobs": False,
        "dry_run": False,
        "propose_only": False,
        "examples": 2,
        "stall_limit": 1,
    }


def test_run_task_takes_the_documented_parts() -> None:
    params = inspect.signature(agent.run_task).parameters
    assert list(params) == ["task", "parts", "oversight", "recording", "hooks", "earlier"]
    assert params["earlier"].kind is inspect.Parameter.KEYWORD_ONLY
    fields = {
        part.__name__: [f.name for f in dataclasses.fields(part)]
        for part in (agent.Parts, agent.Oversight, agent.Recording, agent.Hooks)
    }
    assert fields == {
        "Parts": ["backend", "shell", "policy", "config", "examples", "recipes"],
        "Oversight": ["approver", "job_installer", "chooser"],
        "Recording": ["sink", "source", "model_name", "task_id"],
        "Hooks": [
            "cancel", "on_event", "on_output", "on_token",
            "review", "confirm", "history", "shell_states", "check_summary",
        ],
    }  # fmt: skip


def test_importing_the_agent_loads_neither_the_model_runtime_nor_the_policy_parser() -> None:
    import subprocess
    import sys

    code = (
        "import sys, shellagent.agent; "
        "print(' '.join(m for m in ('llama_cpp', 'pydantic', 'tree_sitter') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
