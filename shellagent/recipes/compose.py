"""A recipe that finds files, then does to them what the task says: "find … and delete them".

Tasks often ask for an action on a selection: "Locate and remove all files smaller than
1KB in /backups/tmp", "Find the .log files older than 30 days and move them to /archive".
A question recipe already selects those files with a verified ``find``; the action is one
of a few fixed endings. ``compose`` joins the two into one action recipe, with the
ending's slots (a destination, an archive) beside the selection's, so the values are still
typed and quoted by the renderer and the model still only picks and fills.

Only selections of the plain form ``find {dir} … -type f … [| sort]`` (no ``-exec``,
``-printf``, ``-delete`` or further pipes) are composed, and the endings are ``find``'s
own actions, so the composed command acts on exactly the files the question would have
listed. The result is tried before it is shown (on an overlay copy), like any writer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from shellagent.recipes.model import Recipe, Slot

__all__ = ["ENDINGS", "Ending", "compose", "ending_for", "is_selection", "selection_text"]

# a plain character of find's tests, or a placeholder with a filter ("{size|bytes}")
_PLAIN = r"(?:[^|;&`$()<>\n]|\{\w+\|\w+\})"
_SELECTION = re.compile(rf"find \{{dir\}}(?P<test>{_PLAIN}*?-type f{_PLAIN}*?)(?: \| sort)?")

# find's own actions and outputs: a template with one of them already does something else
_ACTS = re.compile(r"\s-(?:exec|execdir|ok|okdir|delete|printf|fprint\w*|fls|ls|quit)\b")


@dataclass(frozen=True)
class Ending:
    """What is done to the selected files: ``before`` runs first (``{dest}`` made), then
    ``find {dir} <the selection's tests> <action>``."""

    name: str
    verb: str  # for the summary: "delete them"
    action: str
    slots: Mapping[str, Slot]
    before: str = ""
    after: str = ""


ENDINGS: dict[str, Ending] = {
    "delete": Ending("delete", "delete them", "-print -delete", {}),
    "move": Ending(
        "move",
        "move them to a folder",
        "-exec mv -t {dest} -- {} +",
        {"dest": Slot("dest", "dir", help="where the files go (created if missing)")},
        before="mkdir -p -- {dest} && ",
    ),
    "copy": Ending(
        "copy",
        "copy them to a folder",
        "-exec cp -p -t {dest} -- {} +",
        {"dest": Slot("dest", "dir", help="where the copies go (created if missing)")},
        before="mkdir -p -- {dest} && ",
    ),
    "gzip": Ending("gzip", "compress each with gzip", "-exec gzip -- {} +", {}),
    # joined in a temporary file first: the output may be one of the files selected
    "concat": Ending(
        "concat",
        "join their contents, in name order, into one file",
        "-print0",
        {"output": Slot("output", "output", help="the file to write (replaced)")},
        before="t=$(mktemp) && ",
        after=' | sort -z | xargs -0 -r cat -- > "$t" && cat -- "$t" > {output} && rm -f -- "$t"',
    ),
    "archive": Ending(
        "archive",
        "pack them into one archive",
        "-print0",
        {"archive": Slot("archive", "archive", help="the archive to write (.tar.gz)")},
        after=" | tar -czf {archive} --null -T -",
    ),
}

# The verbs that ask for each ending, as the task says them (first one said wins).
_VERBS = (
    ("delete", r"delete|remove|erase|purge|clean\s+up|get\s+rid\s+of|wipe"),
    ("move", r"move|relocate"),
    ("copy", r"copy|duplicate|back\s*up"),
    ("archive", r"(?:compress|archive|pack|bundle|tar)\b[^.]*?\b(?:into|in|as)\s+(?:a|one|an)\b"),
    ("archive", r"(?:compress|archive|pack|bundle|tar)\b[^.]*?\.(?:tar\.gz|tgz)\b"),
    (
        "archive",
        r"(?:combine|collect|put|gather)\b[^.]*?\b(?:into|in)\s+(?:a|one|an)\s+"
        r"(?:single\s+)?(?:archive|tarball)\b",
    ),
    ("gzip", r"compress|gzip"),
    (
        "concat",
        r"(?:combine|concatenate|merge|join|cat)\b(?!(?:[^.]|\.\w)*\b(?:archive|tarball|zip)\b)"
        r"(?=(?:[^.]|\.\w)*\b(?:into|to|in)\s+(?:a|one|the)?\s*(?:single|one|new)?\s*"
        r"(?:file|\S+\.\w+))",
    ),
)


