"""The decision: every simple command in a line is judged, the strictest one decides.

``PolicyEngine.check`` parses the line, unwraps wrappers, parses ``bash -c``/``eval``
scripts again, reads each segment's argv through its program spec, and judges it twice:
structurally (things no rule may allow: syntax errors, a program name only known at run
time, a program in a writable directory, a shell function, command substitution,
environment prefixes) and by the policy's rules (strictest matching rule; ``otherwise``
rules only when nothing else matched; unknown programs ask). An allow needs a spec that
read every option; a ``read_only`` rule allows only what the spec shows changes nothing.
``deny`` beats ``ask`` beats ``allow`` (``Decision``'s order).
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from shellagent.errors import InputError
from shellagent.policy import gitplace, options, sensitive
from shellagent.policy.always import SCOPES, AlwaysStore, describe
from shellagent.policy.decision import Decision, Evaluation, Segment
from shellagent.policy.drafts import (
    BASH_EVALUATES,
    Draft,
    command_draft,
    draft_key,
    exports_functions,
    has_short_flag,
    inner_draft,
    mark_downloads_to_shell,
    mark_fork_bombs,
    mark_uncertain_cwd,
    named_assignments,
)
from shellagent.policy.parse import BashParser, Parsed, RawCommand
from shellagent.policy.pathclass import Places, home_of, writable_program
from shellagent.policy.programs import Args, Effects, args_of, effects
from shellagent.policy.rules import CHANGE_TRAITS, Facts, Policy, Rule
from shellagent.policy.values import (
    Carried,
    CarriedSource,
    Flow,
    judge,
    trivial,
)
from shellagent.policy.words import Word
from shellagent.policy.wrappers import unwrap

_MAX_DEPTH = 4
_MAX_LENGTH = 64_000
_PSEUDO = {
    "function": "function",
    "declare": "",
    "unset": "unset",
    "assign": "(assignment)",
    "redirect": "(redirect)",
}


@dataclass(frozen=True)
class ShellState:
    """What the persistent shell reported after its last command.

    ``refuted`` holds commands (stripped text) that were allowed as read-only earlier in the
    session but that the kernel caught changing something: they are judged as writers now.
    ``carried`` gives the variables the earlier commands left (or a function that reads them
    from the sandbox when a command needs them); None means they are not known, so a value
    bash would evaluate as code (``$((v))``, ``${!v}``) is asked about.
    """

    functions: frozenset[str] = frozenset()
    cwd: Path | None = None
    refuted: frozenset[str] = frozenset()
    carried: CarriedSource | None = None


# git subcommands that read no repository (so no config of one)
_GIT_WITHOUT_REPOSITORY = frozenset({"version", "help", ""})


class PolicyEngine:
    def __init__(
        self,
        policy: Policy,
        *,
        workspace: Path | None = None,
        writable: list[Path] | None = None,
        home: Path | None = None,
        always: AlwaysStore | None = None,
    ) -> None:
        self.policy = policy
        self.home = home_of(home)
        self.workspace = str(workspace) if workspace is not None else None
        # whether the session's starting directory held a .git when the engine was made
        # (None: the directory is not there to look at). Without one, git there would use
        # a repository made during the session: a .git, or a bare-repository look-alike.
        self.starting_repo = (
            (workspace / ".git").exists() if workspace is not None and workspace.is_dir() else None
        )
        self.writable = [str(p) for p in writable or []]
        self.always = always if always is not None else AlwaysStore(None)

    @classmethod
    def load(
        cls,
        paths: list[Path] | None = None,
        *,
        workspace: Path | None = None,
        writable: list[Path] | None = None,
        home: Path | None = None,
    ) -> PolicyEngine:
        """Load ``paths`` in order, or the preset ``config.toml`` names (``policy.preset``,
        the default policy unless set) plus the user's ``policy.toml``."""
        from shellagent.paths import config_dir
        from shellagent.policy.rules import load_policy
        from shellagent.policy.sources import configured_preset

        if paths is None:
            user = config_dir() / "policy.toml"
            paths = [configured_preset()] + ([user] if user.exists() else [])
        store = AlwaysStore(config_dir() / "always.toml")
        return cls(
            load_policy(paths), workspace=workspace, writable=writable, home=home, always=store
        )

    def check(self, command: str, state: ShellState | None = None) -> Evaluation:
        """Judge one command line before it runs; nothing is run or written.

        Parameters:

        * ``command`` - the line exactly as bash would get it: one or more commands joined by
          ``;``, ``&&``, ``|``, newlines, with substitutions, ``bash -c`` scripts and the like
          (every simple command in it is judged, scripts given to a shell up to 4 levels deep).
        * ``state`` - what the session's shell reported after its last command (``ShellState``):
          its working directory (relative paths and the git check are judged there; without
          one, the engine's ``workspace``), the shell functions it defines, commands the kernel
          caught writing after they were allowed as read-only, and the variables it carries.
          None means a fresh shell in the workspace.

        Returns an ``Evaluation``: ``decision`` is the strictest of the segments' decisions
        (``Decision.DENY`` > ``ASK`` > ``ALLOW``); ``reasons`` say why, each prefixed with the
        segment it concerns; ``segments`` has one ``Segment`` per simple command (its argv
        after unwrapping ``sudo``/``env``/…, its program, decision, reasons, the ids of the
        rules that matched, what it writes); ``read_only`` is true when it is allowed only
        because nothing in it changes anything. Special cases: an empty line is ``ALLOW``
        with no segment; a line longer than 64,000 characters, a line bash may not parse as
        shown, or one with no command in it is at least ``ASK``; a line in
        ``state.refuted`` that would be allowed read-only is ``ASK``.

        Raises nothing of its own: a line that does not parse is an ``ASK``, never an error.
        When ``state.carried`` is a function (reading the variables from the sandbox), it is
        called at most once, only if the line expands a variable whose value matters, and
        what it raises propagates.

            >>> engine = PolicyEngine.load(workspace=Path.cwd())
            >>> evaluation = engine.check("ls -la && rm -rf build")
            >>> evaluation.decision
            <Decision.ASK: 'ask'>
            >>> [(s.program, s.decision.word) for s in evaluation.segments]
            [('ls', 'allow'), ('rm', 'ask')]
            >>> evaluation.reasons[0]
            'rm -rf build: creates, moves, changes or deletes files'

        The engine is not safe to share between threads (its bash parser is not): give each
        thread its own.
        """
        state = state or ShellState()
        if not command.strip():
            return Evaluation(Decision.ALLOW, ("empty command: nothing runs",), (), command)
        if len(command) > _MAX_LENGTH:
            return Evaluation(
                Decision.ASK, (f"command is longer than {_MAX_LENGTH} characters",), (), command
            )
        cwd = str(state.cwd) if state.cwd is not None else self.workspace
        places = Places(self.home, self.workspace, cwd)
        parser = BashParser(self.home)
        parsed = parser.parse(command)
        drafts = self._drafts(parsed, parser)
        mark_downloads_to_shell(drafts)
        mark_fork_bombs(drafts)
        mark_uncertain_cwd(drafts)
        functions = state.functions | set(parsed.functions)
        segments = [self._judge(d, places, functions, state, command) for d in drafts]
        carried = _Lazy(state.carried)
        segments += self._evaluated(parsed.flow, carried)
        segments += _unread(parsed.unread)
        evaluation = _combine(command, parsed.errors, segments)
        evaluation = dataclasses.replace(evaluation, substitutions=tuple(sorted(parsed.judged)))
        if evaluation.decision != Decision.ALLOW and state.carried is not None:
            evaluation = dataclasses.replace(evaluation, carried=_shown(parsed.flow, carried()))
        if evaluation.read_only and command.strip() in state.refuted:
            return Evaluation(
                Decision.ASK,
                (
                    "it was allowed as read-only earlier, but the kernel stopped it changing "
                    "something: it is judged as a writer now",
                ),
                tuple(dataclasses.replace(s, read_only=False) for s in segments),
                command,
                substitutions=evaluation.substitutions,
            )
        return evaluation

    def _evaluated(self, flow: Flow, carried: _Lazy) -> list[Segment]:
        """Segments for what bash evaluates as code (values.py): a value of a variable
        that is not a plain integer in arithmetic, not a plain name in ``${!x}``; a loop or
        arithmetic that sets a variable that makes programs run code."""
        reasons: dict[str, list[tuple[Decision, str]]] = {}
        needed = any(not u.shadowed for u in flow.uses) or bool(flow.texts)
        for f in judge(flow, carried() if needed else None):
            reasons.setdefault(f.where, []).append((f.decision, f.reason))
        for name in [*flow.loop_names, *flow.arith_assigned]:
            if self.policy.is_dangerous(name):
                reasons.setdefault(name, []).append(
                    (Decision.ASK, f"sets {name}, which can make programs run other code")
                )
        segments = []
        for where, found in reasons.items():
            decision = max(Decision.ASK, *(d for d, _ in found))
            segments.append(
                Segment(
                    key=where,
                    argv=(),
                    program="(evaluation)",
                    decision=decision,
                    reasons=tuple(dict.fromkeys(r for d, r in found if d == decision)),
                    traits=("evaluates",),
                    rememberable=False,
                    asked_by=("structure",),
                )
            )
        return segments

    def remember_always(
        self, evaluation_or_command: Evaluation | str, scope: str, cwd: Path
    ) -> str:
        """Store each approved segment exactly; return the sentence to show the user."""
        if scope not in SCOPES:
            raise InputError(f"unknown scope {scope!r}", hint=f"use one of {', '.join(SCOPES)}")
        evaluation = evaluation_or_command
        if isinstance(evaluation, str):
            evaluation = self.check(evaluation, ShellState(cwd=cwd))
        segments = evaluation.segments
        denied = [s.key for s in segments if s.decision == Decision.DENY]
        if denied:
            raise InputError(f"`{denied[0]}` is denied by the policy and cannot be always allowed")
        fixed = [s.key for s in segments if s.decision == Decision.ASK and not s.rememberable]
        if fixed or (evaluation.decision != Decision.ALLOW and not segments):
            what = f"`{fixed[0]}`" if fixed else "this command"
            raise InputError(
                f"{what} cannot be always allowed: the policy must ask each time",
                hint="its program or arguments are only known when it runs",
            )
        keys = list(dict.fromkeys(s.key for s in segments if s.decision == Decision.ASK))
        if not keys:
            return "Nothing to remember: every part of this command is already allowed."
        self.always.add(keys, scope, cwd)
        return describe(keys, scope, cwd)

    def _drafts(self, parsed: Parsed, parser: BashParser) -> list[Draft]:
        """One draft per simple command of the line, scripts given to a shell included.

        A worklist of command indexes into ``parsed.commands``, first in, first out. It
        starts with the commands the line's parse found; a static script given to a shell
        (``bash -c``, ``eval``, ``su -c`` …) is parsed into ``parsed`` and the commands it adds
        join the end of the worklist, so drafts come in the order the commands were found.
        ``depth`` maps a command's index to the script depth of the commands it contains (its
        scripts' and its substitutions'); a script deeper than ``_MAX_DEPTH`` is not followed,
        and its command is asked about instead.
        """
        drafts: list[Draft] = []
        depth: dict[int, int] = {}
        work = deque(range(len(parsed.commands)))
        while work:
            i = work.popleft()
            raw = parsed.commands[i]
            if raw.kind != "command":
                drafts.append(self._pseudo(raw, i))
                continue
            unwrapped = unwrap(list(raw.words))
            draft = command_draft(raw, i, unwrapped)
            drafts.append(draft)
            level = depth.get(raw.parent, 0) if raw.parent is not None else 0
            for context, script in unwrapped.scripts:
                if not script.static:
                    draft.structural.append(f"runs a {context} script only known when it runs")
                elif level + 1 > _MAX_DEPTH:
                    draft.structural.append("scripts nested too deeply to follow")
                else:
                    first = len(parsed.commands)
                    errors_before = len(parsed.errors)
                    parser.parse(script.text, parsed, context=context, parent=i)
                    if len(parsed.errors) > errors_before:
                        draft.structural.append(
                            f"its {context} script does not parse: {parsed.errors.pop()}"
                        )
                    added = range(first, len(parsed.commands))
                    depth.update(dict.fromkeys(added, level + 1))
                    depth[i] = level + 1
                    work.extend(added)
            drafts.extend(inner_draft(raw, i, context, inner) for context, inner in unwrapped.inner)
        return drafts

    def _args(self, d: Draft) -> Args:
        """Read the argv through the program's spec (resolved to the installed one)."""
        specs = self.policy.specs
        key = specs.key_for(d.program, d.executable, "busybox" in d.wrappers)
        return args_of(d.program, tuple(d.argv), options.read(specs, key, tuple(d.argv)))

    @staticmethod
    def _pseudo(raw: RawCommand, index: int) -> Draft:
        program = _PSEUDO[raw.kind] or (raw.words[0].text if raw.words else "declare")
        words = list(raw.words) if raw.kind in ("declare", "unset") else [Word(program)]
        if raw.kind == "function":
            words = [Word("function"), *raw.words]
        return Draft(
            raw, index, words, words, program, raw.context, assignments=list(raw.assignments)
        )

    def _judge(
        self,
        d: Draft,
        places: Places,
        functions: set[str] | frozenset[str],
        state: ShellState,
        line: str,
    ) -> Segment:
        """One segment's verdict, in four steps: what about its shape needs asking (the
        program, substitutions, assignments), what it touches (its spec's effects, its
        redirections, the classes of the paths), which rules match, and the final verdict
        (always-allow, the read-only claim)."""
        reasons = self._shape_reasons(d, places, functions)
        fp = self._footprint(d, places, reasons)
        if d.program == "git" and fp.facts.args.subcommand not in _GIT_WITHOUT_REPOSITORY:
            elsewhere = gitplace.elsewhere(
                places,
                self.workspace,
                self.starting_repo,
                after_cd=d.uncertain_cwd,
                moved_to=gitplace.moved(fp.facts.args, places, line),
            )
            if elsewhere:
                reasons.append(elsewhere)
        verdict, rule_reasons, matched, sentences = self._rules_verdict(d, fp)
        asked_by = [r.id for r in matched if r.decision == verdict] or ["no-rule"]
        if verdict == Decision.ASK and not any(r.decision == Decision.ASK for r in matched):
            asked_by = ["effects" if matched or fp.problems == [] else "spec"]
        here = gitplace.here_words(fp.facts.args, places, line) if d.program == "git" else []
        dynamic = d.dynamic_args or any(
            (not w.static or w.leading_glob) and not any(w is h for h in here) for w in d.argv[1:]
        )
        if verdict == Decision.ALLOW and dynamic and not any(r.model.dynamic_args for r in matched):
            verdict, rule_reasons = (
                Decision.ASK,
                [f"{d.program}'s arguments are only known when it runs"],
            )
            asked_by = ["run-time-arguments"]
        key = draft_key(d)
        rememberable = not reasons and not dynamic
        if reasons:
            asked_by = ["structure"]
            verdict_final = max(verdict, Decision.ASK)
            all_reasons = rule_reasons + reasons if verdict == Decision.DENY else reasons
        else:
            verdict_final, all_reasons = verdict, rule_reasons
        read_only = (
            verdict_final == Decision.ALLOW
            and not fp.changing
            and not fp.shown_writes
            and all(r.model.read_only for r in matched if r.decision == Decision.ALLOW)
        )
        if verdict_final == Decision.ASK and rememberable:
            cwd = (
                None
                if d.uncertain_cwd
                else (state.cwd or (Path(places.cwd) if places.cwd else None))
            )
            scope = self.always.allows(key, cwd)
            if scope:
                verdict_final, all_reasons = Decision.ALLOW, [f"always allowed ({scope})"]
        return Segment(
            key=key,
            argv=tuple(w.text for w in d.argv),
            program=d.program,
            decision=verdict_final,
            reasons=tuple(dict.fromkeys(all_reasons)),
            executable=d.executable,
            wrappers=tuple(d.wrappers),
            assignments=tuple(f"{n}={v.text}" for n, v in [*d.raw.assignments, *d.assignments]),
            writes=tuple(fp.shown_writes),
            context=d.context,
            traits=tuple(sorted(fp.facts.traits)),
            rules=tuple(r.id for r in matched),
            effects=tuple(sentences),
            rememberable=rememberable,
            read_only=read_only,
            asked_by=tuple(asked_by) if verdict_final == Decision.ASK else (),
        )

    def _shape_reasons(
        self, d: Draft, places: Places, functions: set[str] | frozenset[str]
    ) -> list[str]:
        """Why the segment must be asked about whatever the rules say: a program only known
        at run time or in a writable place, a shell function, a command substitution, an
        assignment that can change what programs do."""
        reasons = list(d.structural)
        argv0 = d.argv[0] if d.argv else Word("")
        if d.raw.kind == "command":
            if not argv0.static or not argv0.text:
                reasons.append(
                    f"the program name {argv0.text or '(empty)'} is only known when it runs"
                )
            elif "/" in argv0.text:
                resolved = places.resolve(argv0.text)
                d.executable = resolved
                why = (
                    writable_program(resolved, places, self.writable)
                    if resolved
                    else f"runs {argv0.text} relative to an unknown directory"
                )
                if why:
                    reasons.append(why)
            if d.program in functions:
                reasons.append(f"it calls shell function {d.program} defined earlier")
        for w in d.full[1:] if d.raw.kind == "command" else d.full:
            if w.substitution:
                reasons.append(
                    f"uses command substitution {_short(w.text)}; its output is only "
                    "known when it runs"
                )
                break
        for name, value in [*d.raw.assignments, *d.assignments]:
            if value.substitution:
                reasons.append(f"sets {name} from a command substitution")
            if self.policy.is_dangerous(name):
                reasons.append(f"sets {name}, which can make programs run other code")
            elif d.raw.kind == "command" and name not in self.policy.safe_prefix:
                reasons.append(
                    f"sets {name} for {d.program or 'the command'}; environment "
                    "variables can change what a program does"
                )
        evaluated = [v for _, v in [*d.raw.assignments, *d.assignments]]
        if d.raw.kind in ("declare", "unset") or d.program in BASH_EVALUATES:
            evaluated += d.full[1:] if d.raw.kind == "command" else d.full
        arithmetic = [w for w in [*d.full, *evaluated] if "$((" in w.text or "$[" in w.text]
        evaluated += [Word(w.text.replace("$((", "").replace("$[", "")) for w in arithmetic]
        if any(w.static and ("$(" in w.text or "`" in w.text) for w in evaluated):
            reasons.append(
                "a quoted $( ) or backtick here can still run: bash evaluates array "
                "subscripts in variable names and arithmetic (a[$(cmd)])"
            )
        for target, how in named_assignments(d):
            if target is None:
                verb = "unsets" if how == "unset" else "sets"
                reasons.append(f"{how} {verb} a variable whose name is only known when it runs")
            elif target == "":
                reasons.append(f"{how} runs the given command for every few lines read")
            elif self.policy.is_dangerous(target):
                verb = "unsets" if how == "unset" else "sets"
                reasons.append(f"{how} {verb} {target}, which can make programs run other code")
        namerefs = d.program in ("declare", "typeset", "local")  # export -n only unexports
        if namerefs and any(has_short_flag(w, "n") for w in d.argv[1:]):
            reasons.append(
                f"{d.program} -n makes a name refer to another variable: what an assignment "
                "through it sets is not checked"
            )
        if exports_functions(d):
            reasons.append(
                f"{d.program} exports a function: every bash a later command starts runs it "
                "in place of the program of that name"
            )
        return reasons

    def _footprint(self, d: Draft, places: Places, reasons: list[str]) -> _Footprint:
        """What the segment touches: its spec's effects, its redirections, and the classes
        of every path it writes, reads or names (dynamic write targets add to ``reasons``)."""
        args = self._args(d)
        reading = args.reading
        problems = list(reading.problems) if reading is not None else []
        if reading is not None and d.dynamic_args and reading.spec:
            problems += options.appended_problems(reading, d.program)
        eff = effects(d.program, args)
        write_words: list[tuple[str, bool]] = [(p, False) for p in eff.writes]
        write_words += [(w.text, not w.static) for w in d.wrapper_writes]
        write_words += [(p, True) for p in eff.dynamic_writes]
        for p in eff.dynamic_writes:
            reasons.append(f"writes to {p}, a path only known when it runs")
        read_words = list(eff.reads)
        traits = set(d.traits | eff.traits)
        for r in d.raw.redirects if d.context not in ("find -exec", "find -execdir") else ():
            if _network_path(r.target.text):
                traits |= {"network", "network-redirect"}
            if r.writes_file:
                if not r.target.static:
                    reasons.append(f"writes to {r.target.text}, a path only known when it runs")
                write_words.append((r.target.text, not r.target.static))
            elif r.op in ("<", "<>") and r.target.static:
                read_words.append(r.target.text)
        write_classes: set[str] = set()
        shown_writes: list[str] = []
        for path, dynamic in write_words:
            classes = places.classify(path, dynamic=dynamic, glob=False)
            if "harmless-device" in classes:
                continue
            write_classes |= classes | {"any"}
            shown_writes.append(path)
        arg_classes: set[str] = set()
        for w in args.positionals:
            arg_classes |= places.classify(w.text, dynamic=not w.static, glob=w.glob)
        if d.program == "getent" and args.positionals:
            database = args.positionals[0].text
            if database in sensitive.GETENT_FILES:
                read_words.append(sensitive.GETENT_FILES[database])
        if d.program == "ps" and _ps_shows_environment([w.text for w in d.argv[1:]]):
            read_words.append("/proc/1/environ")  # BSD-style e: every process's environment
        globs = {w.text for w in args.positionals if w.glob}
        read_classes: set[str] = set()
        for p in read_words:
            read_classes |= places.classify(p)
            read_classes |= sensitive.classes(p, places, glob=p in globs)
        facts = Facts(
            d.program,
            args,
            frozenset(arg_classes),
            frozenset(write_classes),
            frozenset(read_classes),
            frozenset(traits),
        )
        changing = bool(eff.writes or eff.dynamic_writes or d.wrapper_writes) or bool(
            traits & CHANGE_TRAITS
        )
        return _Footprint(facts, eff, reading is not None, problems, shown_writes, changing)

    def _rules_verdict(
        self, d: Draft, fp: _Footprint
    ) -> tuple[Decision, list[str], list[Rule], list[str]]:
        """The strictest matching rule's verdict and reasons, the rules that matched, and the
        effects in words. A rule claiming read-only does not match a segment that changes
        something; an allow needs a spec that read every word without a problem."""
        candidates = [r for r in self.policy.rules if r.matches(fp.facts)]
        skipped = [r for r in candidates if r.model.read_only and fp.changing]
        candidates = [r for r in candidates if r not in skipped]
        matched = [r for r in candidates if not r.model.otherwise]
        if not matched:
            matched = [r for r in candidates if r.model.otherwise]
        verdict, rule_reasons = _strictest(matched, d.program)
        sentences = [
            *fp.effects.sentences,
            *(f"writes {w.text} (an option of a wrapper)" for w in d.wrapper_writes),
        ]
        if not matched and skipped:
            rule_reasons = sentences or [f"{d.program} may change something; ask first"]
        if verdict == Decision.ALLOW and (not fp.has_spec or fp.problems):
            verdict = Decision.ASK
            rule_reasons = fp.problems or [
                f"the policy has no spec of {d.program}'s options, so it cannot tell what "
                "this command does; ask first"
            ]
        return verdict, rule_reasons, matched, sentences


