"""Read an argv against a program spec the way getopt_long does, and say what it does.

Long options resolve to an exact spelling or else a unique prefix (``--out`` is
``--output`` when nothing else starts so; an ambiguous prefix is a problem); ``--opt=v``,
``--opt v``, ``-ov``, ``-o v``, clustered short options (``-rfv``), ``--`` and GNU argument
permutation are handled. Anything the spec does not know — an unknown or ambiguous option,
a missing value, a word only known at run time where an option could stand — is a
*problem*: the engine asks about the command, never allows it.

``Reading`` then carries the paths written and read, the traits (``executes``,
``changes-state``, ``network`` …) and the program text for the script readers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shellagent.policy.specs import OptionSpec, ProgramSpec, Specs
from shellagent.policy.words import Word

_MAX_SUBCOMMAND_DEPTH = 3
_NUMBER = re.compile(r"-[0-9]+")

# option effect or operand role -> trait
EFFECT_TRAITS = {
    "exec": "executes",
    "network": "network",
    "sends": "sends-data",
    "lookup": "lookup",
    "state": "changes-state",
    "script-file": "script-file",
}


@dataclass
class Seen:
    """One option as it appeared: its spec, spelling and value words."""

    option: str  # the spelling as written, a long prefix resolved
    values: tuple[Word, ...]
    effects: frozenset[str]
    forms: tuple[str, ...] = ()  # every spelling of this option in the spec


@dataclass
class Reading:
    """An argv read through specs (one per subcommand level)."""

    specs: list[ProgramSpec] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    global_seen: list[Seen] = field(default_factory=list)  # before the first subcommand
    operands: list[Word] = field(default_factory=list)
    subcommands: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    dynamic_writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    traits: set[str] = field(default_factory=set)
    effects: list[str] = field(default_factory=list)  # sentences: what it changes, and how
    scripts: list[str] = field(default_factory=list)  # program text for the script reader
    ended: bool = False  # "--" (or stop_at_operand) ended the options of the last level

    @property
    def spec(self) -> ProgramSpec | None:
        return self.specs[-1] if self.specs else None


def read(specs: Specs, key: str, argv: tuple[Word, ...]) -> Reading | None:
    """Read ``argv`` (argv[0] is the program) with the spec ``key``; None if it has none."""
    spec = specs.get(key)
    if spec is None:
        return None
    reading = Reading(specs=[spec])
    _Reader(specs, reading).run(spec, list(argv[1:]), key)
    _judge(reading)
    return reading


class _Reader:
    def __init__(self, specs: Specs, reading: Reading) -> None:
        self.specs = specs
        self.r = reading

    def run(self, spec: ProgramSpec, words: list[Word], key: str) -> None:
        operands: list[Word] = []
        ended = False
        i = 0
        level_seen: list[Seen] = []
        while i < len(words):
            w = words[i]
            i += 1
            t = w.text
            could_be_option = not ended and not (spec.model.stop_at_operand and operands)
            if not w.static or w.leading_glob:
                if spec.model.subcommands != "none" and not operands and not ended:
                    self.r.problems.append(f"the subcommand of {key} is only known when it runs")
                elif could_be_option and spec.acts:
                    way = "./" + t if w.leading_glob else f"-- {t}"
                    self.r.problems.append(
                        f"{t} is only known when it runs and could be an option of {key} "
                        f"(written {way} it could not)"
                    )
                operands.append(w)
                continue
            if spec.model.response_files and t.startswith("@") and not ended:
                self.r.problems.append(f"{t} makes {key} read more options from a file")
            if not could_be_option or t == "-" or not t.startswith("-"):
                if spec.model.subcommands != "none" and not operands and not ended:
                    child = f"{key} {t}"
                    if child in self.specs.programs and len(self.r.specs) < _MAX_SUBCOMMAND_DEPTH:
                        self._descend(child, words[i:], level_seen)
                        return
                    if spec.model.subcommands == "required":
                        self.r.seen.extend(level_seen)
                        if len(self.r.specs) == 1:
                            self.r.global_seen.extend(level_seen)
                        self.r.subcommands.append(t)
                        self.r.problems.append(f"no spec of `{child}`: its options are unknown")
                        return
                operands.append(w)
                continue
            if t == "--":
                ended = True
                continue
            found, i = self._option(spec, key, words, i, t)
            if found is None:
                if spec.model.unknown_options == "operand":
                    operands.append(w)
                    ended = True
                continue
            level_seen.extend(found)
        self.r.seen.extend(level_seen)
        if len(self.r.specs) == 1:
            self.r.global_seen.extend(level_seen)
        self.r.operands = operands
        self.r.ended = ended or bool(spec.model.stop_at_operand and operands)

    def _descend(self, child: str, rest: list[Word], level_seen: list[Seen]) -> None:
        self.r.seen.extend(level_seen)
        if len(self.r.specs) == 1:
            self.r.global_seen.extend(level_seen)
        self.r.subcommands.append(child.rsplit(" ", 1)[-1])
        spec = self.specs.programs[child]
        self.r.specs.append(spec)
        self.run(spec, rest, child)

    def _option(
        self, spec: ProgramSpec, key: str, words: list[Word], i: int, t: str
    ) -> tuple[list[Seen] | None, int]:
        """Read the option word ``t`` (already consumed); return what it was and the index."""
        if spec.model.style == "words":
            opt = spec.by_form.get(t)
            if opt is None:
                self._unknown(spec, f"unknown option {t} of {key}")
                return None, i
            return self._values(opt, t, words, i, key)
        if t.startswith("--"):
            name, eq, attached = t.partition("=")
            opt, problem = spec.resolve_long(name)
            if opt is None:
                self._unknown(spec, f"{problem} of {key}")
                return None, i
            if eq:
                if opt.values == 0:
                    self.r.problems.append(f"option {opt.name} of {key} takes no value")
                return [Seen(opt.name, (Word(attached),), opt.effects, opt.forms)], i
            if opt.optional:
                return [Seen(opt.name, (), opt.effects, opt.forms)], i
            return self._values(opt, opt.name, words, i, key)
        if spec.model.numeric_options and _NUMBER.fullmatch(t):
            return [Seen("-NUM", (Word(t[1:]),), frozenset(), ("-NUM",))], i
        found: list[Seen] = []
        for j, ch in enumerate(t[1:], start=1):
            form = "-" + ch
            opt = spec.by_form.get(form)
            if opt is None:
                if spec.model.numeric_options and ch.isdigit() and j == 1:
                    continue
                self._unknown(spec, f"unknown option {form} of {key}")
                return None, i
            if opt.values == 0:
                found.append(Seen(form, (), opt.effects, opt.forms))
                continue
            rest = t[j + 1 :]
            if rest:
                found.append(Seen(form, (Word(rest),), opt.effects, opt.forms))
                return found, i
            if opt.optional:
                found.append(Seen(form, (), opt.effects, opt.forms))
                return found, i
            more, i = self._values(opt, form, words, i, key)
            return found + (more or []), i
        return found, i

    def _values(
        self, opt: OptionSpec, form: str, words: list[Word], i: int, key: str
    ) -> tuple[list[Seen] | None, int]:
        if opt.values == 0 or opt.optional:
            return [Seen(form, (), opt.effects, opt.forms)], i
        if opt.values < 0:  # find -exec COMMAND ... ;
            j = i
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            return [Seen(form, tuple(words[i:j]), opt.effects, opt.forms)], min(j + 1, len(words))
        if i + opt.values > len(words):
            self.r.problems.append(f"option {form} of {key} lacks its value")
            return [Seen(form, tuple(words[i:]), opt.effects, opt.forms)], len(words)
        values = tuple(words[i : i + opt.values])
        return [Seen(form, values, opt.effects, opt.forms)], i + opt.values

    def _unknown(self, spec: ProgramSpec, problem: str) -> None:
        if spec.model.unknown_options != "operand":
            self.r.problems.append(problem)


def _judge(r: Reading) -> None:
    """Turn options and operands into paths written and read, traits and scripts."""
    spec = r.spec
    assert spec is not None
    model = spec.model
    all_effects: set[str] = set()
    target_given = False
    for effect in model.effects:
        if effect in EFFECT_TRAITS:
            r.traits.add(EFFECT_TRAITS[effect])
            r.effects.append(f"{spec.key} {_EFFECT_WORDS[effect]}")
        elif effect == "write":
            r.writes.append(".")
            r.effects.append(f"{spec.key} writes files")
    for s in r.seen:
        all_effects |= s.effects
        value = s.values[0] if s.values else None
        for effect in s.effects:
            if effect in ("write", "target"):
                target_given |= effect == "target"
                if value is None:
                    r.writes.append(".")
                elif value.static:
                    r.writes.append(value.text)
                else:
                    r.dynamic_writes.append(value.text)
                r.effects.append(f"{s.option} writes {value.text if value else 'files'}")
            elif effect == "read":
                # every value: jq --rawfile NAME FILE names the file second
                r.reads += [v.text for v in s.values]
            elif effect == "script" and value is not None:
                if value.static:
                    r.scripts.append(value.text)
                else:
                    r.traits.add("script-file")
                    r.effects.append(f"the program text of {s.option} is only known when it runs")
            elif effect in EFFECT_TRAITS:
                r.traits.add(EFFECT_TRAITS[effect])
                r.effects.append(f"{s.option} {_EFFECT_WORDS[effect]}")
    roles = list(model.operands)
    if all_effects & {"script", "script-file"}:
        roles = [role for role in roles if role != "script"] or ["read"]
    operands = list(r.operands)
    for index, w in enumerate(operands):
        later = range(index + 1, max(index + 2, len(roles) + 1))
        acted_on = {roles[min(j, len(roles) - 1)] for j in later} - {"read", "text"}
        destination = model.last_operand == "write" and index == len(operands) - 1
        if splits(w) and (acted_on or destination):
            r.problems.append(
                f"{w.text} may become several words, and one of them an operand that "
                f"{spec.key} writes or acts on"
            )
    if model.last_operand == "write" and not target_given and len(operands) >= 2:
        last = operands.pop()
        (r.writes if last.static else r.dynamic_writes).append(last.text)
    for index, w in enumerate(operands):
        role = roles[min(index, len(roles) - 1)]
        if spec.text_operands is not None and w.static and spec.text_operands.search(w.text):
            role = "text"
        if "write-operands" in all_effects and role == "read":
            role = "write"
        if "read-operands" in all_effects and role not in ("read", "text"):
            role = "read" if role == "write" else "text"
        _operand(r, spec.key, w, role)


def appended_problems(r: Reading, program: str) -> list[str]:
    """Why words added after the argv when it runs (``xargs PROGRAM …``) may do more than
    name what the program reads: options where one that acts could stand, or operands the
    program writes or acts on. After ``--`` only operands can come."""
    spec = r.spec
    assert spec is not None
    if not r.ended:
        if spec.acts:
            return [f"{program} gets arguments only known when it runs, which could be options"]
        return []
    roles = spec.model.operands
    later = {roles[min(j, len(roles) - 1)] for j in range(len(r.operands), len(roles) + 1)}
    if later - {"read", "text"} or spec.model.last_operand == "write":
        return [f"{program} gets operands only known when it runs, which it writes or acts on"]
    return []


def splits(w: Word) -> bool:
    """Whether a word may become several words when it runs: a glob, an unquoted expansion
    (``$v``, ``{a,b}``, ``$(cmd)``), ``"$@"`` or ``"${a[@]}"`` (``uniq -- *`` in a folder of
    two files names uniq's output file)."""
    if w.glob:
        return True
    if w.static:
        return False
    whole = w.text.startswith('"') and w.text.endswith('"') and w.text.count('"') == 2
    return not whole or "@" in w.text


def _operand(r: Reading, key: str, w: Word, role: str) -> None:
    if role == "read":
        r.reads.append(w.text)
    elif role == "write":
        (r.writes if w.static else r.dynamic_writes).append(w.text)
        r.effects.append(f"{key} writes {w.text}")
    elif role == "script":
        if w.static:
            r.scripts.append(w.text)
        else:
            r.traits.add("script-file")
            r.effects.append(f"the program text of {key} is only known when it runs")
    elif role in EFFECT_TRAITS:
        r.traits.add(EFFECT_TRAITS[role])
        r.effects.append(f"{key} {w.text} {_EFFECT_WORDS[role]}")


_EFFECT_WORDS = {
    "exec": "runs another program or code",
    "network": "uses the network",
    "sends": "sends data over the network",
    "lookup": "makes a network lookup",
    "state": "changes state outside files",
    "script-file": "reads program text from a file the policy cannot see",
}
