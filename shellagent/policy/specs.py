"""Program specs: every option an auto-allowed program accepts, and what each one does.

A spec is data (``[program.NAME]`` tables in ``policies/programs.toml`` or in any policy
file). Each option is one string written the way ``--help`` prints it, followed by its
effects::

    "-o, --output=FILE -> write"     # -o FILE, -oFILE, --output FILE, --output=FILE, --out=…
    "--color[=WHEN]"                 # an optional value: only --color=WHEN
    "-n NUM"                         # a short option with a value
    "-i[SUFFIX], --in-place[=SUFFIX] -> write-operands"
    "-fprintf FILE FORMAT -> write"  # style = "words" (find): two values, no clustering

Effects of an option: ``write`` / ``read`` (its value is a path written / read),
``target`` (its value is the directory written, as ``mv -t DIR``), ``exec`` (runs another
program or code), ``network``, ``sends`` (sends data the command chooses over the
network), ``lookup`` (a DNS query or ping), ``state`` (changes something outside files: the
clock, the host name, a repository's refs, the journal), ``script`` (its value is program
text for the program's script reader), ``script-file`` (program text from a file the
policy cannot see), ``write-operands`` (operands are written, as ``sed -i``) and
``read-operands`` (operands are only read, as ``gzip -c`` or ``git branch --list``).

Operands have roles, one per position, the last repeating: ``read``, ``write``, ``text``
(not a path), ``script``, ``script-file``, ``state``, ``exec``, ``lookup``, ``network``.
A program with subcommands (git, apt, ip) has one spec per subcommand, keyed by the words:
``[program."git status"]``, ``[program."git remote add"]``.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator

OPTION_EFFECTS = (
    "write",
    "read",
    "target",
    "exec",
    "network",
    "sends",
    "lookup",
    "state",
    "script",
    "script-file",
    "write-operands",
    "read-operands",
)
OPERAND_ROLES = (
    "read",
    "write",
    "text",
    "script",
    "script-file",
    "state",
    "exec",
    "lookup",
    "network",
)
# Effects (of options or operands) that mean the command may change something.
CHANGING = frozenset(
    {"write", "target", "exec", "network", "sends", "state", "script-file", "write-operands"}
)
_SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_FORM = re.compile(
    r"^(?P<name>--?[A-Za-z0-9?@#][\w.?@#+-]*)"
    r"(?:(?P<opt>\[=?[^\]\s]+\])|=(?P<long>\S+)|(?P<sep>(?: [A-Z<][\w<>.:-]*)+)(?P<more>\.\.\.)?)?$"
)


@dataclass(frozen=True)
class OptionSpec:
    """One option: its spellings, how many values it takes, and what it does."""

    forms: tuple[str, ...]
    values: int = 0  # words of value; -1: every word up to ';' or '+' (find -exec)
    optional: bool = False  # the value may only be attached (--color=WHEN, -i.bak)
    effects: frozenset[str] = frozenset()
    text: str = ""

    @property
    def name(self) -> str:
        """How reasons show it: the long form if there is one."""
        longs = [f for f in self.forms if f.startswith("--")]
        return longs[0] if longs else self.forms[0]


def parse_option(text: str) -> OptionSpec:
    """Read one option string; raise ``ValueError`` naming what is wrong."""
    head, arrow, tail = text.partition("->")
    effects = frozenset(e.strip() for e in tail.split(",") if e.strip()) if arrow else frozenset()
    unknown = sorted(effects - set(OPTION_EFFECTS))
    if unknown:
        raise ValueError(
            f"option {head.strip()!r}: unknown effect {unknown[0]!r}; "
            f"known: {', '.join(OPTION_EFFECTS)}"
        )
    if arrow and not effects:
        raise ValueError(f"option {head.strip()!r}: '->' without an effect")
    forms: list[str] = []
    values, optional = 0, False
    for part in (p.strip() for p in head.split(",")):
        m = _FORM.match(part)
        if not m:
            raise ValueError(f"cannot read option {part!r} in {text!r}")
        forms.append(m.group("name"))
        if m.group("opt"):
            values, optional = 1, True
        elif m.group("long"):
            values = 1
        elif m.group("sep"):
            values = -1 if m.group("more") else len(m.group("sep").split())
    if not forms:
        raise ValueError(f"no option in {text!r}")
    return OptionSpec(tuple(forms), values, optional, effects, text)


def _option_text(text: str) -> str:
    parse_option(text)
    return text


OptionText = Annotated[str, AfterValidator(_option_text)]


class ProgramModel(BaseModel):
    """One ``[program.NAME]`` table as written in a policy or spec file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    options: list[OptionText] = []
    operands: list[str] = ["read"]
    last_operand: Literal["", "write"] = ""  # cp, ln: the last of two or more is written
    text_operands: str | None = None  # operands matching this regex are text (date +FMT)
    subcommands: Literal["none", "required", "optional"] = "none"
    numeric_options: bool = False  # -NUM is an option with a value (head -20)
    stop_at_operand: bool = False  # the first operand ends the options (POSIX, echo)
    unknown_options: Literal["ask", "operand"] = "ask"  # echo prints what it does not know
    style: Literal["getopt", "words"] = "getopt"
    script: Literal["", "sed", "awk", "dc", "set", "shopt", "shell"] = (
        ""  # reader for the program text
    )
    resolve: bool = False  # judge it as the installed implementation (awk: mawk/gawk …)
    effects: list[str] = []  # what running it at this level always does (git stash: state)
    response_files: bool = False  # @FILE reads more options from FILE (binutils: strings)

    @field_validator("operands")
    @classmethod
    def _roles_known(cls, value: list[str]) -> list[str]:
        return only_known(value, OPERAND_ROLES, "operand role")

    @field_validator("effects")
    @classmethod
    def _effects_known(cls, value: list[str]) -> list[str]:
        return only_known(value, OPTION_EFFECTS, "effect")

    @field_validator("text_operands")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return compiled_or_none(value, "text_operands")


