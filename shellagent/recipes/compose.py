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

from shellagent.recipes.candidates import EXT_WORDS, said_as_imperative
from shellagent.recipes.model import Kind, Recipe, Slot

__all__ = [
    "ENDINGS",
    "COUNT",
    "PICKS",
    "Ending",
    "Pick",
    "compose",
    "compose_pick",
    "ending_for",
    "is_selection",
    "is_unfiltered",
    "narrowed",
    "pick_for",
    "selection_text",
]

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
    # an archive's contents, not lines of a log ("extract the ERROR lines")
    (
        "extract",
        r"(?:unpack|untar|unzip|decompress|uncompress)\b|(?:extract|restore)\b(?=[^.]*?"
        r"(?:\b(?:archive|archives|backup|backups|tarball|tarballs|contents)\b|\.(?:tar|tgz|zip)\b))",
    ),
    ("gzip", r"compress|gzip"),
    (
        "concat",
        r"(?:combine|concatenate|merge|join|cat)\b(?!(?:[^.]|\.\w)*\b(?:archive|tarball|zip)\b)"
        r"(?=(?:[^.]|\.\w)*\b(?:into|to|in)\s+(?:a|one|the)?\s*(?:single|one|new)?\s*"
        r"(?:file|\S+\.\w+))",
    ),
)


LINES = "lines"  # a pick's key: count each file's lines


@dataclass(frozen=True)
class Pick:
    """What is asked of a selection as a whole: the one file that is the most of
    something (``key``: what find prints to sort on, or ``LINES`` to count each file's
    lines; ``order``: sort's flags, "-rn" the largest first), or how many files it has
    (``key`` empty)."""

    name: str
    words: str  # what asks for it
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


PICKS = (
    Pick("largest", r"largest|biggest|heaviest|bulkiest", "%s", "-rn"),
    Pick("smallest", r"smallest|tiniest|lightest", "%s", "-n"),
    Pick(
        "newest",
        r"newest|latest|most\s+recent(?:ly)?(?:\s+(?:modified|changed|created|updated))?|"
        r"last\s+(?:modified|changed|updated)",
        "%T@",
        "-rn",
    ),
    Pick("oldest", r"oldest|least\s+recent(?:ly\s+(?:modified|changed))?|earliest", "%T@", "-n"),
    Pick("longest", r"longest|most\s+lines", LINES, "-rn"),
    Pick("shortest", r"shortest|fewest\s+lines", LINES, "-n"),
)
# "how many .log files …", "count the number of files modified …": a count of a selection
COUNT = Pick("count", r"how\s+many|count(?:\s+the)?(?:\s+(?:total\s+)?number\s+of)?|number\s+of")


_KEPT = re.compile(
    r"\b(?:keep|keeping|except|excluding|other\s+than|apart\s+from|but(?:\s+not)?|"
    r"besides|preserve|preserving|leave|leaving)\s+(?:\w+\s+){0,2}$",
    re.I,
)


_COUNTED = re.compile(
    r"\b(?:which|what|the|top|first|last)\s+(?:\d+|two|three|four|five|six|seven|eight|nine|"
    r"ten|eleven|twelve|fifteen|twenty|fifty|hundred)\b",
    re.I,
)
# what the superlative is said of: a file, or a kind of one ("the newest backup")
_FILE_NOUNS = (
    r"(?:files?|documents?|backups?|archives?|tarballs?|logs?|images?|photos?|pictures?|"
    r"videos?|scripts?|reports?|downloads?|artifacts?|snapshots?|dumps?|uploads?)"
)
_A_FILE = re.compile(rf"\s+(?:[\w.'-]+\s+){{0,3}}?(?:{_FILE_NOUNS}|one)\b", re.I)
_KIND_NOUNS = "|".join(sorted((w for w in EXT_WORDS if w.endswith("s")), key=len, reverse=True))
_FILES_COUNTED = re.compile(
    rf"\s+(?:of\s+)?(?:the\s+|all\s+|these\s+|such\s+)?(?:[\w.'*-]+\s+){{0,2}}?"
    rf"(?:files|documents|backups|archives|tarballs|images|photos|pictures|videos|scripts|"
    rf"reports|downloads|artifacts|snapshots|dumps|uploads|{_KIND_NOUNS})\b",
    re.I,
)
# "which file under /srv is the oldest", "the log file with the most recent modification
# time": said of a file named before it, in its sentence
_FILE_BEFORE = re.compile(
    rf"\b(?:which|what|the)\s+(?:[\w.'-]+\s+){{0,2}}{_FILE_NOUNS}\b[^.?!]*$", re.I
)


def _count_for(task: str) -> Pick | None:
    """The count pick when ``task`` asks how many files ("how many .log files", "count
    the PDFs modified …"), not lines, words or matches."""
    for match in re.finditer(rf"\b(?:{COUNT.words})\b", task, re.I):
        if _FILES_COUNTED.match(task[match.end() :]):
            return COUNT
    return None


