"""A simple command as the engine judges it (``Draft``): built from the parse
(``command_draft``, ``inner_draft``, each judged as the program its wrappers run), its key
for "always allow" (``draft_key``), the marks only the whole line shows (a fork bomb, code
downloaded into a shell, segments after a ``cd``), and the variables and functions a
segment sets without an assignment word."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from shellagent.policy.parse import RawCommand
from shellagent.policy.programs import INTERPRETERS, args_of, effects
from shellagent.policy.values import name_positions
from shellagent.policy.words import Word
from shellagent.policy.wrappers import PRIVILEGE, Unwrapped, program_name, unwrap

__all__ = [
    "BASH_EVALUATES",
    "CHANGES_DIRECTORY",
    "CODE_RUNNERS",
    "Draft",
    "command_draft",
    "draft_key",
    "exports_functions",
    "has_short_flag",
    "inner_draft",
    "mark_downloads_to_shell",
    "mark_fork_bombs",
    "mark_uncertain_cwd",
    "named_assignments",
]

CODE_RUNNERS = INTERPRETERS | {"eval", "source", "."}
CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})


@dataclass
class Draft:
    raw: RawCommand
    raw_index: int
    argv: list[Word]
    full: list[Word]
    program: str
    context: str
    wrappers: list[str] = field(default_factory=list)
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    traits: set[str] = field(default_factory=set)
    structural: list[str] = field(default_factory=list)
    dynamic_args: bool = False
    executable: str | None = None
    uncertain_cwd: bool = False  # a cd earlier in the line: its directory is not the shell's
    wrapper_writes: list[Word] = field(default_factory=list)  # time -o FILE


def mark_fork_bombs(drafts: list[Draft]) -> None:
    """A function that calls itself, as in ``:(){ :|:& };:``."""
    for d in drafts:
        if d.raw.kind == "function" and d.raw.words:
            name = d.raw.words[0].text
            if any(x.context == f"function {name}" and x.program == name for x in drafts):
                d.traits.add("fork-bomb")


def mark_downloads_to_shell(drafts: list[Draft]) -> None:
    """``curl … | sh``, ``bash <(curl …)``, ``eval "$(wget -O- …)"``: code from the network."""
    by_raw = {d.raw_index: d for d in drafts if d.context not in ("find -exec", "find -execdir")}
    fetchers = [
        d
        for d in drafts
        if d.program in ("curl", "wget", "nc", "ncat", "netcat", "socat", "aria2c", "http", "fetch")
    ]
    for f in fetchers:
        if f.raw.pipeline is not None:
            for d in drafts:
                if (
                    d.raw.pipeline == f.raw.pipeline
                    and d.raw.stage > f.raw.stage
                    and _runs_stdin(d)
                ):
                    d.traits.add("download-to-shell")
        parent = f.raw.parent
        while parent is not None and parent in by_raw:
            host = by_raw[parent]
            if host.program in CODE_RUNNERS:
                host.traits.add("download-to-shell")
            parent = host.raw.parent


def _runs_stdin(d: Draft) -> bool:
    if d.program in ("source", ".", "eval"):
        return True
    traits = effects(d.program, args_of(d.program, tuple(d.argv), None)).traits
    return "code-from-stdin" in traits


def mark_uncertain_cwd(drafts: list[Draft]) -> None:
    """After a ``cd`` in the same line, no later segment runs in the shell's directory."""
    seen_cd = False
    for d in drafts:
        if seen_cd:
            d.uncertain_cwd = True
        if d.program in CHANGES_DIRECTORY:
            seen_cd = True


def command_draft(raw: RawCommand, index: int, unwrapped: Unwrapped) -> Draft:
    """The draft of a simple command, judged as the program its wrappers run."""
    argv = unwrapped.argv or list(raw.words)
    draft = Draft(
        raw,
        index,
        argv,
        list(raw.words),
        program_name(argv[0]) if argv else "",
        raw.context,
        unwrapped.wrappers,
        list(unwrapped.assignments),
    )
    if unwrapped.problem:
        draft.structural.append(unwrapped.problem)
    draft.wrapper_writes = list(unwrapped.writes)
    if unwrapped.privilege or draft.program in PRIVILEGE:
        draft.traits.add("privilege")
    if unwrapped.wrappers:
        draft.traits.add("wrapped")
    if unwrapped.stdin_args:
        draft.traits.add("stdin-args")
        draft.dynamic_args = True
    return draft


