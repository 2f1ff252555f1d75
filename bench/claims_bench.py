"""Know when it knows: how often a claimed result is right, and what each piece of evidence
says about being right.

Reads one or more eval output folders (``recipes_bench.py eval --out DIR`` or
``shellagent eval --out DIR``: ``results.jsonl`` or ``records.jsonl`` beside
``transcripts/``) and prints, per folder and together:

- valid tasks, solved, claimed, claims right (precision) and the share claimed (coverage);
- each doubt (``agent/confidence.py``): how many results had it and how many of those
  were solved anyway (a doubt that marks right answers as often as wrong ones should not
  block a claim);
- a sweep of the claim rule over the ranker's score (``claims.CLAIM_SCORE``) with the shape
  doubts held, and with each doubt ignored in turn: precision and coverage at each, to
  calibrate the threshold on these sets;
- the question doubts judged again from each transcript (the task, the recipe's command
  and what it printed) with today's checks (``REJUDGED``), beside the ones saved when it
  ran: each one's count and how many of those were solved anyway, and the claims before
  and after. A count of 0 by a name pattern is taken as if its folder held files (the
  transcript does not say; at run time ``claims.judge`` looks), so its figure is an
  upper bound of what that doubt costs.

    python bench/claims_bench.py /tmp/fv-everyday /tmp/fv-dev
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCORES = (-1.0, -0.8, -0.7, -0.6, -0.5, -0.4, -0.2, 0.0)
# the doubts judged again from a transcript: a question's, from what it printed
REJUDGED = ("part", "kind", "sum", "empty", "many", "unsaid")
_EXIT = re.compile(r"exit -?\d+(?: \(.*\))?")


@dataclass
class Task:
    id: str
    solved: bool
    claimed: bool
    origin: str = "none"
    evidence: dict[str, Any] = field(default_factory=dict)
    rejudged: tuple[str, ...] = ()  # the question doubts judged again (``REJUDGED``)


def _rows(folder: Path) -> list[dict[str, Any]]:
    for name in ("records.jsonl", "results.jsonl"):
        path = folder / name
        if path.exists():
            return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    raise SystemExit(f"{folder}: no results.jsonl or records.jsonl (give an eval --out folder)")


def _evidence(transcript: Path, answer: str) -> tuple[str, dict[str, Any], tuple[str, ...]]:
    origin: str = "none"
    evidence: dict[str, Any] = {}
    rejudged: tuple[str, ...] = ()
    if not transcript.exists():
        return origin, evidence, rejudged
    task, recipe, command, output = "", "", "", ""
    args: dict[str, str] = {}
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        kind = event.get("type")
        if kind == "session_start":
            task = event.get("task") or ""
        if kind == "model_turn":
            action = event.get("action") or {}
            if action.get("origin") == "recipe":
                origin, recipe = "recipe", action.get("use") or recipe
                args = _args(action.get("args"))
            elif action.get("origin") == "free" and origin == "none":
                origin = "free"
        if kind == "execution" and event.get("origin") == "recipe":
            command, output = event.get("command") or "", event.get("output") or ""
        content = event.get("content") or ""
        if kind == "message" and content.startswith("(recipes: evidence "):
            evidence = json.loads(content[len("(recipes: evidence ") : -1])
            rejudged = _rejudge(task, recipe, command, output, evidence, answer)
            rejudged += _unsaid(task, recipe, args)
    return origin, evidence, rejudged


def _args(given: Any) -> dict[str, str]:
    """A recipe call's arguments as the transcript keeps them (a JSON object, or its text)."""
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except json.JSONDecodeError:
            return {}
    return {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}


def _unsaid(task: str, recipe: str, args: dict[str, str]) -> tuple[str, ...]:
    """The ``unsaid`` doubt judged again: an amount the recipe ran with that the task does
    not say (actions and questions alike)."""
    from shellagent.agent.claims import expected
    from shellagent.agent.confidence import unsaid_doubts
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    slots = _slots().get(recipe)
    if not task or slots is None:
        return ()
    wanted = expected(task_values(read_task(task)))
    return tuple(d.check for d in unsaid_doubts(slots, args, wanted.amounts))[:1]


@functools.cache
def _slots() -> dict[str, dict[str, str]]:
    from shellagent.recipes import DATA_DIR, load

    return {
        name: {n: s.type for n, s in r.slots.items()}
        for name, r in load([DATA_DIR]).recipes.items()
    }


@functools.cache
def _kinds() -> dict[str, str]:
    from shellagent.recipes import DATA_DIR, load

    return {name: r.kind for name, r in load([DATA_DIR]).recipes.items()}