def pick_for(task: str) -> Pick | None:
    """The pick the task asks for: one file that is the largest, newest, … ("Identify the
    largest file in /tmp and move it", "which .log file is the newest?"); None when it asks
    for several ("the 5 largest files") or for no such file."""
    from shellagent.recipes.candidates import one_asked

    if not one_asked(task):
        return _count_for(task)
    found = [(m, p) for p in PICKS if (m := re.search(rf"\b(?:{p.words})\b", task, re.I))]
    if not found:
        return _count_for(task)
    match, pick = min(found, key=lambda f: f[0].start())
    before, after = task[: match.start()], task[match.end() :]
    # "keep the most recent 5 files", "all but the newest": not the one to act on;
    # "which five files are the largest": several; "the earliest date in app.log": no file
    if _KEPT.search(before) or re.match(r"\s+\d", after) or _COUNTED.search(task):
        return None
    return pick if _A_FILE.match(after) or _FILE_BEFORE.search(before) else None


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


def ending_for(task: str) -> Ending | None:
    """The ending the task asks for in the imperative ("… and move them to /x"), if one."""

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
_THEM = re.compile(
    r"\s+(?:them|these|those|it|its\s+contents|they|the\s+(?:files|results|matches))\b", re.I
)
# where the object of "remove all files older than 30 days to free up space" ends
_OBJECT_END = re.compile(
    r"\s+(?:into|to|onto|and\s+(?:then\s+)?(?:save|place|put|store|write|move|keep))\b|"
    r"[.;!?](?:\s|$)|,\s+(?:but|and|then|so|to)\b",
    re.I,
)
_TRAILING = re.compile(r"(?:\s*,)?\s*(?:\band\b|\bthen\b|,)*\s*$", re.I)


def selection_text(task: str, ending: Ending | None, pick: Pick | None = None) -> str:
    """``task`` with the act and the pick taken out and the files it acts on asked for
    ("Remove all files older than 30 days to free up space" -> "find all files older
    than 30 days"; "Copy the largest .log file to /tmp" -> "find .log file"): what a
    selection recipe is ranked against when it is offered with ``ending`` and ``pick``.
    The context before the request is kept; "" when the verb is not found."""
    from shellagent.recipes.candidates import request

    asked = request(task)
    context = task[: len(task) - len(asked)] if asked != task else ""
    if pick is not None:  # which one of the files is the pick's to say
        asked = re.sub(rf"\b(?:the\s+)?(?:{pick.words})\b\s*", "", asked, flags=re.I)
    if ending is None:
        return f"{context}{asked}"
    verbs = "|".join(v for name, v in _VERBS if name == ending.name)
    at = said_as_imperative(asked, verbs)
    if at is None:
        return ""
    # the verb alone (the archive's pattern runs on to "into a")
    said = re.match(r"(?:clean\s+up|get\s+rid\s+of|back\s*up|zip\s+up|\w+)", asked[at:], re.I)
    assert said is not None
    after = asked[at + said.end() :]
    if _THEM.match(after):
        what = _TRAILING.sub("", asked[:at])
    else:
        end = _OBJECT_END.search(after)
        what = "find " + (after[: end.start()] if end else after).strip()
    return f"{context}{what.strip()}"


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
    return Recipe(
        name=name,
        summary=summary,
        kind=kind,
        phrasings=(),
        templates=(template,),
        slots={**recipe.slots, **slots},
        area=recipe.area,
        source=recipe.source,
        origin=recipe.origin,  # a composed command is as much yours as what it is made of
    )


def narrowed(recipe: Recipe) -> Recipe | None:
    """``recipe``'s selection narrowed to one extension, with an ``ext`` slot: for "the
    .log files modified in the last day" when the selection that fits the age cannot be
    told the kind (``<recipe>_by_ext``); None when it is no plain selection or already
    takes an extension, a glob or a name."""
    if not is_selection(recipe) or {"ext", "glob", "word", "name"} & set(recipe.slots):
        return None
    match = _SELECTION.fullmatch(recipe.templates[0])
    assert match is not None
    return Recipe(
        name=f"{recipe.name}_by_ext",
        summary=f"{recipe.summary}, of one extension",
        kind=recipe.kind,
        phrasings=(),
        templates=(f"find {{dir}}{match.group('test')} -name '*.{{ext}}' | sort",),
        slots={**recipe.slots, "ext": Slot("ext", "ext", help="the extension, without the dot")},
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
    return Recipe(
        name=f"{recipe.name}_then_{ending.name}",
        summary=f"{recipe.summary}, then {ending.verb}",
        kind="action",
        phrasings=(),
        templates=(template,),
        slots={**recipe.slots, **ending.slots},
        area=recipe.area,
        source=recipe.source,
        origin=recipe.origin,  # a composed command is as much yours as what it is made of
    )