@dataclass(frozen=True)
class _Footprint:
    """What one segment touches, as ``_judge`` weighs it."""

    facts: Facts
    effects: Effects  # what the spec reads the arguments as doing
    has_spec: bool
    problems: list[str]
    shown_writes: list[str]
    changing: bool


def _unread(unread: list[str]) -> list[Segment]:
    """A segment for text bash would expand that the policy could not read."""
    if not unread:
        return []
    return [
        Segment(
            key="(substitution)",
            argv=(),
            program="(substitution)",
            decision=Decision.ASK,
            reasons=tuple(dict.fromkeys(unread)),
            rememberable=False,
            asked_by=("structure",),
        )
    ]


def _strictest(matched: list[Rule], program: str) -> tuple[Decision, list[str]]:
    """The strictest decision of the matching rules, and the reasons of the rules that gave it."""
    if not matched:
        return Decision.ASK, [f"{program or 'this'} is not a program the policy knows; ask first"]
    top = max(r.decision for r in matched)
    return top, [r.model.reason for r in matched if r.decision == top]


def _network_path(path: str) -> bool:
    """bash opens a connection for /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT itself."""
    return path.startswith(("/dev/tcp/", "/dev/udp/"))


def _ps_shows_environment(words: list[str]) -> bool:
    """``ps e``, ``ps auxe``: a BSD-style option word with ``e`` (not a value of ``-o`` …)."""
    takes_value = ("-o", "-O", "-p", "-q", "-u", "-U", "-g", "-G", "-C", "-t", "-s", "--sort")
    for i, word in enumerate(words):
        after_option = i > 0 and words[i - 1] in takes_value
        if not after_option and re.fullmatch(r"[A-Za-z]*e[A-Za-z]*", word):
            return True
    return False


