"""``shellagent explain -- CMD``: what a command would do, part by part, and the verdict.

Each simple command of the line is shown with the policy's reading of it: the program as it
will run, what it writes, what its options and operands do by the program's spec (runs
other code, uses the network, changes state outside files), the verdict and its reasons.
Every option is explained by the line of the program's own ``--help`` that names it; that
help text is read inside the sandbox, confined as a read-only command, never on the host.
No model is involved.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from shellagent.cli.display import shown
from shellagent.errors import InputError

HELP_TIMEOUT_S = 5.0
WIDTH = 80
# What the policy's traits mean, in words
TRAITS = {
    "network": "uses the network",
    "network-redirect": "opens a network connection through a redirection",
    "lookup": "looks a name up or pings a host",
    "sends-data": "sends data of the command's choosing over the network",
    "fetch": "downloads",
    "download-to-shell": "runs code downloaded from the network",
    "privilege": "runs with root privileges",
    "code-from-stdin": "runs code it reads from its input",
    "executes": "runs another program",
    "changes-state": "changes state outside files",
    "script-file": "runs program text from a file",
    "sed-exec": "its sed script runs commands",
    "sed-write": "its sed script writes files",
    "awk-side-effects": "its awk program runs commands or writes files",
    "fork-bomb": "defines a fork bomb",
}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="explain what a command would do and what the policy says about it",
        description="Explain a command part by part: what each program writes, runs or sends, "
        "every option from the program's own --help (read in the sandbox), and the policy's "
        "verdict with its reasons. Runs nothing of the command.\n\n"
        "example: shellagent explain -- tar -czf ~/b.tgz -C ~ Documents",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    parser.add_argument("--no-help", action="store_true", help="do not read any --help text")
    parser.set_defaults(func=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    words = list(args.command)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise InputError("no command given", hint="shellagent explain -- 'ls -la'")
    text = explain(" ".join(words), Path.cwd(), read_help=not args.no_help)
    print(shown(text, lines=True))
    return 0


def explain(command: str, cwd: Path, *, read_help: bool = True) -> str:
    """The explanation of ``command`` as lines of text (hostile text is the caller's to
    escape: it is printed through ``display.shown``)."""
    from shellagent.policy import PolicyEngine, ShellState

    decision = PolicyEngine.load(workspace=cwd).check(command, ShellState(cwd=cwd))
    helps = _HelpTexts(cwd) if read_help else None
    lines = [f"$ {command}"]
    try:
        for n, seg in enumerate(decision.segments, 1):
            lines.append("")
            head = f"{n}. {seg.program or '(no program)'}"
            if seg.wrappers:
                head += f", run through {' '.join(seg.wrappers)}"
            if seg.context:
                head += f" (inside {seg.context})"
            lines.append(head + f": {seg.decision}" + (" (read-only)" if seg.read_only else ""))
            if seg.writes:
                lines.append("   writes: " + ", ".join(seg.writes))
            for effect in seg.effects:
                lines.append(f"   does: {effect}")
            for trait in seg.traits:
                if trait in TRAITS:
                    lines.append(f"   {TRAITS[trait]}")
            if seg.assignments:
                lines.append("   sets: " + ", ".join(seg.assignments))
            for option in _options(seg.argv[1:], seg.program or ""):
                meaning = helps.line_for(seg.program, option) if helps else None
                lines.append(f"   {option}: {meaning or '(not described by its --help)'}")
            for reason in seg.reasons:
                lines.append(f"   why {seg.decision}: {reason}")
    finally:
        if helps is not None:
            helps.close()
    lines.append("")
    verdict = decision.decision + (" (read-only: runs where writes are refused)"
                                   if decision.read_only else "")  # fmt: skip
    lines.append(f"verdict: {verdict}")
    for reason in decision.reasons:
        lines.append(f"  - {reason}")
    return "\n".join(lines)


# Programs whose first word may be a cluster of short options without the dash
# (``tar czf x.tgz dir``, ``ps aux``, ``ar rcs``): read as ``-c -z -f``.
_DASHLESS_FIRST = frozenset({"tar", "ps", "ar"})


def _options(words: tuple[str, ...], program: str = "") -> list[str]:
    """The options among ``words``: ``--name`` (value dropped) and each letter of a short
    cluster, in order, once each; nothing after ``--``."""
    found: list[str] = []
    if program.rsplit("/", 1)[-1] in _DASHLESS_FIRST and words and words[0].isalpha():
        words = (f"-{words[0]}", *words[1:])
    for word in words:
        if word == "--":
            break
        if word.startswith("--") and len(word) > 2:
            found.append(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1 and word[1].isalpha():
            for c in word[1:]:
                if not c.isalpha():
                    break  # the rest is a value (-k5, -n20)
                found.append(f"-{c}")
    return list(dict.fromkeys(found))


class _HelpTexts:
    """``PROGRAM --help`` as read inside a sandbox session, once per program."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.texts: dict[str, str] = {}
        self.session: Any = None

    def line_for(self, program: str, option: str) -> str | None:
        if not re.fullmatch(r"[\w.+-]+", program or ""):
            return None  # only a plain program name is ever run
        text = self.texts.get(program)
        if text is None:
            text = self.texts[program] = self._read(program)
        # Where the option is defined (it starts the line, maybe after its short form)
        # before where it is only mentioned ("--author  with -l, print …").
        defined = re.compile(rf"^\s*(-\w,\s*)?{re.escape(option)}(?![\w-])")
        mentioned = re.compile(rf"(^|[\s,\[]){re.escape(option)}(?![\w-])")
        lines = text.splitlines()
        for pattern in (defined, mentioned):
            for line in lines:
                if pattern.search(line):
                    return " ".join(line.split())[: WIDTH + 20]
        return None

    def _read(self, program: str) -> str:
        from shellagent.errors import ShellagentError
        from shellagent.sandbox import Sandbox, get_profile

        try:
            if self.session is None:
                self.session = Sandbox(get_profile("default", cwd=self.cwd), timeout=10)
            result = self.session.run(
                f"{program} --help 2>&1 | head -n 400", timeout=HELP_TIMEOUT_S, confined=True
            )
        except ShellagentError as exc:
            print(f"note: no --help text: {exc.message}", file=sys.stderr)
            return ""
        return str(result.output)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