def _rejudge(
    task: str, recipe: str, command: str, output: str, evidence: dict[str, Any], answer: str
) -> tuple[str, ...]:
    """The question doubts of ``REJUDGED`` that today's checks find in what ran. A recipe
    composed at run time is not in the catalog: a question unless its ``answer`` says it
    was done ("Done with the recipe …")."""
    from shellagent.agent.claims import expected
    from shellagent.agent.confidence import nothing_counted, question_doubts
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    first, _, rest = output.partition("\n")
    printed = rest if _EXIT.fullmatch(first) else output
    kind = _kinds().get(recipe) or ("action" if answer.startswith("Done with") else "question")
    if kind != "question" or "saved" in evidence.get("doubts", []) or not task:
        return ()
    wanted = expected(task_values(read_task(task)))
    found = [d.check for d in question_doubts(wanted, printed, command)]
    if nothing_counted(wanted, command, printed):
        found.append("empty")
    return tuple(dict.fromkeys(d for d in found if d in REJUDGED))


def read(folder: Path) -> list[Task]:
    tasks = []
    for row in _rows(folder):
        if row.get("status") not in ("solved", "failed"):
            continue
        transcript = folder / "transcripts" / f"{row.get('session')}.jsonl"
        origin, evidence, rejudged = _evidence(transcript, row.get("answer") or "")
        solved, claimed = row["status"] == "solved", bool(row.get("claimed"))
        tasks.append(Task(row["id"], solved, claimed, origin, evidence, rejudged))
    return tasks


def _line(name: str, tasks: list[Task], claimed: list[Task]) -> str:
    right = sum(t.solved for t in claimed)
    precision = f"{100 * right / len(claimed):.1f}%" if claimed else "-"
    coverage = f"{100 * len(claimed) / len(tasks):.1f}%" if tasks else "-"
    solved = sum(t.solved for t in tasks)
    return (
        f"{name:<28} valid {len(tasks):>4}  solved {solved:>4}  claimed {len(claimed):>4}  "
        f"right {right:>4} ({precision})  claimed share {coverage}"
    )


def would_claim(task: Task, score: float, ignore: frozenset[str] = frozenset()) -> bool:
    """The claim rule with the ranker's score at least ``score`` and the shape doubts
    (but those in ``ignore``) held."""
    ev = task.evidence
    if task.origin != "recipe" or not ev:
        return False
    shape = [d for d in ev.get("doubts", []) if d != "ranking" and d not in ignore]
    return not shape and ev.get("score", -99) >= score


def report(name: str, tasks: list[Task]) -> None:
    print(_line(name, tasks, [t for t in tasks if t.claimed]))
    by_origin = collections.defaultdict(list)
    for t in tasks:
        by_origin[t.origin].append(t)
    for origin, group in sorted(by_origin.items()):
        print("  " + _line(f"origin {origin}", group, [t for t in group if t.claimed]))
    doubts: collections.Counter[str] = collections.Counter()
    solved_anyway: collections.Counter[str] = collections.Counter()
    for t in tasks:
        for d in set(t.evidence.get("doubts", [])):
            doubts[d] += 1
            solved_anyway[d] += t.solved
    for d, n in doubts.most_common():
        print(f"  doubt {d:<14} {n:>4} results, {solved_anyway[d]:>4} of them solved anyway")
    for score in SCORES:
        claimed = [t for t in tasks if would_claim(t, score)]
        print("  " + _line(f"rule: score >= {score}", tasks, claimed))
    for d in sorted(doubts):
        if d != "ranking":
            claimed = [t for t in tasks if would_claim(t, -0.6, frozenset({d}))]
            print("  " + _line(f"rule: -0.6, {d} ignored", tasks, claimed))
    wrong = [t.id for t in tasks if t.claimed and not t.solved]
    if wrong:
        print(f"  claimed but wrong: {', '.join(wrong[:40])}")
    _report_rejudged(tasks)


def _report_rejudged(tasks: list[Task]) -> None:
    """The doubts judged again: each one's cost, and the claims with them held."""
    from shellagent.agent.confidence import BLOCKING

    print("  judged again from the transcripts:")
    for d in REJUDGED:
        had = [t for t in tasks if d in t.rejudged]
        saved = sum(d in t.evidence.get("doubts", []) for t in had)
        ids = ", ".join(f"{t.id}{'' if t.solved else ' (wrong)'}" for t in had[:8])
        print(
            f"    doubt {d:<6} {len(had):>4} results ({saved} saved at run time), "
            f"{sum(t.solved for t in had):>4} of them solved anyway{': ' + ids if ids else ''}"
        )
    before = [t for t in tasks if t.claimed]
    after = [t for t in before if not BLOCKING.intersection(t.rejudged)]
    print("    " + _line("claims as saved", tasks, before))
    print("    " + _line("claims, doubts judged again", tasks, after))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args(argv)
    everything: list[Task] = []
    for folder in args.folders:
        tasks = read(folder)
        everything += tasks
        report(str(folder), tasks)
        print()
    if len(args.folders) > 1:
        report("all", everything)
    return 0


if __name__ == "__main__":
    sys.exit(main())
