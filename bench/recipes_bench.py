"""Recipes first: how well the ranking knows intents, and what the recipe path solves.

``intents`` (no model): trains the ranker on the shipped recipes and reports top-1 and
top-5 intent accuracy on the held-out phrasings (tests/data/recipe-intents-heldout.jsonl,
written from the recipes' names and summaries only, in other words) and on the everyday
set's tasks as labelled for measuring (bench/data/everyday-recipe-labels.jsonl: the recipe
a person would pick; never used to write recipes), and how coverage and accuracy move with
the score thresholds (recipes.shortlist.CONFIDENT and FITS), with the share of the 300 dev tasks
above each.

``reading`` (no model): the reading of each request of the reading test set
(tests/data/task-readings.jsonl, written before the reader and never edited to pass)
against the reading expected, accuracy per field; ``--text`` prints the reading of a
request instead.

``eval`` (the embedded model; run under ``flock /tmp/shellagent-model.lock``): runs task
sets through the eval harness with the model agent, recipes on (or ``--recipes off`` for
the baseline in the same conditions), and reports the solve rate with its Wilson 95 %
interval, seconds per task, and the share of tasks answered by a recipe vs by commands
the model wrote itself.

    python bench/recipes_bench.py intents
    python bench/recipes_bench.py reading      # accuracy per field on the reading test set
    python bench/recipes_bench.py reading --text "move the logs older than a week to old/"
    python bench/recipes_bench.py leakage      # phrasings vs the dev, everyday, held-out sets
    flock /tmp/shellagent-model.lock python bench/recipes_bench.py eval --set everyday
    flock /tmp/shellagent-model.lock python bench/recipes_bench.py eval --set dev --out DIR
    flock /tmp/shellagent-model.lock python bench/recipes_bench.py eval --set dev --ids IDS_FILE
    python bench/recipes_bench.py eval --model first-values   # no model: the machinery alone
    python bench/recipes_bench.py failures DIR [--labels FILE]  # a run's failed recipe answers

``calls`` (run under the lock): the model's ``{"use", "args"}`` replies against gold calls,
for several models on the same prompts (``--models default,default+calls.gguf``;
``first-values`` is the ranker's first with each slot's first value). Three sets, none a
training source: unseen draws of the task families the recipes map (seed ``heldout``;
recipe and command right), the held-out phrasings and the everyday labels (recipe right:
they carry no values). A draw's and an everyday task's setup is run in a throwaway sandbox
first, so the values are offered from its working directory as at run time. Each is asked
as the recipe step asks (the ranker's first recipe alone, the model fills it: "run
time"), and a draw also with its gold recipe alone ("gold alone": filling only).

    flock /tmp/shellagent-model.lock python bench/recipes_bench.py calls \
        --models first-values,default,default+calls.gguf
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "tests" / "data" / "recipe-intents-heldout.jsonl"
LABELS = ROOT / "bench" / "data" / "everyday-recipe-labels.jsonl"
EVERYDAY = ROOT / "shellagent" / "taskgen" / "data" / "everyday-answers.jsonl"
PARAPHRASES = ROOT / "bench" / "data" / "everyday-paraphrases.jsonl"
# 16 everyday requests of a newcomer's kind, each with its own small setup and check,
# written as a person asks, for ``ask``'s everyday measure (never a source of phrasings)
NEWCOMER = ROOT / "bench" / "data" / "newcomer-requests.jsonl"
# the 16 everyday tasks of the first new-user trial (issue 29's list: largest files, a PDF
# count, old logs deleted, a rename, a backup into a tarball, …), reworded, with setups
# and checks of their own: the actions a newcomer asks for first
EARLIER = ROOT / "bench" / "data" / "earlier-requests.jsonl"
DEV = ROOT.parents[1] / "shared" / "tasks" / "shell-tasks-dev.jsonl"
if not DEV.exists():
    DEV = Path("/work/shared/tasks/shell-tasks-dev.jsonl")
SHAPE_POOL = 12  # as recipes.shortlist.POOL
THRESHOLDS = (-0.8, -0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def intents(args: argparse.Namespace) -> int:
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import Ranker

    catalog = load([DATA_DIR])
    recipes = list(catalog.recipes.values())
    began = time.perf_counter()
    ranker = Ranker.train(recipes)
    print(f"recipes: {len(recipes)}; trained in {time.perf_counter() - began:.1f} s")

    from shellagent.recipes.fitness import rerank
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    def rank(task: str, limit: int) -> list[Any]:
        """The ranker's words (the task and its request, as the recipe step ranks them),
        then (``--shape on``) the recipes' shapes against what the task names (no listing
        here: names given without a folder stay unresolved)."""
        reading = read_task(task)
        if args.shape == "off":
            return ranker.rank(task, limit, asked=reading.request)
        ranked = ranker.rank(task, max(limit, SHAPE_POOL), asked=reading.request)
        return rerank(ranked, catalog.recipes, task_values(reading))[:limit]

    def accuracy(rows: list[tuple[str, str]], label: str) -> list[tuple[float, bool, bool]]:
        points = []
        top1 = top5 = 0
        misses = []
        for task, want in rows:
            ranked = rank(task, 5)
            names = [c.name for c in ranked]
            top1 += names[0] == want
            top5 += want in names
            points.append((ranked[0].score, names[0] == want, want in names[:3]))
            if names[0] != want:
                misses.append(f"  {want} <- {names[0]}: {task}")
        n = len(rows)
        print(f"{label}: {n} tasks; top-1 {top1}/{n} ({100 * top1 / n:.1f} %), ", end="")
        print(f"top-5 {top5}/{n} ({100 * top5 / n:.1f} %)")
        if args.misses:
            print("\n".join(misses))
        return points

    names = set(catalog.recipes)
    held = [(r["task"], r["recipe"]) for r in _lines(HELDOUT) if r["recipe"] in names]
    dropped = sum(1 for r in _lines(HELDOUT) if r["recipe"] not in names)
    if dropped:
        print(f"(held-out: {dropped} phrasings name recipes not in this set, left out)")
    points = accuracy(held, "held-out phrasings")
    tasks = {t["id"]: t["task"] for t in _lines(EVERYDAY)}
    labelled = [(tasks[r["id"]], r["recipe"]) for r in _lines(LABELS) if r["recipe"] in names]
    print(f"everyday set: {len(labelled)} of {len(tasks)} tasks have a fitting recipe")
    every = accuracy(labelled, "everyday tasks")
    dev = [rank(t["task"], 1)[0].score for t in _lines(DEV)] if DEV.exists() else []
    print(
        "\nthreshold  held-out: share above, top-1 right, top-3 right | everyday above | dev above"
    )
    for th in THRESHOLDS:

        def share(pts: list[tuple[float, bool, bool]], th: float = th) -> str:
            above = [p for p in pts if p[0] >= th]
            if not above:
                return "  -"
            right = sum(p[1] for p in above) / len(above)
            three = sum(p[2] for p in above) / len(above)
            return f"{len(above) / len(pts):5.2f} {right:5.2f} {three:5.2f}"

        dev_above = sum(s >= th for s in dev) / len(dev) if dev else 0.0
        print(f"{th:9.2f}  {share(points)} | {share(every)} | {dev_above:5.2f}")
    return 0


READINGS = ROOT / "tests" / "data" / "task-readings.jsonl"
READING_DAY = "2026-11-26"  # the set's readings are as of this day ("since Monday": 4 days)


def reading(args: argparse.Namespace) -> int:
    from datetime import date

    from shellagent.recipes.reading import read_task

    today = date.fromisoformat(READING_DAY)
    if args.text:
        for text in args.text:
            print(json.dumps(read_task(text, today=today).summary(), indent=1))
        return 0
    right: collections.Counter[str] = collections.Counter()
    asked: collections.Counter[str] = collections.Counter()
    misses = []
    began = time.perf_counter()
    rows = _lines(READINGS)
    for row in rows:
        got = read_task(row["text"], today=today).summary()
        for name, want in row["expect"].items():
            said = got[name]
            if name == "request":
                said, want = str(said).strip(), str(want).strip()
            asked[name] += 1
            right[name] += said == want
            if said != want:
                misses.append(f"  {row['id']} {name}: want {want!r}, read {said!r}: {row['text']}")
    took = (time.perf_counter() - began) / len(rows) * 1000
    total = sum(asked.values())
    print(f"reading set: {len(rows)} requests, {total} fields; {took:.1f} ms a reading")
    print(f"overall {sum(right.values())}/{total} ({100 * sum(right.values()) / total:.1f} %)")
    for name in sorted(asked, key=lambda n: -asked[n]):
        print(
            f"  {name:13} {right[name]:3}/{asked[name]:3} {100 * right[name] / asked[name]:5.1f} %"
        )
    if args.misses:
        print("\n".join(misses))
    return 0


def _origins(transcript: Path) -> tuple[str, float]:
    """How a task was answered ("recipe", "free" or "none") and its model seconds."""
    origin, model_s = "none", 0.0
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") != "model_turn":
            continue
        model_s += float(event.get("duration_s") or 0.0)
        action = event.get("action") or {}
        if action.get("origin") == "recipe" and origin == "none":
            origin = "recipe"
        elif action.get("origin") == "free":
            origin = "free" if origin == "none" else f"{origin}+free"
    return origin, model_s


class FirstValues:
    """A stand-in for the model that needs no model: a ``use`` reply takes the first offered
    recipe with each slot's first value (what the prompt shows as its example), and a free
    turn gives up at once. It measures the recipe machinery alone: ranking, the values read
    from the task, trying before showing."""

    name = "first-values"
    context_size = 8192

    def generate(self, messages: Any, *, reply_format: Any = None, **_: Any) -> Any:
        from shellagent.model.backend import Generation

        text = '{"done": "no recipe"}'
        if reply_format is not None and reply_format.name == "use":
            text = messages[0]["content"].rsplit("\n", 1)[-1]  # the example reply
        return Generation(text=text, prompt_tokens=0, evaluated_prompt_tokens=0, generated_tokens=0)

    def count_tokens(self, messages: Any) -> int:
        return sum(len(m["content"]) // 4 for m in messages)


def _ids(given: str) -> set[str]:
    """Task ids from a comma-separated list, or from a file of them (one per line, or the
    ``records.jsonl`` of an earlier run, whose ``id`` fields are taken)."""
    path = Path(given)
    if not path.exists():
        return {i.strip() for i in given.split(",") if i.strip()}
    ids = set()
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            ids.add(json.loads(line)["id"] if line.startswith("{") else line)
    return ids


def evaluate(args: argparse.Namespace) -> int:
    from shellagent.eval import ModelAgent, RunConfig, load_tasks, run_eval, summarize
    from shellagent.eval.report import render_summary
    from shellagent.model import load_backend

    path = {"everyday": EVERYDAY, "newcomer": NEWCOMER, "earlier": EARLIER}.get(args.set, DEV)
    tasks = load_tasks(path).tasks[args.offset :]
    if args.ids:
        wanted = _ids(args.ids)
        tasks = tuple(t for t in tasks if t.id in wanted)
    if args.limit:
        tasks = tasks[: args.limit]
    backend = FirstValues() if args.model == "first-values" else load_backend(args.model)
    agent = ModelAgent(
        backend,
        max_turns=args.max_turns,
        examples=args.examples,
        policy=args.policy,
        recipes=args.recipes == "on",
        stall_limit=args.stall_limit,
    )
    book = agent.recipe_book()  # a ranker trained now is not a task's time
    if book is not None and (args.trials == "off" or args.shape == "off"):
        import dataclasses

        agent._book = dataclasses.replace(  # no trying before showing; words only
            book, try_uncertain=args.trials == "on", shapes=args.shape == "on"
        )
    out = Path(args.out or f"/tmp/recipes-bench-{args.set}-{int(time.time())}")
    out.mkdir(parents=True, exist_ok=True)
    print(f"{args.set}: {len(tasks)} tasks, recipes {args.recipes}, trials {args.trials}, ", end="")
    print(f"shapes {args.shape}, stall limit {args.stall_limit}, ", end="")
    print(f"load {os.getloadavg()}")
    run = run_eval(tasks, agent, RunConfig(transcripts_dir=out / "transcripts"), jobs=1)
    summary = summarize(run, agent=f"model {backend.name}, recipes {args.recipes}")
    print(render_summary(summary))
    ways: collections.Counter[str] = collections.Counter()
    solved_by: collections.Counter[str] = collections.Counter()
    records = []
    for result in run.results:
        transcript = out / "transcripts" / f"{result.session}.jsonl"
        origin, model_s = _origins(transcript) if transcript.exists() else ("none", 0.0)
        if result.valid:
            ways[origin] += 1
            solved_by[origin] += result.status == "solved"
        records.append({**result.to_json(), "origin": origin, "model_s": model_s})
    with (out / "records.jsonl").open("w") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    valid = sum(ways.values())
    print(
        "answered by: "
        + ", ".join(f"{k} {v}/{valid} (solved {solved_by[k]})" for k, v in ways.most_common())
    )
    secs = [r.wall_s for r in run.results if r.valid]
    agent_s = [r.agent_s for r in run.results if r.valid]
    if secs:
        wall, in_agent = sum(secs) / len(secs), sum(agent_s) / len(agent_s)
        print(f"seconds per task: {wall:.2f} wall, {in_agent:.2f} agent")
    print(f"load average at the end: {os.getloadavg()}; records in {out}")
    return 0


def calls(args: argparse.Namespace) -> int:
    from shellagent.agent.recipe_grammar import use_format
    from shellagent.agent.recipe_step import USE_MAX_TOKENS, RecipeBook, prompt
    from shellagent.model import load_backend
    from shellagent.taskgen.calls import Call, check_reply, family_calls, gold_offer, offered

    book = RecipeBook.load()
    recipes = list(book.recipes.values())
    everyday = {t["id"]: t for t in _lines(EVERYDAY)}
    sets: dict[str, list[Call]] = {
        "families (unseen draws)": list(family_calls(recipes, args.instances, "heldout")),
        "held-out phrasings": [
            Call(r["task"], r["recipe"], {}, "held-out")
            for r in _lines(HELDOUT)
            if r["recipe"] in book.recipes
        ],
        "everyday labels": [
            Call(
                everyday[r["id"]]["task"],
                r["recipe"],
                {},
                "everyday",
                tuple(everyday[r["id"]]["setup_commands"]),
            )
            for r in _lines(LABELS)
            if r["recipe"] in book.recipes
        ],
    }
    if args.limit:
        sets = {name: items[: args.limit] for name, items in sets.items()}
    asked: list[tuple[str, str, Call, list[Any]]] = []  # (set, view, call, offers)
    for set_name, items in sets.items():
        for call in items:
            listed = offered(book, call)
            if listed is None:
                continue  # no recipe fits: the free loop's, not a call
            asked.append((set_name, "run time", call, listed.offers[:1]))
            alone = gold_offer(listed, call)
            if call.args and alone is not None:
                asked.append((set_name, "gold alone", call, [alone]))
    print(f"{len(asked)} prompts; load {os.getloadavg()}", flush=True)
    results: dict[tuple[str, str, str], list[tuple[bool, bool, bool]]] = {}
    for model in args.models.split(","):
        backend = None if model == "first-values" else load_backend(model or None)
        began = time.monotonic()
        for set_name, view, call, offers in asked:
            if backend is None or (len(offers) == 1 and not call.args):
                # first values; or one recipe offered and no values to check, where the
                # grammar alone decides what is scored
                reply = json.dumps(offers[0].example(), ensure_ascii=False)
            else:
                reply = backend.generate(
                    prompt(call.task, offers),
                    reply_format=use_format(offers),
                    max_tokens=USE_MAX_TOKENS,
                ).text
            recipe_ok, command_ok = check_reply(book, call, reply)
            offered_gold = any(o.name == call.recipe for o in offers)
            key = (model, set_name, view)
            results.setdefault(key, []).append((offered_gold, recipe_ok, command_ok))
        spent = time.monotonic() - began
        print(f"{model}: {len(asked)} replies in {spent:.0f} s", flush=True)
        del backend
    print("\nmodel | set | offers | gold offered | recipe right | command right (families)")
    for (model, set_name, view), rows in results.items():
        n = len(rows)
        gold = sum(r[0] for r in rows)
        right = sum(r[1] for r in rows)
        command = sum(r[2] for r in rows)
        line = f"{model} | {set_name} | {view} | {gold}/{n} | {right}/{n} ({100 * right / n:.1f} %)"
        if set_name.startswith("families"):
            line += f" | {command}/{n} ({100 * command / n:.1f} %)"
        print(line)
    print(f"load at the end {os.getloadavg()}")
    return 0


def leakage(args: argparse.Namespace) -> int:
    """How close the recipes' phrasings come to the sets that measure them (the dev tasks,
    the everyday set and its teach-once paraphrases, the held-out phrasings): the Jaccard
    similarity of normalised words (``shellagent.taskgen.leakage``), each phrasing filled
    with typical slot values."""
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import fill_phrasing
    from shellagent.taskgen.leakage import compare

    catalog = load([DATA_DIR])
    phrasings = [
        (f"{r.name}#{i}", fill_phrasing(p, r.slots))
        for r in catalog.recipes.values()
        for i, p in enumerate(r.phrasings)
    ]
    sets = {
        "dev": [(t["id"], t["task"]) for t in _lines(DEV)] if DEV.exists() else [],
        "everyday": [(t["id"], t["task"]) for t in _lines(EVERYDAY)],
        "held-out phrasings": [(str(i), t["task"]) for i, t in enumerate(_lines(HELDOUT))],
        "teach-once paraphrases": [(t["id"], t["paraphrase"]) for t in _lines(PARAPHRASES)],
    }
    print(f"{len(phrasings)} phrasings of {len(catalog.recipes)} recipes")
    worst = 0.0
    for name, references in sets.items():
        if not references:
            print(f"{name}: not found, skipped")
            continue
        report = compare(phrasings, references, top=args.top)
        worst = max(worst, report.max_similarity)
        print(
            f"{name} ({len(references)} tasks): max {report.max_similarity:.2f}, "
            f"p99 {report.quantile(0.99):.2f}, median {report.quantile(0.5):.2f}, "
            f"exact {report.exact}, >= {args.max:.2f}: {report.above(args.max)}"
        )
        for pair in report.nearest:
            print(f"  {pair.similarity:.2f}  {pair.candidate_id}: {pair.candidate}")
            print(f"        {pair.reference_id}: {pair.reference}")
    return 1 if worst >= args.max else 0


def failures(args: argparse.Namespace) -> int:
    """The recipe answers of an ``eval`` run (``--out DIR``) that failed, one block each:
    the task, the recipe run with its values, the recipes tried beside it and what the
    check printed, to be sorted by hand into classes (wrong recipe chosen, right recipe
    with a wrong value, no recipe does it, check unfair). ``--labels FILE`` (lines "ID
    CLASS SUBCLASS") counts each class and subclass instead."""
    out = Path(args.dir)
    tasks = {t["id"]: t for t in _lines(Path(args.tasks))}
    failed = [
        r
        for r in _lines(out / "records.jsonl")
        if r.get("origin") == "recipe" and r.get("status") == "failed"
    ]
    if args.labels:
        labels = [line.split(None, 2) for line in Path(args.labels).read_text().splitlines()]
        classes = collections.Counter(parts[1] for parts in labels if len(parts) > 1)
        subs = collections.Counter(
            (parts[1], parts[2].split()[0]) for parts in labels if len(parts) > 2
        )
        print(f"{len(failed)} recipe answers failed; {len(labels)} labelled")
        for name, n in classes.most_common():
            print(f"{name}: {n}")
            for (cls, sub), m in subs.most_common():
                if cls == name:
                    print(f"    {sub}: {m}")
        return 0
    for record in failed:
        task = tasks.get(record["id"], {})
        transcript = out / "transcripts" / f"{record['session']}.jsonl"
        action: dict[str, Any] = {}
        check = ""
        if transcript.exists():
            for event in _lines(transcript):
                if event.get("type") == "model_turn" and not action:
                    action = event.get("action") or {}
                if event.get("type") == "check":
                    check = event.get("output", "")
        tried = json.loads(action.get("tried") or "[]")
        print(f"== {record['id']}: {task.get('task', '')}")
        print(f"   ran {action.get('use')} {action.get('args')}")
        print(f"   tried {[t['recipe'] for t in tried]}")
        print(f"   check {task.get('success_condition', '')[:160]}")
        if check.strip():
            print(f"   check printed {check.strip()[:200]}")
    print(f"{len(failed)} recipe answers failed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("intents")
    p.add_argument("--misses", action="store_true", help="list every top-1 miss")
    p.add_argument(
        "--shape", choices=("on", "off"), default="on", help="rerank by the recipes' shapes"
    )
    p.set_defaults(func=intents)
    r = sub.add_parser("reading", help="the reading test set, accuracy per field")
    r.add_argument("--misses", action="store_true", help="list every field read wrong")
    r.add_argument("--text", action="append", help="print the reading of this request")
    r.set_defaults(func=reading)
    k = sub.add_parser("leakage", help="phrasings against the sets that measure them")
    k.add_argument("--top", type=int, default=5, help="nearest pairs shown per set")
    k.add_argument("--max", type=float, default=0.8, help="exit 1 at this similarity or above")
    k.set_defaults(func=leakage)
    c = sub.add_parser("calls", help="the model's recipe calls against gold ones")
    c.add_argument("--models", default="first-values,default", help="comma-separated")
    c.add_argument("--instances", type=int, default=5, help="unseen draws per family")
    c.add_argument("--limit", type=int, default=0, help="only the first N of each set")
    c.set_defaults(func=calls)
    f = sub.add_parser("failures", help="an eval run's failed recipe answers, to classify")
    f.add_argument("dir", help="an eval --out directory (records.jsonl, transcripts/)")
    f.add_argument("--tasks", default=str(DEV), help="the task set the run measured")
    f.add_argument("--labels", default="", help="lines 'ID CLASS SUBCLASS': count them")
    f.set_defaults(func=failures)
    e = sub.add_parser("eval")
    e.add_argument("--set", choices=("everyday", "dev", "newcomer", "earlier"), default="everyday")
    e.add_argument("--recipes", choices=("on", "off"), default="on")
    e.add_argument(
        "--model", default=None, help="a model, or first-values: the recipe path without one"
    )
    e.add_argument(
        "--trials", choices=("on", "off"), default="on", help="off: never try before showing"
    )
    e.add_argument(
        "--shape", choices=("on", "off"), default="on", help="off: rank by the words only"
    )
    e.add_argument("--limit", type=int, default=0)
    e.add_argument("--offset", type=int, default=0)
    e.add_argument("--ids", default="", help="only these task ids: comma-separated, or a file")
    e.add_argument("--max-turns", type=int, default=15)
    e.add_argument("--examples", type=int, default=2)
    e.add_argument(
        "--stall-limit", type=int, default=None, help="free-loop turns without progress (0: off)"
    )
    e.add_argument("--policy", choices=("default", "throwaway"), default="default")
    e.add_argument("--out", default=None)
    e.set_defaults(func=evaluate)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
