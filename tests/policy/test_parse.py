"""Parsing: quote removal like bash, every simple command found, wrappers unwrapped."""

from __future__ import annotations

import pytest

from shellagent.policy import PolicyEngine
from shellagent.policy.parse import BashParser
from tests.policy.conftest import STATE


@pytest.mark.parametrize(
    "command", ["\\rm x", "'r'm x", '"r"m x', "$'\\x72m' x", "$'\\162m' x", "r\\\nm x"]
)
def test_quoting_is_removed_the_way_bash_does(command: str) -> None:
    parsed = BashParser("/home/user").parse(command)
    assert [w.text for w in parsed.commands[0].words] == ["rm", "x"]


def test_tilde_and_home_expand_to_the_home_directory() -> None:
    parsed = BashParser("/home/user").parse('ls ~ ~/x "$HOME/y" ${HOME}')
    assert [w.text for w in parsed.commands[0].words[1:]] == [
        "/home/user",
        "/home/user/x",
        "/home/user/y",
        "/home/user",
    ]


def test_commands_inside_substitutions_loops_and_heredocs_are_found() -> None:
    source = 'for f in $(ls); do cat "$f" | grep x; done; cat <<E\n$(id)\nE'
    parsed = BashParser("/home/user").parse(source)
    names = sorted(c.words[0].text for c in parsed.commands if c.words)
    assert names == ["cat", "cat", "grep", "id", "ls"]


def test_redirections_are_seen_as_writes(engine: PolicyEngine) -> None:
    decision = engine.check("ls > out.txt 2>/dev/null", STATE)
    assert decision.segments[0].writes == ("out.txt",)
    assert decision.decision == "ask"


def test_nested_bash_c_is_parsed_recursively(engine: PolicyEngine) -> None:
    decision = engine.check("bash -c \"sh -c 'ls; rm -rf ~'\"", STATE)
    assert decision.decision == "deny"
    assert [s.program for s in decision.segments] == ["bash", "sh", "ls", "rm"]


def test_sudo_options_are_unwrapped(engine: PolicyEngine) -> None:
    decision = engine.check("sudo -u root -E timeout 5 rm x", STATE)
    segment = decision.segments[0]
    assert segment.program == "rm"
    assert segment.wrappers == ("sudo", "timeout")
    assert decision.decision == "deny"


def test_a_program_name_from_a_variable_is_not_allowed(engine: PolicyEngine) -> None:
    decision = engine.check("$PAGER file", STATE)
    assert decision.decision == "ask"
    assert "only known when it runs" in decision.reasons[0]


def test_allowed_read_only_commands_are_allowed(engine: PolicyEngine) -> None:
    for command in ["ls -la", "git status", "cat notes.txt | grep x | wc -l", "df -h"]:
        assert engine.check(command, STATE).decision == "allow", command


def test_dynamic_arguments_void_the_allow_of_careful_programs(engine: PolicyEngine) -> None:
    assert engine.check("find . $ARGS", STATE).decision == "ask"
    assert engine.check("cat $FILE", STATE).decision == "allow"


def test_sed_script_reader_tells_printing_from_executing() -> None:
    from shellagent.policy.scripts import sed_script

    assert sed_script("/error/p") == (set(), [])
    assert sed_script("s/web/site/g") == (set(), [])
    assert sed_script("1e id") == ({"sed-exec"}, [])
    assert sed_script("s/a/b/w out") == ({"sed-write"}, [])
    assert sed_script("1!G;h;$!d") == (set(), [])
    assert sed_script("r /etc/shadow") == (set(), ["/etc/shadow"])
