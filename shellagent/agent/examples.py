"""Worked examples chosen per task: a library of verified trajectories, searched with BM25,
with the example's paths and names rewritten to the task's own.

A 135M model imitates well and plans poorly, so the prompt shows it one or two solved
tasks *like this one* instead of fixed examples it would copy into unrelated tasks. Tasks
are indexed with their paths, names and numbers abstracted (``/srv/cache`` and
``/var/log/app`` both read as a directory; an extension keeps its kind, ``.log`` is not
``.tmp``), so the search matches what is to be done, not where. The retrieved example's
*slots* (its directories, files, extensions …) are then replaced by the task's in the same
roles, so the example reads as if it were about the task's own paths; when the roles do
not line up, the example is shown as it is.

Search uses ``bm25s`` (BM25 over sparse matrices, numpy only), not a hand-made index.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shellagent.agent.outcome import Outcome

__all__ = [
    "Example",
    "ExampleLibrary",
    "Step",
    "abstract",
    "default_library",
    "library_files",
    "remember",
    "render",
    "rewrite",
    "slots_of",
]

# The verified library the package ships (written by ``shellagent tasks build``). It is data
# beside the generator; reading it needs no import of the generator.
SHIPPED_LIBRARY = Path(__file__).parents[1] / "taskgen" / "data" / "library.jsonl.gz"


@dataclass(frozen=True)
class Step:
    command: str
    output: str
    exit_code: int = 0
    why: str = ""


@dataclass(frozen=True)
class Example:
    task: str
    steps: tuple[Step, ...]
    answer: str
    slots: Mapping[str, str] = field(default_factory=dict)
    family: str = ""
    id: str = ""

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Example:
        """From one library line: ``task``, ``steps`` (``command``, ``output``,
        ``exit_code``) or ``commands`` + ``observations``, ``answer``, ``slots``."""
        gold = record.get("gold")
        if isinstance(gold, Mapping):  # a task of the generated library (``taskgen``)
            observed = list(gold.get("observations") or [])
            # the plain commands when the line has them: they passed its check and printed
            # what the recipe's own did (``taskgen/plain.py``), and a small model copies a
            # short command better than the recipe's general one
            commands = gold.get("plain") or gold.get("commands") or []
            steps = tuple(
                Step(
                    str(c),
                    str(observed[i].get("output", "")) if i < len(observed) else "",
                    int(observed[i].get("exit_code", 0)) if i < len(observed) else 0,
                )
                for i, c in enumerate(commands)
            )
            task = str(record["task"])
            return cls(
                task=task,
                steps=steps,
                answer=str(gold.get("answer") or ""),
                slots=slots_of(task),  # the generator's slot names are its own
                family=str(record.get("family", "")),
                id=str(record.get("id", "")),
            )
        if "steps" in record:
            steps = tuple(
                Step(
                    str(s["command"]),
                    str(s.get("output", "")),
                    int(s.get("exit_code", 0)),
                    str(s.get("why", "")),
                )
                for s in record["steps"]
            )
        else:
            outputs = list(record.get("observations") or [])
            commands = list(record.get("commands") or record.get("gold") or [])
            steps = tuple(
                Step(str(c), str(outputs[i]) if i < len(outputs) else "")
                for i, c in enumerate(commands)
            )
        slots = {str(k): str(v) for k, v in (record.get("slots") or {}).items()}
        return cls(
            task=str(record["task"]),
            steps=steps,
            answer=str(record.get("answer") or record.get("final_answer") or ""),
            slots=slots or slots_of(str(record["task"])),
            family=str(record.get("family", "")),
            id=str(record.get("id", "")),
        )


# -- abstraction --------------------------------------------------------------------------

_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"|`([^`]+)`")
_BARE_PATH = re.compile(r"(?<![\w.])(~?/[\w.@%+=:,-/]*[\w/])")
_EXT = re.compile(r"^\.?[A-Za-z0-9]{1,8}$")
# A file named after these words is where the task's result goes (role "out"), so an
# example's output file is never rewritten to the task's input file or the other way round.
_OUT_BEFORE = re.compile(
    r"\b(save|saving|saved|write|writing|store|storing|put|output|append|redirect|dump|"
    r"record|log|concatenate|combine|merge|export)\b.*\b(to|into|in|as)\s+"
    r"(?:(?:a|an|the|new|single)\s+)*(?:(?:text\s+|output\s+)?file\s+)?"
    r"(?:(?:named|called)\s+)?$",
    re.I,
)
_SENTENCE_END = re.compile(r"[.?!;:]\s")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
# Words users use for the same operation, read as one for the search.
_SAME = {
    "biggest": "largest",
    "huge": "largest",
    "heaviest": "largest",
    "smallest": "smallest",
    "delete": "remove",
    "erase": "remove",
    "purge": "remove",
    "wipe": "remove",
    "rm": "remove",
    "clean": "remove",
    "cleanup": "remove",
    "tally": "count",
    "many": "count",
    "amount": "count",
    "copy": "copy",
    "duplicate": "copy",
    "backup": "backup",
    "archive": "archive",
    "compress": "archive",
    "tarball": "archive",
    "zip": "archive",
    "tar": "archive",
    "rename": "rename",
    "move": "move",
    "mv": "move",
    "search": "find",
    "locate": "find",
    "list": "find",
    "show": "find",
    "which": "find",
    "older": "old",
    "newer": "recent",
    "latest": "recent",
    "newest": "recent",
    "modified": "modified",
    "changed": "modified",
    "edited": "modified",
    "lines": "line",
    "words": "word",
    "bytes": "size",
    "space": "size",
    "usage": "size",
}
_WORD = re.compile(r"[a-z]+")
RECORDED_HOME = "/root"  # the home directory the shipped library's outputs were recorded in
_HERE = re.compile(
    r"\b(here|this (folder|directory|dir)|current (folder|directory|dir)|cwd)\b", re.I
)


def _role(value: str) -> str | None:
    """What a quoted or path-looking value is: dir, file, ext, pattern or None."""
    if value.startswith(("/", "~/", "./")) or "/" in value.strip("/"):
        name = value.rstrip("/").rsplit("/", 1)[-1]
        return "file" if re.search(r"\.[A-Za-z0-9]{1,6}$", name) else "dir"
    if "*" in value or "?" in value:
        return "pattern"
    if value.startswith(".") and _EXT.match(value):
        return "ext"
    if re.fullmatch(r"[\w.-]+\.[A-Za-z0-9]{1,6}", value):
        return "file"
    return None


def slots_of(text: str) -> dict[str, str]:
    """The task's paths and names by role, numbered in the order they appear: dir, dir2,
    file, ext … (quoted or not: "read 'a.log' and save it to /tmp/b" has a.log first); a
    file the result is to be saved in is ``out``."""
    found: dict[str, str] = {}
    spans = [(m.start(), next(g for g in m.groups() if g)) for m in _QUOTED.finditer(text)]
    unquoted = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)  # keeps the positions
    spans += [(m.start(), m.group(1)) for m in _BARE_PATH.finditer(unquoted)]
    spans.sort()
    roles = [(value, _role(value)) for _, value in spans]
    # "… and save them to /tmp/x.txt": where the result goes. Only the last such file: in
    # "save the lines in a.log to b.txt" the first "in" is not where anything goes.
    outs = [
        i
        for i, (start, _) in enumerate(spans)
        if roles[i][1] == "file" and _OUT_BEFORE.search(_SENTENCE_END.split(text[:start])[-1])
    ]
    if outs:
        roles[outs[-1]] = (roles[outs[-1]][0], "out")
    counts: dict[str, int] = {}
    for value, role in roles:
        if role is None or value in found.values():
            continue
        counts[role] = counts.get(role, 0) + 1
        found[role if counts[role] == 1 else f"{role}{counts[role]}"] = value
    return found


def abstract(text: str) -> str:
    """``text`` with paths, names and numbers replaced by their kind, for the index."""

    def word(value: str) -> str:
        role = _role(value)
        if role == "file":
            return f" file {value.rsplit('.', 1)[-1].lower()} "
        if role == "ext":
            return f" ext {value.lstrip('.').lower()} "
        if role in ("dir", "pattern"):
            return f" {role} "
        return f" {value} "

    text = _QUOTED.sub(lambda m: word(next(g for g in m.groups() if g)), text)
    text = _BARE_PATH.sub(lambda m: word(m.group(1)), text)
    text = _NUMBER.sub(" number ", text).lower()
    return _WORD.sub(lambda m: _SAME.get(m.group(0), m.group(0)), text)


# -- the library ------------------------------------------------------------------------


class ExampleLibrary:
    """Examples searchable by task. Empty is fine: ``search`` then finds nothing."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)
        self._index: Any = None
        if self.examples:
            import bm25s

            corpus = [abstract(e.task) for e in self.examples]
            tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
            self._index = bm25s.BM25()
            self._index.index(tokens, show_progress=False)

    @classmethod
    def load(cls, files: Iterable[Path], skip: frozenset[str] = frozenset()) -> ExampleLibrary:
        """From JSONL files (``.gz`` too); a broken line is skipped, not fatal, and so is
        an example whose id is in ``skip`` (a session the user undid)."""
        examples: list[Example] = []
        for path in files:
            if not path.exists():
                continue
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as f:
                for line in f:
                    try:
                        example = Example.from_record(json.loads(line))
                    except (ValueError, KeyError, TypeError):
                        continue
                    if not (example.id and example.id in skip):
                        examples.append(example)
        return cls(examples)

    def search(
        self, task: str, k: int = 2, *, min_score: float = 0.5, exclude: str = ""
    ) -> list[Example]:
        """The ``k`` examples most like ``task`` (best first), each from a different family;
        never the one whose id is ``exclude`` (a library task's own)."""
        if self._index is None or k <= 0:
            return []
        import bm25s

        query = bm25s.tokenize([abstract(task)], stopwords="en", show_progress=False)
        n = min(len(self.examples), k * 8)
        ids, scores = self._index.retrieve(query, k=n, show_progress=False)
        chosen: list[Example] = []
        families: set[str] = set()
        for i, score in zip(ids[0], scores[0], strict=True):
            if float(score) < min_score:
                break
            example = self.examples[int(i)]
            if exclude and example.id == exclude:
                continue
            if example.family and example.family in families:
                continue
            families.add(example.family)
            chosen.append(example)
            if len(chosen) == k:
                break
        return chosen


