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
Which ending and which pick a task asks for is its reading's (``TaskReading.ending``,
``.pick``; the words are the lexicon's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from shellagent.recipes.model import Kind, Recipe, Slot

__all__ = [
    "COUNT",
    "ENDINGS",
    "PICKS",
    "Ending",
    "Pick",
    "compose",
    "compose_pick",
    "is_negated",
    "is_selection",
    "is_unfiltered",
    "names_of",
    "narrowed",
    "negated",
    "pick_named",
    "the_one_of_a_ranking",
]

# a plain character of find's tests, an escaped parenthesis that groups them ("\( -iname
# '*.jpg' -o -iname '*.png' \)": an ending after it acts on the whole group), or a
# placeholder with a filter ("{size|bytes}")
_PLAIN = r"(?:[^|;&`$()<>\n]|\\[()]|\{\w+\|\w+\})"
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
    # done to one picked file, "$f" ("the largest file … copy it to /tmp/x"); "" if none
    one: str = ""
    one_slots: Mapping[str, Slot] | None = None  # when they differ from ``slots``


ENDINGS: dict[str, Ending] = {
    "delete": Ending("delete", "delete them", "-print -delete", {}, one='rm -f -- "$f"'),
    "move": Ending(
        "move",
        "move them to a folder",
        "-exec mv -t {dest} -- {} +",
        {"dest": Slot("dest", "dir", help="where the files go (created if missing)")},
        before="mkdir -p -- {dest} && ",
        one='mv -- "$f" {dest}',
        one_slots={"dest": Slot("dest", "path", help="the folder or new name it goes to")},
    ),
    "copy": Ending(
        "copy",
        "copy them to a folder",
        "-exec cp -p -t {dest} -- {} +",
        {"dest": Slot("dest", "dir", help="where the copies go (created if missing)")},
        before="mkdir -p -- {dest} && ",
        one='cp -p -- "$f" {dest}',
        one_slots={"dest": Slot("dest", "path", help="the folder or file the copy goes to")},
    ),
    "gzip": Ending("gzip", "compress each with gzip", "-exec gzip -- {} +", {}, one='gzip -- "$f"'),
    # joined in a temporary file first: the output may be one of the files selected
    "concat": Ending(
        "concat",
        "join their contents, in name order, into one file",
        "-print0",
        {"output": Slot("output", "output", help="the file to write (replaced)")},
        before="t=$(mktemp) && ",
        after=' | sort -z | xargs -0 -r cat -- > "$t" && cat -- "$t" > {output} && rm -f -- "$t"',
    ),
    "extract": Ending(
        "extract",
        "unpack each into a folder",
        "-exec tar -xf {} -C {dest} \\;",
        {"dest": Slot("dest", "dir", help="where they are unpacked (created if missing)")},
        before="mkdir -p -- {dest} && ",
        one='mkdir -p -- {dest} && tar -xf "$f" -C {dest}',
    ),
    "archive": Ending(
        "archive",
        "pack them into one archive",
        "-print0",
        {"archive": Slot("archive", "archive", help="the archive to write (.tar.gz)")},
        after=" | tar -czf {archive} --null -T -",
        one='tar -czf {archive} -- "$f"',
    ),
}

LINES = "lines"  # a pick's key: count each file's lines


@dataclass(frozen=True)
class Pick:
    """What is asked of a selection as a whole: the one file that is the most of
    something (``key``: what find prints to sort on, or ``LINES`` to count each file's
    lines; ``order``: sort's flags, "-rn" the largest first), or how many files it has
    (``key`` empty)."""

    name: str  # the reading's pick (``TaskReading.pick``)
    key: str = ""
    order: str = ""

    def then(self) -> str:
        """What follows the selection's ``find`` tests. Records end in NUL, not newline:
        a file named "x\\n9999\\t/home/u/.ssh/id_rsa" would otherwise forge a line of
        its own that sorts first, and the act would land on a path no file selected."""
        if not self.key:
            return " | wc -l"
        if self.key == LINES:  # a file's name reaches sh as an argument, never as code
            records = (
                ' -exec sh -c \'for f do printf "%s\\t%s\\0" "$(wc -l < "$f")" "$f"; done\' sh {} +'
            )
        else:
            records = f" -printf '{self.key}\\t%p\\0'"
        return f"{records} | sort -z {self.order} | head -z -n 1 | cut -z -f2- | tr '\\0' '\\n'"


