"""Questions turned into "… and save it to FILE" tasks: a twin family for every question family.

Most real tasks that want a fact want it in a file ("Extract the unique error messages and
save them to /tmp/unique_errors.txt"), and a small model imitates the examples it is shown:
without such examples it answers in words where a file was asked for. So every family that
asks questions gets a twin, ``<name>_to_file``, drawn from the same instances:

- the task is the question with a request to save the answer to a file (``/tmp/…`` mostly,
  sometimes in the home folder), put as " and save it to …" after an instruction and as a
  sentence of its own after a question;
- the gold commands are the question's, the last one writing its output to the file, then a
  ``cat`` of the file, so the final answer still comes from what was observed (the answer
  template is the question's, reading the ``cat``);
- the check is the question's own check run with the file as both ``$ANSWER`` and
  ``$LAST_OUTPUT``: the file must hold what the answer had to hold, and every wrong answer
  the question's check refuses is refused in the file too. The twin is judged on the state
  (the file), so it lists no wrong answers of its own.

Only instances whose last gold command is one command or one pipeline are used (a list
such as ``a && b`` would need braces); the twin draws again from the same random stream
until it finds one, so it stays reproducible from the seed.
"""

from __future__ import annotations

import re

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from shellagent.taskgen.family import FAMILIES, IMPERATIVES, Draw, Family, Instance
from shellagent.taskgen.sh import path, q

SUFFIX = "_to_file"
TWIN_SHARE = 0.5  # a twin family is drawn half as often as the others
DRAWS = 40  # tries to find a question instance that can be saved
PROBES = 8  # instances drawn at registration to see whether a family asks questions

_PARSER = Parser(Language(tree_sitter_bash.language()))
_PLACEHOLDER_N = re.compile(r"\{out(\d+)")
_GENERIC_STEMS = ("result", "results", "report", "answer", "output", "summary", "findings")
_OPENERS = ("please ", "i need you to ")


def plain_output(command: str) -> bool:
    """Whether ``command`` is one command or one pipeline with no redirection of its own at
    the top, so that ``command > FILE`` saves all it prints."""
    root = _PARSER.parse(command.encode()).root_node
    if root.has_error or root.named_child_count != 1:
        return False
    node = root.named_children[0]
    if node.type != "redirected_statement":
        return node.type in ("command", "pipeline")
    body, *redirects = node.named_children
    return body.type in ("command", "pipeline") and all(map(_keeps_stdout, redirects))


def _keeps_stdout(redirect: Node) -> bool:
    """``< file`` or ``2> file``: a redirection that leaves standard output alone."""
    if redirect.type != "file_redirect" or len(redirect.children) < 2:
        return False
    parts = [(c.type, c.text.decode() if c.text else "") for c in redirect.children]
    if parts[0][0] == "file_descriptor":
        return parts[0][1] == "2" and parts[1][1] in (">", ">>")
    return parts[0][1] == "<"


def out_file(d: Draw, base: str) -> str:
    """Where the twin asks for the answer: a name after the family or a generic one."""
    stem = base.split("_", 1)[-1] if d.chance(0.3) else base
    stem = d.pick((stem, d.pick(_GENERIC_STEMS)))
    ext = d.pick((".txt",) * 8 + (".out", ".log"))
    folder = "/tmp" if d.chance(0.85) else "~"
    return f"{folder}/{stem}{ext}"


def ask_to_save(d: Draw, task: str, out: str) -> str:
    """``task`` asking for its answer in ``out`` (quoted in the text half the time, unless
    it starts with ``~``, which quotes would keep from expanding if copied)."""
    shown = f"'{out}'" if d.chance(0.5) and not out.startswith("~") else out
    text = task.rstrip()
    words = text.lower()
    for opener in _OPENERS:
        words = words.removeprefix(opener)
    instruction = text.endswith(".") and words.split(maxsplit=1)[0] in IMPERATIVES
    if instruction and ". " not in text.rstrip("."):
        it = d.pick(("it", "the result", "the answer", "the output"))
        verb = d.pick(("save", "write", "put", "store"))
        into = "in" if verb in ("put", "store") else d.pick(("to", "in"))
        return f"{text[:-1]} and {verb} {it} {into} {shown}."
    sentence = d.pick(
        (
            "Save the answer to {f}.",
            "Write the answer to {f}.",
            "Put the result in {f}.",
            "Save the result in {f}.",
            "Store the answer in {f}.",
            "Write the output to {f}.",
        )
    )
    return f"{text} {sentence.format(f=shown)}"


def to_file(instance: Instance, d: Draw, base: str) -> Instance | None:
    """The twin of a question ``instance``, or None when it cannot be saved to a file."""
    if instance.kind != "question" or not plain_output(instance.gold[-1]):
        return None
    out = out_file(d, base)
    n = len(instance.gold)
    template = _PLACEHOLDER_N.sub(
        lambda m: "{out" + str(n + 1 if int(m.group(1)) == n else int(m.group(1))),
        instance.answer,
    )
    check = (
        f"[ -s {path(out)} ] && ANSWER={path(out)} LAST_OUTPUT={path(out)} "
        f"/bin/bash --noprofile --norc -c {q(instance.check)}"
    )
    return Instance(
        task=ask_to_save(d, instance.task, out),
        setup=instance.setup,
        gold=(*instance.gold[:-1], f"{instance.gold[-1]} > {path(out)}", f"cat {path(out)}"),
        check=check,
        answer=f"{template.rstrip()} Saved in {out}.",
        slots={**instance.slots, "out": out},
        kind="action",
        recipes=instance.recipes,  # each command now inside the last one, saved to the file
    )


def twin(base: Family) -> Family:
    """``base``'s to-file family: its instances drawn until one can be saved to a file."""

    def make(d: Draw) -> Instance:
        for _ in range(DRAWS):
            saved = to_file(base.make(d), d, base.name)
            if saved is not None:
                return saved
        raise ValueError(f"family {base.name}: no question instance in {DRAWS} draws")

    return Family(
        base.name + SUFFIX, base.area, base.summary + ", saved to a file", make, TWIN_SHARE
    )


def register_twins() -> None:
    """Add the twin of every registered family that asks questions (seen in a few draws)."""
    import random

    for base in [f for f in FAMILIES.values() if not f.name.endswith(SUFFIX)]:
        if base.name + SUFFIX in FAMILIES:
            continue
        probes = (base.make(Draw(random.Random(f"probe/{base.name}/{i}"))) for i in range(PROBES))
        if any(p.kind == "question" and plain_output(p.gold[-1]) for p in probes):
            FAMILIES[base.name + SUFFIX] = twin(base)