def library_files() -> list[Path]:
    """The shipped library, then the user's own confirmed sessions (``history.py``)."""
    from shellagent.agent.history import history_path

    return [SHIPPED_LIBRARY, history_path()]


_DEFAULT: ExampleLibrary | None = None
_DEFAULT_UNDONE: frozenset[str] = frozenset()
_DEFAULT_LOCK = threading.Lock()


def default_library() -> ExampleLibrary:
    """The library of ``library_files``, loaded and indexed once per process, and again
    when the user undid a session since (an undone session is no example)."""
    global _DEFAULT, _DEFAULT_UNDONE
    undone = _undone()
    with _DEFAULT_LOCK:
        if _DEFAULT is None or undone != _DEFAULT_UNDONE:
            _DEFAULT = ExampleLibrary.load(library_files(), skip=undone)
            _DEFAULT_UNDONE = undone
        return _DEFAULT


def _undone() -> frozenset[str]:
    from shellagent.transcript.undone import undone_sessions

    try:
        return undone_sessions()
    except OSError:
        return frozenset()


def forget_default_library() -> None:
    """Drop the cached library (after the user's history grew)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        _DEFAULT = None


def remember(task: str, outcome: Outcome) -> None:
    """Keep a session the user confirmed as a worked example (``Hooks.history``): its
    task, commands, outputs and summary, redacted, join the user's history
    (``history.py``); the cached library is dropped so the next task retrieves from it."""
    from shellagent.agent.history import add_session
    from shellagent.transcript.redact import Redactor

    redact = Redactor.from_environment().redact
    steps = [(redact(c.command), redact(c.output), c.exit_code) for c in outcome.commands]
    if add_session(redact(task), steps, redact(outcome.summary), session=outcome.session_id):
        forget_default_library()


# -- rewriting and rendering --------------------------------------------------------------


def rewrite(example: Example, task: str) -> Example:
    """``example`` with its slot values replaced by the task's values of the same roles.

    Only roles both have are replaced, longest value first (so ``/srv/cache/a.tmp`` is not
    half-rewritten through ``/srv/cache``); a task that names no folder but says "here"
    (or "this folder") has ``.`` for its folder. An example whose slots do not line up is
    returned as it is."""
    target = slots_of(task)
    if "dir" not in target and _HERE.search(task):
        target["dir"] = "."  # "the largest files here": the example's folder becomes "."
    pairs = [(v, target[k]) for k, v in example.slots.items() if k in target and v != target[k]]
    if not pairs:
        return example
    # outputs show a home-relative folder expanded, as it was where the library was built
    pairs += [
        (RECORDED_HOME + old[1:], str(Path.home()) + new[1:] if new.startswith("~/") else new)
        for old, new in pairs
        if old.startswith("~/")
    ]
    # a folder named as parent and name (``tar -czf x.tgz -C /srv tallybook``)
    pairs += [
        (f"{old_parent} {old_name}", f"{new_parent} {new_name}")
        for key, old in example.slots.items()
        if key.startswith("dir") and key in target and "/" in old.strip("/")
        for new in [target[key]]
        if "/" in new.strip("/")
        for old_parent, old_name in [old.rstrip("/").rsplit("/", 1)]
        for new_parent, new_name in [new.rstrip("/").rsplit("/", 1)]
    ]
    pairs.sort(key=lambda p: len(p[0]), reverse=True)

    def swap(text: str) -> str:
        marks: list[str] = []
        for n, (old, _) in enumerate(pairs):
            mark = f"\x00{n}\x00"
            text = text.replace(old, mark)
            marks.append(mark)
        for mark, (_, new) in zip(marks, pairs, strict=True):
            text = text.replace(mark, new)
        return text

    # An output belongs to the command that printed it, on the example's own files: with
    # the paths rewritten it would tell the model what the task's files hold, and a small
    # model copies it ("the five largest" of another folder). It is left out, and so is
    # whatever the answer took from it.
    steps = tuple(
        Step(swap(s.command), OUTPUT_LEFT_OUT if s.output.strip() else "", s.exit_code, swap(s.why))
        for s in example.steps
    )
    answer = _without(swap(example.answer), [s.output for s in example.steps], example, swap)
    slots = {k: target.get(k, v) for k, v in example.slots.items()}
    return replace(example, task=swap(example.task), steps=steps, answer=answer, slots=slots)


OUTPUT_LEFT_OUT = "[output left out: this example ran on other files]"
_TOKEN = re.compile(r"[\w][\w.+-]*[\w]|\w")


def _without(answer: str, outputs: Sequence[str], example: Example, swap: Any) -> str:
    """``answer`` with each word it took from ``outputs`` (and that the task and the
    commands do not say) replaced by ``…``."""
    said = " ".join([swap(example.task), *(swap(s.command) for s in example.steps)])
    known = set(_TOKEN.findall(said))
    taken = {w for out in outputs for w in _TOKEN.findall(out) if w not in known}
    taken -= set(_TOKEN.findall(swap(example.task).lower()))
    if not taken:
        return answer
    shown = _TOKEN.sub(lambda m: "…" if m.group(0) in taken else m.group(0), answer)
    return re.sub(r"…(?:[ ,;]*…)+", "…", shown)


def render(examples: Sequence[Example], observe: Any = None) -> str:
    """The examples in the exact layout of a session: task, each reply, what the loop fed
    back (``observe(output, exit_code)`` makes the observation text), the final reply."""
    blocks = []
    for e in examples:
        lines = [f"Task: {e.task}"]
        for s in e.steps:
            why = s.why or why_of(s.command)
            lines.append(json.dumps({"cmd": s.command, "why": why}, ensure_ascii=False))
            lines.append(observe(s.output, s.exit_code) if observe else _observation(s))
        lines.append(json.dumps({"done": e.answer}, ensure_ascii=False))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _observation(step: Step) -> str:
    output = step.output.rstrip("\n")
    if len(output) > 400:
        output = output[:400] + "\n[…]"
    return f"exit {step.exit_code}" + (f"\n{output}" if output else "")


def why_of(command: str) -> str:
    """The ``why`` shown with an example's command when it has none of its own."""
    # "run PROGRAM": measured better with the embedded model than the task's own words
    # (docs/agent.md, "Prompts and worked examples")
    program = command.split()[0] if command.split() else "the command"
    return f"run {program}"
