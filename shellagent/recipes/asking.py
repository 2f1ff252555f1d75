"""What a task asks: the sentence that asks, the act, the one file or the count, the
files the act is on, where the answer is saved and where things go.

The words are the lexicon's (``data/lexicon/``: acts, requests, superlatives,
destinations, saving); how they combine is here. An act is *asked* when one of its verbs
is said in the imperative (at a sentence's or clause's start, or after "and", "then",
"please", "to", "you" …) and not negated ("don't", "without", "no need to" up to two words
before it, or "nothing" right after). ``shellagent.recipes.reading`` calls these once per
task and keeps what they find in its ``TaskReading``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shellagent.recipes.lexicon import Entry, Lexicon

__all__ = [
    "ACT_ORDER",
    "ENDING_ENTRIES",
    "PICK_NAMES",
    "Imperative",
    "destination",
    "ending_and_act",
    "events",
    "imperatives",
    "kind_of",
    "objects_said",
    "one_asked",
    "pick_of",
    "ranking_end",
    "request_span",
    "saving_clause",
    "selection_text",
    "superlative_of",
    "unquoted",
    "unwanted",
]

# Each ending of ``compose`` and the entries whose verbs ask for it, in the order that
# breaks a tie ("compress … into one archive" is the archive's, said where "compress" is).
ENDING_ENTRIES: tuple[tuple[str, str], ...] = (
    ("delete", "acts.delete"),
    ("move", "acts.move"),
    ("copy", "acts.copy"),
    ("archive", "acts.archive"),
    ("archive", "acts.archive_named"),
    ("archive", "acts.archive_collect"),
    ("extract", "acts.extract"),
    ("gzip", "acts.gzip"),
    ("concat", "acts.concat"),
)
# The acts a reading names: the endings, and renaming.
ACT_ORDER: tuple[tuple[str, str], ...] = (*ENDING_ENTRIES, ("rename", "acts.rename"))
# The verbs that make a task an action: every act's plain verbs and the other verbs of
# change.
_ACTION_ENTRIES = (
    "acts.delete",
    "acts.move",
    "acts.copy",
    "acts.rename",
    "acts.gzip",
    "acts.change",
)
# The picks of one file, in ``compose.PICKS``' order.
PICK_NAMES = ("largest", "smallest", "newest", "oldest", "longest", "shortest")


def request_span(task: str, lexicon: Lexicon) -> str:
    """The part of ``task`` that asks for something: from its first sentence that asks on
    ("The 'x' service logs to /var/log/x. Find the errors …": ``Find the errors …``);
    the whole task when its first sentence asks already, or when none does."""
    sentences: list[tuple[int, int]] = []
    start = len(task) - len(task.lstrip())
    for m in lexicon["requests.sentence_end"].finditer(task):
        sentences.append((start, m.start()))
        start = m.end()
    sentences.append((start, len(task)))
    asks = lexicon["requests.start"].regex
    for i, (begin, end) in enumerate(sentences):
        sentence = task[begin:end].strip()
        if asks.match(sentence) or sentence.endswith("?"):
            return task[begin:] if i else task
    return task


@dataclass(frozen=True)
class Imperative:
    """A verb said in the imperative: where, how long, and whether it is negated."""

    at: int
    end: int
    negated: bool


def _lead(lexicon: Lexicon) -> str:
    return rf"(?:^|[.!?;:,]\s+|\b{lexicon['requests.lead'].alternation}\s+)"


def imperatives(text: str, verbs: str, lexicon: Lexicon) -> list[Imperative]:
    """Where ``text`` says one of ``verbs`` (a regex) in the imperative ("… and delete
    them", "Please remove", not "A backup script"), each with whether it is negated
    ("don't unpack it", "I don't want to unpack it", "delete nothing")."""
    negation = re.compile(
        rf"\b{lexicon['requests.negation'].alternation}\s+(?:\w+\s+){{0,2}}$", re.I
    )
    nothing = re.compile(rf"\s+{lexicon['requests.nothing'].alternation}\b", re.I)
    found = []
    for match in re.finditer(_lead(lexicon) + r"(?P<verb>(?:" + verbs + r"))\b", text, re.I):
        at, end = match.start("verb"), match.end("verb")
        negated = bool(negation.search(text[:at])) or bool(nothing.match(text, end))
        found.append(Imperative(at, end, negated))
    return found


def _asked(text: str, verbs: str, lexicon: Lexicon) -> int | None:
    """Where ``text`` first asks ``verbs`` in the imperative, not negated."""
    return next((i.at for i in imperatives(text, verbs, lexicon) if not i.negated), None)


def _refused(text: str, entry: Entry, lexicon: Lexicon) -> int | None:
    """Where ``text`` says ``entry``'s act negated, in any form ("without unzipping it",
    "never remove", "don't rename")."""
    stems = [w[:-1] if w.endswith("e") else w for w in (entry.words or ())]
    if not stems:
        return None
    forms = "|".join(r"\s+".join(map(re.escape, s.split())) + r"\w*" for s in stems)
    negation = lexicon["requests.negation"].alternation
    said = re.search(rf"\b{negation}\s+(?:\w+\s+){{0,2}}(?:{forms})\b", text, re.I)
    nothing = lexicon["requests.nothing"].alternation
    later = re.search(rf"\b(?:{forms})\s+{nothing}\b", text, re.I)
    hits = [m.start() for m in (said, later) if m is not None]
    return min(hits) if hits else None


def unquoted(text: str) -> str:
    """``text`` with what it quotes blanked out (its length kept): a verb inside quotes
    ("files that mention 'TODO: fix'") is text to look for, not an act asked."""
    return re.sub(
        r"(?<![\w])'[^'\n]{1,120}'(?![\w])|\"[^\"\n]{1,120}\"|`[^`\n]{1,120}`",
        lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1],
        text,
    )


def ending_and_act(task: str, lexicon: Lexicon) -> tuple[str, str, bool]:
    """The ending the task asks for in the imperative ("… and move them to /x"), the act
    it asks (an ending or "rename"), and whether the act is only said negated ("what's
    inside? I don't want to unpack it": ``("", "extract", True)``). Quoted text says no
    act."""
    task = unquoted(task)
    best: tuple[int, int, str] | None = None
    for rank, (name, entry) in enumerate(ACT_ORDER):
        at = _asked(task, lexicon[entry].source_pattern, lexicon)
        if at is not None and (best is None or (at, rank) < best[:2]):
            best = (at, rank, name)
    if best is not None:
        ending = best[2] if best[2] != "rename" else ""
        if not ending:  # renaming first: an ending said later still asks
            later = [
                (at, rank, name)
                for rank, (name, entry) in enumerate(ENDING_ENTRIES)
                if (at := _asked(task, lexicon[entry].source_pattern, lexicon)) is not None
            ]
            ending = min(later)[2] if later else ""
        return ending, best[2], False
    # a verb said negated is its own act: "no need to compress them" refuses compressing
    # each, not packing into one archive (which would need "into one archive" said)
    refused = [
        (at, bool(lexicon[entry].pattern) and lexicon[entry].pattern != "{words}", rank, name)
        for rank, (name, entry) in enumerate(ACT_ORDER)
        if (at := _refused(task, lexicon[entry], lexicon)) is not None
    ]
    return ("", min(refused)[3], True) if refused else ("", "", False)


def kind_of(task: str, lexicon: Lexicon) -> str:
    """ "action" when the task says a verb of change in the imperative, not negated;
    "question" when a sentence or clause of it asks (a question word, "show", "tell me",
    a question mark); "" when it cannot be told ("biggest files in /srv"). Quoted text
    says no verb."""
    task = unquoted(task)
    verbs = "|".join(lexicon[e].alternation for e in _ACTION_ENTRIES)
    if _asked(task, verbs, lexicon) is not None:
        return "action"
    if re.search(r"\?(?:\s|$)", task):
        return "question"
    question = lexicon["requests.question"].regex
    leads = re.compile(rf"^\s*(?:{lexicon['requests.clause_lead'].alternation}\s+)+", re.I)
    for clause in re.split(r"[.;,!:]\s+|\n", task):
        if question.search(leads.sub("", clause)):
            return "question"
    return ""


def _plural_nouns(lexicon: Lexicon) -> str:
    nouns = [w for w in lexicon["files.nouns"].words if w.endswith("s")]
    kinds = [
        w
        for entry in ("kinds.words", "kinds.categories")
        for w in lexicon[entry].values
        if w.endswith("s")
    ]
    ordered = sorted(dict.fromkeys([*nouns, *kinds]), key=lambda w: (-len(w), w))
    return "|".join(map(re.escape, ordered))


def one_asked(task: str, lexicon: Lexicon) -> bool:
    """Whether ``task`` asks for the one most or least of something ("Which Python file is
    the longest?", "What's the single biggest file?", "Identify the most recent backup
    file"), so a count slot means 1."""
    if lexicon["superlatives.several"].says(task):
        return False
    if lexicon["superlatives.any"].says(task) and lexicon["superlatives.one"].says(task):
        return True
    match = lexicon["superlatives.the_one"].search(task)
    if match is None:
        return False
    words = [w.lower() for w in match.groups() if w]
    not_plural = lexicon["superlatives.not_plural"]
    return not any(w.endswith("s") and not not_plural.says(w) for w in words)


def ranking_end(task: str, one: bool, lexicon: Lexicon) -> str:
    """Which end of a ranking, the most first, the task asks for: "head" (its most),
    "tail" (its least: "Which status code is the least common?"), or "" (several)."""
    if not one:
        return ""
    first = lexicon["superlatives.any"].search(task)
    if first is None:
        return ""
    least = lexicon["superlatives.least"].regex.match(task, first.start())
    return "tail" if least else "head"


def superlative_of(task: str, lexicon: Lexicon) -> str:
    """The superlative the task says first: a pick of one file's ("largest", "newest" …)
    or a ranking's ("most", "least"); "" when none."""
    found: list[tuple[int, int, str]] = []
    for rank, name in enumerate((*PICK_NAMES, "most", "least")):
        match = lexicon[f"superlatives.{name}"].search(task)
        if match is not None:
            found.append((match.start(), rank, name))
    return min(found)[2] if found else ""


def _count_of_files(task: str, lexicon: Lexicon) -> bool:
    """Whether ``task`` asks how many files ("how many .log files", "count the PDFs
    modified …"), not lines, words or matches."""
    files = re.compile(
        r"\s+(?:of\s+)?(?:the\s+|all\s+|these\s+|such\s+)?(?:[\w.'*-]+\s+){0,2}?"
        rf"(?:{_plural_nouns(lexicon)})\b",
        re.I,
    )
    return any(files.match(task, m.end()) for m in lexicon["superlatives.count"].finditer(task))


def pick_of(task: str, one: bool, lexicon: Lexicon) -> str:
    """The pick the task asks for: one file that is the largest, newest, … ("Identify the
    largest file in /tmp and move it", "which .log file is the newest?"), "count" when it
    asks how many files, "" when it asks for several ("the 5 largest files") or for no
    such file."""
    counted = "count" if _count_of_files(task, lexicon) else ""
    if not one:
        return counted
    found = [
        (m, name)
        for name in PICK_NAMES
        if (m := lexicon[f"superlatives.{name}"].search(task)) is not None
    ]
    if not found:
        return counted
    match, name = min(found, key=lambda f: f[0].start())
    before, after = task[: match.start()], task[match.end() :]
    # "keep the most recent 5 files", "all but the newest": not the one to act on;
    # "which five files are the largest": several; "the earliest date in app.log": no file
    # a file, or a kind or sort of one ("the oldest pdf", "my latest song")
    nouns = "|".join(
        lexicon[e].alternation for e in ("files.nouns", "kinds.words", "kinds.categories")
    )
    a_file = re.compile(rf"\s+(?:[\w.'-]+\s+){{0,3}}?(?:{nouns}|one)\b", re.I)
    file_before = re.compile(
        rf"\b(?:which|what|the)\s+(?:[\w.'-]+\s+){{0,2}}{nouns}\b[^.?!]*$", re.I
    )
    if (
        lexicon["superlatives.kept"].search(before)
        or re.match(r"\s+\d", after)
        or lexicon["superlatives.counted"].search(task)
    ):
        return ""
    return name if a_file.match(after) or file_before.search(before) else ""


_TRAILING = re.compile(r"(?:\s*,)?\s*(?:\band\b|\bthen\b|,)*\s*$", re.I)


def _verb_alone(text: str, entries: Sequence[Entry]) -> int:
    """How long the verb at the start of ``text`` is: the longest word of ``entries``
    said there ("clean up", "put a copy"), else one word."""
    longest = 0
    for entry in entries:
        if entry.words:
            m = re.match(entry.alternation, text, re.I)
            if m:
                longest = max(longest, m.end())
    if longest:
        return longest
    m = re.match(r"\w+", text)
    return m.end() if m else 0


def selection_text(task: str, request: str, ending: str, pick: str, lexicon: Lexicon) -> str:
    """``task`` with the act and the pick taken out and the files it acts on asked for
    ("Remove all files older than 30 days to free up space" -> "find all files older
    than 30 days"; "Copy the largest .log file to /tmp" -> "find .log file"): what a
    selection recipe is ranked against when it is offered with the ``ending`` and the
    ``pick``. The context before the request is kept; "" when the verb is not found."""
    asked = request
    context = task[: len(task) - len(asked)] if asked != task else ""
    if pick:  # which one of the files is the pick's to say
        entry = lexicon["superlatives.count" if pick == "count" else f"superlatives.{pick}"]
        asked = re.sub(rf"\b(?:the\s+)?(?:{entry.source_pattern})\s*", "", asked, flags=re.I)
    if not ending:
        return f"{context}{asked}"
    entries = [lexicon[e] for name, e in ENDING_ENTRIES if name == ending]
    at = _asked(asked, "|".join(e.source_pattern for e in entries), lexicon)
    if at is None:
        return ""
    after = asked[at + _verb_alone(asked[at:], entries) :]
    if lexicon["destinations.them"].regex.match(after):
        what = _TRAILING.sub("", asked[:at])
    else:
        end = lexicon["destinations.object_end"].search(after)
        what = "find " + (after[: end.start()] if end else after).strip()
    return f"{context}{what.strip()}"


def saving_clause(request: str, lexicon: Lexicon) -> str:
    """The part of the request from a verb of saving on ("save the list to /tmp/x":
    ``save the list to /tmp/x``), or "" when it says to save nothing. Only the request
    is read: "The service stores its output in /srv/out.csv." says what a program does."""
    said = lexicon["saving.save"].search(request)
    return request[said.start() :] if said else ""


# What may come between "to", "into", "as" … and where things go ("a new folder named",
# "my", "the"), and the name or path itself.
_GOES = re.compile(
    r"(?:(?:the|a|an|my|your|new|single)\s+)*"
    r"(?:(?P<kind>folder|directory|dir|file|archive)\s+(?:(?:named|called)\s+)?)?"
    r"""['"`]?(?P<dest>~?/?[\w.@+~-][\w.@+~/-]*)['"`]?(?P<folder>\s+(?:folder|directory|dir)\b)?""",
    re.I,
)
_NOT_PLACES = {"it", "them", "there", "here", "this", "that", "these", "those", "one", "each"}


def destination(request: str, act_at: int, lexicon: Lexicon) -> tuple[str, bool | None, str]:
    """Where the act said at ``act_at`` puts things ("as" first, then "to", "into",
    "onto", then "in"; the last said of a kind), whether the words say it is a folder
    ("a new folder old/", "the Pictures folder"; None: they do not tell), and the word
    before it."""
    places = lexicon["destinations.places"]
    stop = lexicon["files.stop"]
    best: tuple[int, int, str, bool | None, str] | None = None
    for m in re.finditer(rf"\b({places.alternation})\s+", request[act_at:], re.I):
        rank = places.value(m.group(1))
        goes = _GOES.match(request, act_at + m.end())
        if rank is None or goes is None:
            continue
        dest = goes.group("dest").rstrip(".,;:!?)'\"`")
        if not dest or dest.lower() in _NOT_PLACES or ("/" not in dest and stop.says(dest)):
            continue
        kind = (goes.group("kind") or "").lower()
        said = bool(goes.group("folder")) or kind in ("folder", "directory", "dir")
        folder: bool | None = True if said or dest.endswith("/") else None
        key = (int(rank), -m.start())
        if best is None or key < best[:2]:
            best = (*key, dest.rstrip("/") or "/", folder, m.group(1).lower())
    if best is None:
        return "", None, ""
    return best[2], best[3], best[4]


# the properties a selection may narrow by without a value, and how far before one a
# negation may stand (words, in its clause)
PROPERTIES = ("empty", "permissions", "hidden")
_NEGATION_REACH = re.compile(r"^[\s-]*(?:[\w']+\s+){0,3}$")


def unwanted(request: str, lx: Lexicon) -> tuple[str, ...]:
    """The properties (``PROPERTIES``) the request says the files must not have: one
    said with a negation (lexicon ``selections.negation``) at most three words before it,
    in the same clause ("which scripts can't be executed", "the non-empty files")."""
    negation = lx["selections.negation"].regex
    found = []
    for name in PROPERTIES:
        for m in lx[f"selections.{name}"].regex.finditer(request):
            before = request[: m.start()]
            cues = list(negation.finditer(before))
            if cues and _NEGATION_REACH.match(before[cues[-1].end() :]):
                found.append(name)
                break
    return tuple(found)


def objects_said(text: str, lx: Lexicon) -> str:
    """ "files" when ``text`` says file and no folder ("One file in Downloads is completely
    empty. What is it called?"), "folders" for the reverse, else "" (both or neither)."""
    files = lx["files.file_word"].says(text)
    folders = lx["files.folder_word"].says(text)
    return "files" if files and not folders else "folders" if folders and not files else ""


def events(request: str, lx: Lexicon) -> tuple[str, ...]:
    """What the request asks the time of, as the stem a log's lines say in any form
    (lexicon ``quoted.event``): "when did the backup last fail" → fail (FAILED),
    "when was nginx restarted" → restart (Restarting), "on which day did it crash" → crash."""
    found = []
    for m in lx["quoted.event"].finditer(request):
        word = m.group(1).lower()
        for ending in ("ing", "ed", "es", "s"):
            stem = word[: -len(ending)]
            if word.endswith(ending) and not word.endswith("ss") and len(stem) >= 3:
                # "stopped": stop; "failed": fail
                doubled = len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] in "bdgmnprt"
                word = stem[:-1] if doubled else stem
                break
        found.append(word)
    return tuple(dict.fromkeys(found))