def compiled_or_none(value: str | None, what: str) -> str | None:
    """``value`` if it is None or a regular expression that compiles; else the error a
    policy file shows."""
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"{what} does not compile: {exc}") from None
    return value


def only_known(value: list[str], known: tuple[str, ...], what: str) -> list[str]:
    """``value`` if every item is one of ``known``; else the error a policy file shows."""
    unknown = [v for v in value if v not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r}; known: {', '.join(known)}")
    return value


@dataclass(frozen=True)
class ProgramSpec:
    """A spec ready for reading argvs: options indexed by spelling."""

    key: str
    model: ProgramModel
    options: tuple[OptionSpec, ...]
    by_form: dict[str, OptionSpec]
    longs: tuple[str, ...]  # sorted --long spellings, for prefix resolution
    source: str
    text_operands: re.Pattern[str] | None = None

    @classmethod
    def build(cls, key: str, model: ProgramModel, source: str) -> ProgramSpec:
        options = tuple(parse_option(t) for t in model.options)
        by_form: dict[str, OptionSpec] = {}
        for opt in options:
            for form in opt.forms:
                by_form[form] = opt
        longs = tuple(sorted(f for f in by_form if f.startswith("--")))
        regex = re.compile(model.text_operands) if model.text_operands else None
        return cls(key, model, options, by_form, longs, source, regex)

    @property
    def changes(self) -> bool:
        """Whether some option or operand role of this program can change something."""
        return (
            bool(set(self.model.effects) & CHANGING)
            or any(o.effects & CHANGING for o in self.options)
            or any(
                r in ("write", "state", "exec", "script-file", "network")
                for r in self.model.operands
            )
        )

    @property
    def acts(self) -> bool:
        """Whether an option could make this program do more than change what it prints:
        change something (``changes``), read a file it names (``jq --rawfile``, ``wc
        --files0-from``), take program text, or read more options from ``@FILE``. A word
        only known at run time where such an option could stand is asked about."""
        return (
            self.changes
            or self.model.response_files
            or any(o.effects - {"read-operands"} for o in self.options)
        )

    def resolve_long(self, name: str) -> tuple[OptionSpec | None, str]:
        """``--name`` as getopt_long reads it: exact, else a unique prefix; or a problem."""
        exact = self.by_form.get(name)
        if exact is not None:
            return exact, ""
        candidates = {self.by_form[f] for f in self.longs if f.startswith(name)}
        if len(candidates) == 1:
            return candidates.pop(), ""
        if candidates:
            shown = ", ".join(sorted(o.name for o in candidates)[:4])
            return None, f"ambiguous option {name} (could be {shown})"
        return None, f"unknown option {name}"


@dataclass
class Specs:
    """Every spec by key, and which installed implementation a program name runs."""

    programs: dict[str, ProgramSpec] = field(default_factory=dict)
    _resolved: dict[str, str] = field(default_factory=dict)

    def add(self, key: str, model: ProgramModel, source: str) -> None:
        self.programs[key] = ProgramSpec.build(key, model, source)

    def get(self, key: str) -> ProgramSpec | None:
        return self.programs.get(key)

    def key_for(self, program: str, executable: str | None, via_busybox: bool) -> str:
        """The spec key for ``program``: ``mawk`` for an ``awk`` that is mawk, and so on."""
        if via_busybox:
            return f"busybox {program}"
        spec = self.programs.get(program)
        if spec is None or not spec.model.resolve:
            return program
        cache_key = executable or program
        if cache_key not in self._resolved:
            self._resolved[cache_key] = self._implementation(program, executable)
        return self._resolved[cache_key]

    def _implementation(self, program: str, executable: str | None) -> str:
        found = executable if executable else shutil.which(program, path=_SEARCH_PATH)
        if not found:
            return program
        real = os.path.basename(os.path.realpath(found))
        if real == "busybox":
            return f"busybox {program}"
        if real != program and real in self.programs:
            return real
        # A name the specs do not know (e.g. original-awk): no spec, so never allowed.
        return program if real == program else f"{program} ({real})"
