"""Policy files: the TOML format, loading with precise errors, and matching one rule.

A policy file is a list of ``[[rule]]`` tables, two variable lists and ``[program.NAME]``
specs (``specs``). Every rule names programs and may narrow by subcommand, flags, words,
an argument regex, path classes of operands, of written and of read paths, and traits; it
carries a decision, a reason, whether it claims the commands it allows change nothing
(``read_only``), and ``match``/``not_match`` examples checked by ``shellagent policy
test``. The shipped specs (``policies/programs.toml``) are read first; later files (the
user's ``policy.toml``) replace rules with the same ``id`` and specs with the same name, and
may ``remove`` rules.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shellagent.errors import ConfigError
from shellagent.policy.decision import Decision
from shellagent.policy.pathclass import PATH_CLASSES
from shellagent.policy.programs import Args
from shellagent.policy.specs import ProgramModel, Specs, compiled_or_none, only_known

TRAITS = (
    "network",
    "network-redirect",
    "lookup",
    "sends-data",
    "fetch",
    "privilege",
    "code-from-stdin",
    "download-to-shell",
    "executes",
    "changes-state",
    "script-file",
    "sed-exec",
    "sed-write",
    "awk-side-effects",
    "fork-bomb",
    "wrapped",
    "stdin-args",
)
# Traits that mean a command may change something: a read_only rule never allows them.
# Every trait but these few that only describe how a command is written, so a trait added
# later counts as a change until it is listed here.
CHANGE_TRAITS = frozenset(TRAITS) - {"lookup", "wrapped", "stdin-args"}
_PATH_OR_ANY = (*PATH_CLASSES, "any")


class RuleModel(BaseModel):
    """One ``[[rule]]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    decision: Decision
    reason: str = Field(min_length=1)
    program: list[str] = Field(min_length=1)
    subcommand: list[str] = []
    global_flags: list[str] = []
    flags: list[str] = []
    any_flag: list[str] = []
    words: list[str] = []
    arg_regex: str | None = None
    arg_paths: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    traits: list[str] = []
    otherwise: bool = False
    dynamic_args: bool = False
    read_only: bool = False  # claims what it allows changes nothing (files, system, network)
    match: list[str] = []
    not_match: list[str] = []

    @field_validator("arg_paths", "writes", "reads")
    @classmethod
    def _known_classes(cls, value: list[str]) -> list[str]:
        return only_known(value, _PATH_OR_ANY, "path class")

    @field_validator("traits")
    @classmethod
    def _known_traits(cls, value: list[str]) -> list[str]:
        return only_known(value, TRAITS, "trait")

    @field_validator("arg_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return compiled_or_none(value, "arg_regex")


class VariablesModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    safe_prefix: list[str] | None = None  # NAME=value before a command that never asks
    dangerous: list[str] | None = None  # names (or PREFIX*) that change what programs run


class PolicyFileModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    description: str = ""
    remove: list[str] = []
    variables: VariablesModel = VariablesModel()
    rule: list[RuleModel] = []
    program: dict[str, ProgramModel] = {}


@dataclass(frozen=True)
class Facts:
    """What a rule may look at in one segment."""

    program: str
    args: Args
    arg_classes: frozenset[str]
    write_classes: frozenset[str]
    read_classes: frozenset[str]
    traits: frozenset[str]


@dataclass(frozen=True)
class Rule:
    model: RuleModel
    source: str  # file the rule came from
    regex: re.Pattern[str] | None

    @property
    def id(self) -> str:
        return self.model.id

    @property
    def decision(self) -> Decision:
        return self.model.decision

    def matches(self, f: Facts) -> bool:
        m = self.model
        if "*" not in m.program and f.program not in m.program:
            return False
        if m.subcommand and f.args.subcommand not in m.subcommand:
            return False
        if m.global_flags and not any(_has(f.args.global_flags, g) for g in m.global_flags):
            return False
        if m.flags and not all(_has(f.args.flags, g) for g in m.flags):
            return False
        if m.any_flag and not any(_has(f.args.flags, g) for g in m.any_flag):
            return False
        if m.words and not any(w in f.args.words for w in m.words):
            return False
        if self.regex is not None and not any(self.regex.search(w) for w in f.args.words):
            return False
        if m.arg_paths and not f.arg_classes.intersection(m.arg_paths):
            return False
        if m.writes and not f.write_classes.intersection(m.writes):
            return False
        if m.reads and not f.read_classes.intersection(m.reads):
            return False
        return all(t in f.traits for t in m.traits)


def _has(flags: frozenset[str], group: str) -> bool:
    return any(alt in flags for alt in group.split("|"))


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...]
    safe_prefix: frozenset[str]
    dangerous: tuple[str, ...]
    files: tuple[str, ...]
    specs: Specs = field(default_factory=Specs)

    def is_dangerous(self, name: str) -> bool:
        """``dangerous`` entries are names or shell patterns (``LD_*``, ``*PATH``). An
        element of an array is its array: ``BASH_CMDS[ls]`` is ``BASH_CMDS``."""
        name = name.split("[", 1)[0]
        return any(fnmatch.fnmatchcase(name, d) for d in self.dangerous)