# What each pick sorts on; which words ask for it is the lexicon's (superlatives.toml).
PICKS = (
    Pick("largest", "%s", "-rn"),
    Pick("smallest", "%s", "-n"),
    Pick("newest", "%T@", "-rn"),
    Pick("oldest", "%T@", "-n"),
    Pick("longest", LINES, "-rn"),
    Pick("shortest", LINES, "-n"),
)
# "how many .log files …", "count the number of files modified …": a count of a selection
COUNT = Pick("count")


def pick_named(name: str) -> Pick | None:
    """The pick a reading names (``TaskReading.pick``), None for none."""
    return next((p for p in (*PICKS, COUNT) if p.name == name), None)


def is_unfiltered(recipe: Recipe) -> bool:
    """Whether ``recipe`` selects every file under its folder (``find {dir} -type f``)."""
    match = _SELECTION.fullmatch(recipe.templates[0])
    return is_selection(recipe) and match is not None and match.group("test").strip() == "-type f"


def is_selection(recipe: Recipe) -> bool:
    """Whether ``recipe`` is a question that lists files with a plain ``find``."""
    template = recipe.templates[0]
    return (
        recipe.kind == "question"
        and "dir" in recipe.slots
        and bool(_SELECTION.fullmatch(template))
        and not _ACTS.search(template)
    )


def compose_pick(recipe: Recipe, pick: Pick, ending: Ending | None) -> Recipe | None:
    """``recipe``'s selection narrowed to its one ``pick`` (the largest, the newest …):
    a question that prints that file's path, or with ``ending`` an action on it alone
    (``<recipe>_<pick>`` or ``<recipe>_<pick>_then_<ending>``); None when ``recipe`` is no
    plain selection, the ending has no form for one file, or a slot name would clash."""
    if not is_selection(recipe) or (ending is not None and (not ending.one or not pick.key)):
        return None
    slots = dict(ending.one_slots or ending.slots) if ending is not None else {}
    if set(slots) & set(recipe.slots):
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    one = f"find {{dir}}{match.group('test')}{pick.then()}"
    kind: Kind = "question"
    said = "how many there are" if pick is COUNT else f"the {pick.name} one"
    name, summary, template = f"{recipe.name}_{pick.name}", f"{recipe.summary}: {said}", one
    if ending is not None:
        kind = "action"
        name = f"{name}_then_{ending.name}"
        summary = f"{summary}, then {ending.verb}"
        # the path printed is one find selected; "$f" must still name an existing file
        template = f'f=$({one}) && [ -e "$f" ] && {ending.one}'
    return _derived(recipe, name, summary, template, kind=kind, slots=slots)


def narrowed(recipe: Recipe) -> Recipe | None:
    """``recipe``'s selection narrowed to one extension, with an ``ext`` slot: for "the
    .log files modified in the last day" when the selection that fits the age cannot be
    told the kind (``<recipe>_by_ext``); None when it is no plain selection or already
    takes an extension, a glob or a name."""
    if {"ext", "glob", "word", "name"} & set(recipe.slots):
        return None
    ext = Slot("ext", "ext", help="the extension, without the dot")
    return _reprinted(
        recipe, "_by_ext", ", of one extension", " -name '*.{ext}' | sort", {"ext": ext}
    )