def is_selection(recipe: Recipe) -> bool:
    """Whether ``recipe`` is a question that lists files with a plain ``find``."""
    template = recipe.templates[0]
    return (
        recipe.kind == "question"
        and "dir" in recipe.slots
        and bool(_SELECTION.fullmatch(template))
        and not _ACTS.search(template)
    )


def ending_for(task: str) -> Ending | None:
    """The ending the task asks for in the imperative ("… and move them to /x"), if one."""
    from shellagent.recipes.fitness import said_as_imperative

    best: tuple[int, int, str] | None = None
    for rank, (name, verbs) in enumerate(_VERBS):
        at = said_as_imperative(task, verbs)
        if at is not None and (best is None or (at, rank) < best[:2]):
            best = (at, rank, name)
    if best is None:
        return None
    # "compress … into one archive" is said where "compress" is: the archive ending wins
    return ENDINGS[best[2]]


# "… and delete them": the selection was said before the verb
_THEM = re.compile(r"\s+(?:them|these|those|it|they|the\s+(?:files|results|matches))\b", re.I)
# where the object of "remove all files older than 30 days to free up space" ends
_OBJECT_END = re.compile(
    r"\s+(?:into|to|onto|and\s+(?:then\s+)?(?:save|place|put|store|write|move|keep))\b|"
    r"[.;!?](?:\s|$)|,\s+(?:but|and|then|so|to)\b",
    re.I,
)
_TRAILING = re.compile(r"(?:\s*,)?\s*(?:\band\b|\bthen\b|,)*\s*$", re.I)


def selection_text(task: str, ending: Ending) -> str:
    """``task`` with the act taken out and the files it acts on asked for ("Remove all
    files older than 30 days to free up space" -> "find all files older than 30 days"):
    what a selection recipe is ranked against when it is offered with ``ending``.
    The context before the request is kept; "" when the verb is not found."""
    from shellagent.recipes.candidates import request
    from shellagent.recipes.fitness import said_as_imperative

    verbs = "|".join(v for name, v in _VERBS if name == ending.name)
    asked = request(task)
    at = said_as_imperative(asked, verbs)
    if at is None:
        return ""
    # the verb alone (the archive's pattern runs on to "into a")
    said = re.match(r"(?:clean\s+up|get\s+rid\s+of|back\s*up|zip\s+up|\w+)", asked[at:], re.I)
    assert said is not None
    context = task[: len(task) - len(asked)] if asked != task else ""
    after = asked[at + said.end() :]
    if _THEM.match(after):
        what = _TRAILING.sub("", asked[:at])
    else:
        end = _OBJECT_END.search(after)
        what = "find " + (after[: end.start()] if end else after).strip()
    return f"{context}{what.strip()}"


def compose(recipe: Recipe, ending: Ending) -> Recipe | None:
    """``recipe``'s selection with ``ending``: an action recipe named ``<recipe>_then_<ending>``;
    None when ``recipe`` is no plain selection or a slot name would clash."""
    if not is_selection(recipe) or set(ending.slots) & set(recipe.slots):
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    template = f"{ending.before}find {{dir}}{match.group('test')} {ending.action}{ending.after}"
    return Recipe(
        name=f"{recipe.name}_then_{ending.name}",
        summary=f"{recipe.summary}, then {ending.verb}",
        kind="action",
        phrasings=(),
        templates=(template,),
        slots={**recipe.slots, **ending.slots},
        area=recipe.area,
        source=recipe.source,
    )