class _Lazy:
    """The carried values, read at most once per check (from the sandbox, if a function)."""

    def __init__(self, source: CarriedSource | None) -> None:
        self.source = source
        self.value: Carried | None = None
        self.done = False

    def __call__(self) -> Carried | None:
        if not self.done:
            self.done = True
            self.value = self.source() if callable(self.source) else self.source
        return self.value


def _shown(flow: Flow, carried: Carried | None) -> tuple[tuple[str, str], ...]:
    """Carried values the line expands that are more than an integer or a short word."""
    if carried is None:
        return ()
    shown: list[tuple[str, str]] = []
    for name in sorted(flow.expanded | {u.name for u in flow.uses}):
        values = carried.values.get(name, ())
        if any(not trivial(v) for v in values):
            text = values[0] if len(values) == 1 else " ".join(values)
            shown.append((name, text if len(text) <= 300 else text[:299] + "…"))
    return tuple(shown)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _combine(command: str, errors: list[str], segments: list[Segment]) -> Evaluation:
    """The line's evaluation: the strictest segment decides, with the reasons of every segment
    that has that decision; a line bash may not parse as shown is at least ``ASK``."""
    reasons: list[str] = []
    decision = Decision.ALLOW
    if errors:
        decision = Decision.ASK
        reasons.extend(f"bash may not run this as shown: {e}" for e in dict.fromkeys(errors))
    if segments:
        worst = max(s.decision for s in segments)
        if worst >= decision:
            if worst > decision:
                reasons = []
            decision = worst
            for s in segments:
                if s.decision == worst:
                    reasons.extend(f"{_short(s.key)}: {r}" for r in s.reasons)
    elif not errors:
        decision, reasons = Decision.ASK, ["no command found"]
    return Evaluation(decision, tuple(dict.fromkeys(reasons)), tuple(segments), command)