def negated(recipe: Recipe) -> Recipe | None:
    """``recipe``'s selection turned around: every file below the folder its tests do not
    select (``find {dir} -type f ! \\( <tests> \\)``, a ``-maxdepth`` kept), for "which
    scripts can't be executed" where the selection finds those that can
    (``<recipe>_not``). None when it is no plain selection, selects every file, or takes a
    value (a size, an age: their direction is read as said)."""
    if not is_selection(recipe) or set(recipe.slots) != {"dir"}:
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    before, _, tests = match.group("test").partition("-type f")
    if not tests.strip() or tests.strip().startswith("!"):
        return None  # every file, or turned around already
    tail = " | sort" if recipe.templates[0].endswith("| sort") else ""
    return _derived(
        recipe,
        f"{recipe.name}_not",
        f"every file below the folder except {recipe.summary}",
        f"find {{dir}}{before}-type f ! \\( {tests.strip()} \\){tail}",
    )


def is_negated(recipe: Recipe) -> bool:
    """Whether ``recipe`` is a selection turned around (``negated``)."""
    match = _SELECTION.fullmatch(recipe.templates[0]) if is_selection(recipe) else None
    return match is not None and match.group("test").partition("-type f")[2].strip()[:1] == "!"


def names_of(recipe: Recipe) -> Recipe | None:
    """``recipe``'s selection printing each file's name alone, sorted (``<recipe>_names``),
    for "list their names": a selection prints paths. None when it is no plain
    selection."""
    return _reprinted(recipe, "_names", ", their names alone", " -printf '%f\\n' | sort")


def _reprinted(
    recipe: Recipe, suffix: str, said: str, tail: str, slots: Mapping[str, Slot] | None = None
) -> Recipe | None:
    """``recipe``'s selection (its ``find`` and tests) ending in ``tail`` instead, named
    ``<recipe><suffix>``, with ``slots`` added; None when it is no plain selection."""
    if not is_selection(recipe):
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    return _derived(
        recipe,
        f"{recipe.name}{suffix}",
        f"{recipe.summary}{said}",
        f"find {{dir}}{match.group('test')}{tail}",
        slots=slots,
    )


def _derived(
    recipe: Recipe,
    name: str,
    summary: str,
    template: str,
    *,
    kind: Kind | None = None,
    slots: Mapping[str, Slot] | None = None,
) -> Recipe:
    """A recipe made from ``recipe`` for one task: ``template`` its one command, its slots
    with ``slots`` added, no phrasings (it is never ranked by words)."""
    return Recipe(
        name=name,
        summary=summary,
        kind=kind or recipe.kind,
        phrasings=(),
        templates=(template,),
        slots={**recipe.slots, **(slots or {})},
        area=recipe.area,
        source=recipe.source,
        origin=recipe.origin,  # a composed command is as much yours as what it is made of
    )


def compose(recipe: Recipe, ending: Ending) -> Recipe | None:
    """``recipe``'s selection with ``ending``: an action recipe named ``<recipe>_then_<ending>``;
    None when ``recipe`` is no plain selection or a slot name would clash."""
    if not is_selection(recipe) or set(ending.slots) & set(recipe.slots):
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    template = f"{ending.before}find {{dir}}{match.group('test')} {ending.action}{ending.after}"
    return _derived(
        recipe,
        f"{recipe.name}_then_{ending.name}",
        f"{recipe.summary}, then {ending.verb}",
        template,
        kind="action",
        slots=ending.slots,
    )


# a pipeline's last stage that sorts in reverse: a ranking, the most first
_REVERSED_LAST = re.compile(
    r"\|\s*sort(?:\s+-[a-zA-Z]+)*\s+-[a-zA-Z]*r[a-zA-Z]*(?:\s+-[a-zA-Z]+)*\s*$"
)


def the_one_of_a_ranking(command: str, end: str) -> str:
    """``command`` cut to the one line the task asks for when it prints a ranking, the most
    first ("… | sort | uniq -c | sort -rn"), and the task asks for the one most or least
    of something (``end``, the reading's ``ranking_end``: "Which URL failed most often?"
    is ``head``: ``… | sort -rn | head -n 1``); else ``command`` as it is."""
    if not end or not _REVERSED_LAST.search(command):
        return command
    return f"{command} | {end} -n 1"