def inner_draft(raw: RawCommand, index: int, context: str, inner: list[Word]) -> Draft:
    """The draft of a command another one runs with its own argv (``find -exec``)."""
    draft = Draft(raw, index, inner, inner, program_name(inner[0]), context)
    draft.dynamic_args = True  # {} becomes each file name found
    unwrapped = unwrap(inner)
    if unwrapped.argv and unwrapped.wrappers:
        draft.argv = unwrapped.argv
        draft.program = program_name(unwrapped.argv[0])
        draft.wrappers = unwrapped.wrappers
    if unwrapped.privilege:
        draft.traits.add("privilege")
    return draft


def draft_key(d: Draft) -> str:
    parts = [f"{n}={v.text}" for n, v in d.raw.assignments]
    words = (
        d.full
        if d.context not in ("find -exec", "find -execdir", "find -ok", "find -okdir")
        else d.argv
    )
    # Static words are quoted so the key reads back as the same argv; dynamic ones as written.
    text = " ".join(
        [*map(shlex.quote, parts), *(shlex.quote(w.text) if w.static else w.text for w in words)]
    )
    if d.raw.kind == "redirect":
        text = "(group)"  # a compound command whose redirections are judged here
    for r in d.raw.redirects:
        text += f" {r.fd}{r.op}{shlex.quote(r.target.text)}"
    return text


# Builtins that may evaluate a word as a variable name or arithmetic, where an array
# subscript's $( ) runs: test -v 'a[$(cmd)]', unset, read, declare -i, printf -v, let …
BASH_EVALUATES = frozenset(
    {"test", "[", "[[", "let", "unset", "read", "declare", "typeset", "local", "export"}
    | {"readonly", "printf", "mapfile", "readarray", "getopts", "wait"}
)
_EXPANSION_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?:?=")


def named_assignments(d: Draft) -> list[tuple[str | None, str]]:
    """Variables the segment sets without an assignment word, as (name or None when it is
    only known at run time, how): ``read NAME``, ``read -a NAME``, ``${NAME:=value}``."""
    found: list[tuple[str | None, str]] = [
        (m.group(1), f"${{{m.group(1)}:=…}}") for m in _EXPANSION_ASSIGNMENT.finditer(d.raw.source)
    ]
    if d.raw.kind == "unset":
        args = list(d.argv[1:])
        program = "unset"
    elif d.raw.kind == "command":
        args = list(d.argv[1:])
        program = d.program
    else:
        return found
    texts = [w.text if w.static else "" for w in args]
    for index in name_positions(program, texts):
        word = args[index]
        name = word.text if word.static else None
        if name is not None and name.startswith("-"):  # -aNAME, -vNAME, -pNAME
            flag = {"read": "a", "printf": "v", "wait": "p"}.get(program, "")
            name = name[name.index(flag) + 1 :] if flag and flag in name else None
        found.append((name.split("[", 1)[0] if name else None, program))
    if program in ("mapfile", "readarray") and any(has_short_flag(w, "C") for w in args):
        found.append(("", f"{program} -C"))
    return found


def exports_functions(d: Draft) -> bool:
    """``export -f NAME``, ``declare -fx NAME`` and the like (not a listing, not ``-n``)."""
    if d.program not in ("export", "declare", "typeset", "local"):
        return False
    args = d.argv[1:]
    flags = {
        c for w in args if w.static and w.text[:1] == "-" and w.text != "--" for c in w.text[1:]
    }
    names = [w for w in args if not (w.static and w.text[:1] in "-+")]
    exporting = d.program == "export" or "x" in flags
    return exporting and "f" in flags and "n" not in flags and bool(names)


def has_short_flag(word: Word, flag: str) -> bool:
    return word.static and word.text[:1] in "-+" and flag in word.text[1:] and word.text != "--"