def load_policy(paths: list[Path]) -> Policy:
    """Read the shipped specs, then policy files in order; later files override by id/name."""
    from shellagent.policy.sources import programs_path

    rules: dict[str, Rule] = {}
    safe: list[str] = []
    dangerous: list[str] = []
    specs = Specs()
    for path in [programs_path(), *paths]:
        model = read_policy_file(path)
        for name, program in model.program.items():
            specs.add(name, program, str(path))
        for rule_id in model.remove:
            rules.pop(rule_id, None)
        for rule_model in model.rule:
            regex = re.compile(rule_model.arg_regex) if rule_model.arg_regex else None
            rules.pop(rule_model.id, None)
            rules[rule_model.id] = Rule(rule_model, str(path), regex)
        if model.variables.safe_prefix is not None:
            safe = model.variables.safe_prefix
        if model.variables.dangerous is not None:
            dangerous = model.variables.dangerous
    return Policy(
        tuple(rules.values()),
        frozenset(safe),
        tuple(dangerous),
        tuple(str(p) for p in paths),
        specs,
    )


def read_policy_file(path: Path) -> PolicyFileModel:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read policy file: {exc.strerror}", path=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("policy file is not UTF-8 text", path=str(path)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise ConfigError(
            f"invalid TOML: {str(exc).split(' (at line')[0]}",
            path=str(path),
            line=int(line.group(1)) if line else None,
        ) from None
    try:
        model = PolicyFileModel.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = err["loc"]
        where = ".".join(str(p) for p in loc)
        raise ConfigError(
            f"{where}: {err['msg']}",
            path=str(path),
            line=_line_of(text, loc),
            hint="see docs/policy.md for the rule format",
        ) from None
    seen: set[str] = set()
    for index, rule in enumerate(model.rule):
        if rule.id in seen:
            raise ConfigError(
                f"rule id {rule.id!r} is used twice",
                path=str(path),
                line=_line_of(text, ("rule", index)),
            )
        seen.add(rule.id)
    return model


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of the ``[[rule]]`` or ``[program.NAME]`` (and key) an error points at."""
    lines = text.splitlines()
    start = 0
    if len(loc) >= 2 and loc[0] == "program" and isinstance(loc[1], str):
        return _program_line(lines, loc[1], loc[2] if len(loc) >= 3 else None, loc[3:4])
    if len(loc) >= 2 and loc[0] == "rule" and isinstance(loc[1], int):
        headers = [i for i, ln in enumerate(lines) if re.match(r"\s*\[\[\s*rule\s*\]\]", ln)]
        if loc[1] >= len(headers):
            return None
        start = headers[loc[1]]
        key = loc[2] if len(loc) >= 3 else None
        end = next((h for h in headers if h > start), len(lines))
        if isinstance(key, str):
            for i in range(start, end):
                if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
                    return i + 1
        return start + 1
    key = loc[-1] if loc else None
    if isinstance(key, str):
        for i, ln in enumerate(lines):
            if re.match(rf"\s*{re.escape(key)}\s*=", ln) or ln.strip() == f"[{key}]":
                return i + 1
    return None


def _program_line(
    lines: list[str], name: str, key: int | str | None, index: tuple[int | str, ...]
) -> int | None:
    quoted = re.escape(name) if re.fullmatch(r"[\w-]+", name) else f'"{re.escape(name)}"'
    header = re.compile(rf"\s*\[\s*program\s*\.\s*{quoted}\s*\]")
    start = next((i for i, ln in enumerate(lines) if header.match(ln)), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines)
    )
    if not isinstance(key, str):
        return start + 1
    for i in range(start, end):
        if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
            if index and isinstance(index[0], int):
                return _nth_item_line(lines, i, end, index[0])
            return i + 1
    return start + 1


def _nth_item_line(lines: list[str], first: int, end: int, n: int) -> int:
    """The line of the n-th string of a multi-line TOML array starting at line ``first``."""
    count = -1
    for i in range(first, end):
        text = lines[i].split("=", 1)[1] if i == first else lines[i]
        count += len(re.findall(r'"(?:[^"\\]|\\.)*"', text))
        if count >= n:
            return i + 1
    return first + 1
