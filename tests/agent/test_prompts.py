"""The system prompt: environment, limits, and examples a small model can copy verbatim."""

from __future__ import annotations

from pathlib import Path

from shellagent.agent import Environment, parse_action, system_prompt
from shellagent.agent.examples import default_library, render, rewrite
from shellagent.agent.observation import cut
from shellagent.agent.prompts import describe_environment, format_example
from shellagent.sandbox import Sandbox, get_profile


def test_the_prompt_states_cwd_writable_paths_network_and_turn_limit() -> None:
    env = Environment(cwd="/home/u/proj", writable=("/home/u/proj",), max_turns=7)
    prompt = system_prompt(env)
    assert "Current directory: /home/u/proj." in prompt
    assert "You can write: /home/u/proj, and /tmp (private, thrown away at the end" in prompt
    assert "No network." in prompt
    assert "At most 7 replies." in prompt


def test_an_ephemeral_sandbox_is_described_as_writable_everywhere() -> None:
    with Sandbox("ephemeral") as session:
        env = describe_environment(session, max_turns=5)
    assert env.anywhere_writable
    assert "You can write: everywhere" in system_prompt(env)


def test_the_default_profile_grants_its_workspace(tmp_path: Path) -> None:
    with Sandbox(get_profile("default", cwd=tmp_path).with_options(network=True)) as session:
        env = describe_environment(session, max_turns=5)
    assert str(tmp_path) in env.writable
    assert "Network is on." in system_prompt(env)


def test_every_example_reply_is_a_canonical_action() -> None:
    task = "Remove the files ending in '.tmp' from ~/cache."
    shown = render([rewrite(e, task) for e in default_library().search(task, 2)])
    shown += "\n" + format_example(task, "/w")
    replies = [line for line in shown.splitlines() if line.startswith("{")]
    assert len(replies) >= 4
    for reply in replies:
        assert parse_action(reply).to_json() == reply


def test_without_examples_the_format_uses_the_tasks_own_path() -> None:
    prompt = system_prompt(Environment(cwd="/w"), "", "how big is ~/Documents/taxes?")
    assert '{"cmd": "ls -la ~/Documents/taxes"' in prompt
    assert "/srv/cache" not in prompt and "a.tmp" not in prompt  # no fixed task content


def test_retrieved_examples_replace_the_fixed_ones() -> None:
    task = "Archive ~/Documents into ~/backup.tgz"
    examples = render([rewrite(e, task) for e in default_library().search(task, 2)])
    prompt = system_prompt(Environment(cwd="/w"), examples, task)
    assert "Examples of similar tasks:" in prompt and "tar -" in prompt  # the archive example …
    assert "tar -caf ~/backup.tgz -C ~/Documents/.." in prompt  # … rewritten to this task's paths
    # the line's plain command (it passed the line's check), not the recipe's general one
    assert "realpath" not in prompt


def test_the_prompt_has_no_placeholder_a_small_model_could_copy() -> None:
    prompt = system_prompt(Environment(cwd="/w"))
    for placeholder in ("COMMAND", "<command>", "...", "SUMMARY"):
        assert placeholder not in prompt


def test_cut_keeps_head_and_tail_within_the_limit() -> None:
    text = "".join(f"{i}\n" for i in range(1000))
    shown = cut(text, 200)
    assert len(shown) <= 200
    assert shown.startswith("0\n1\n") and shown.endswith("998\n999\n")
    assert cut("short", 200) == "short"
