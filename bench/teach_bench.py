"""Teach once: a correction taught once is learned for the request's paraphrases.

``paraphrases`` (the measure of issue 38): for each task of the everyday set
(shellagent/taskgen/data/everyday-answers.jsonl), in a fresh config dir, teach the task its
gold command with the real command line (``shellagent recipes add --task TASK -- GOLD``,
timed), then run a paraphrase of it (bench/data/everyday-paraphrases.jsonl: other words,
the same setup and check, written before anything was taught and never tuned on) through
the eval harness with the shipped recipes and the taught one, as ``shellagent eval
--recipes mine`` does. The same paraphrases are run untaught (shipped recipes only, as
``--recipes on``) in the same run, as the baseline. Reports solved / total for both, how
each taught paraphrase was answered (by what was taught, a shipped recipe, or the model's
own commands), the seconds a teach takes (the command line's wall time, the learning
itself, and the ranker's nearest-phrasing layer taking it in) and seconds per task.

    python bench/teach_bench.py paraphrases --model first-values     # no model, fast
    flock /tmp/shellagent-model.lock python bench/teach_bench.py paraphrases

``--together``: every everyday task taught at once into one config dir, then each
paraphrase asked with all of them taught: what was taught for one request must not take
another's paraphrase (reports those answered by another's).

    python bench/teach_bench.py paraphrases --together --model first-values

``disturb`` (no model): teaches every everyday task (its gold command) into one config
dir, then ranks the held-out intent phrasings (tests/data/recipe-intents-heldout.jsonl) as
``recipes_bench.py intents`` does (words, then shapes), before and after: what was taught
must not take over the tasks of other recipes. Reports top-1 before and after, each task
whose first recipe changed, and how many of the 300 dev tasks (none an everyday request)
are lifted to something taught.

    python bench/teach_bench.py disturb

``families`` (no model; the development check the nearest-phrasing layer's settings are
chosen on, on no measuring set): for each task family (shellagent/taskgen/families) two
draws worded from different templates, with different values and the same commands but
for the values: the first is taught the command a user would type (the recipe's rendering
the gold holds, or the gold without the ``cat`` that shows a saved answer) with
``teach_commands``, as ``recipes add --task`` does; the second is ranked (words, then
shapes) with only that taught. It is found when its first recipe is the one the first was
taught as (a phrasing's recipe, or the recipe made from the command) or a shipped recipe
its own command was rendered from. The same with every family's first draw taught at once,
which also counts the second draws lifted to what another family was taught and is not
theirs (wrong lifts).

    python bench/teach_bench.py families
    python bench/teach_bench.py families --reading 0,0.5,1   # each setting in one run

``disturb`` and ``families`` take ``--reading``, ``--floor`` and ``--overruled`` (comma-
separated; every combination is measured on what was taught once).

The trained ranker is read from the cache directory (``--cache``, default the user's);
with none there it is trained first (about a minute), which no figure counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
EVERYDAY = ROOT / "shellagent" / "taskgen" / "data" / "everyday-answers.jsonl"
PARAPHRASES = ROOT / "bench" / "data" / "everyday-paraphrases.jsonl"
HELDOUT = ROOT / "tests" / "data" / "recipe-intents-heldout.jsonl"
LABELS = ROOT / "bench" / "data" / "everyday-recipe-labels.jsonl"
DEV = Path("/work/shared/tasks/shell-tasks-dev.jsonl")
if not DEV.exists():
    DEV = ROOT.parents[1] / "shared" / "tasks" / "shell-tasks-dev.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _config(path: Path) -> None:
    """Where this process reads recipes (and the command lines it starts)."""
    path.mkdir(parents=True, exist_ok=True)
    os.environ["SHELLAGENT_CONFIG_DIR"] = str(path)


def _start(args: argparse.Namespace, prefix: str, config: str = "config") -> tuple[Path, Path, Any]:
    """The run's folder (``--out``, else a new one named ``prefix``), the cache the
    trained ranker is read from (``--cache``, else the user's), and that ranker; recipes
    are read from ``<folder>/<config>``."""
    work = Path(args.out or tempfile.mkdtemp(prefix=prefix))
    if args.cache:
        os.environ["SHELLAGENT_CACHE_DIR"] = args.cache
    from shellagent import paths

    cache = paths.cache_dir()
    _config(work / config)
    return work, cache, _base_ranker(cache)


def _backend(args: argparse.Namespace) -> Any:
    """The model ``--model`` names, or first values (no model)."""
    if args.model == "first-values":
        from recipes_bench import FirstValues

        return FirstValues()
    from shellagent.model import load_backend

    return load_backend(args.model)


def _paraphrases(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The paraphrases asked (``--ids``, ``--limit``)."""
    paras = _lines(PARAPHRASES)
    if args.ids:
        paras = [p for p in paras if p["id"] in args.ids.split(",")]
    return paras[: args.limit] if getattr(args, "limit", None) else paras


def _base_ranker(cache: Path) -> Any:
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import Ranker

    began = time.perf_counter()
    ranker = Ranker.build(list(load([DATA_DIR]).recipes.values()), cache)
    print(f"trained ranker ready in {time.perf_counter() - began:.1f} s", flush=True)
    return ranker


def _answered_by(transcript: Path) -> str:
    """The recipe whose command answered, or "free" (the model's own), or "none"."""
    used = "none"
    if not transcript.exists():
        return used
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        action = (event.get("action") or {}) if event.get("type") == "model_turn" else {}
        if action.get("origin") == "recipe" and action.get("use"):
            used = str(action["use"])
        elif action.get("origin") == "free" and used == "none":
            used = "free"
    return used


def _run_one(agent: Any, task: dict[str, Any], out: Path) -> tuple[Any, str]:
    from shellagent.eval import RunConfig, load_tasks, run_eval

    out.mkdir(parents=True, exist_ok=True)
    path = out / "task.jsonl"
    path.write_text(json.dumps(task, ensure_ascii=False) + "\n")
    tasks = load_tasks(path).tasks
    run = run_eval(tasks, agent, RunConfig(transcripts_dir=out / "transcripts"), jobs=1)
    result = run.results[0]
    return result, _answered_by(out / "transcripts" / f"{result.session}.jsonl")


def _agent(args: argparse.Namespace, backend: Any, book: Any, own: bool) -> Any:
    from shellagent.eval import ModelAgent

    agent = ModelAgent(
        backend,
        max_turns=args.max_turns,
        examples=args.examples,
        policy="default",
        recipes=True,
        own_recipes=own,
    )
    agent._book = book  # the book `eval --recipes mine|on` loads, its trained ranker shared
    return agent


def _teach(task: str, gold: list[str], config: Path) -> tuple[float, float, str, str]:
    """``shellagent recipes add --task TASK -- GOLD…`` in ``config``: its wall seconds,
    the seconds it says learning took, the name learned and its first output line."""
    env = {**os.environ, "SHELLAGENT_CONFIG_DIR": str(config)}
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent", "recipes", "add", "--task", task, "--", *gold],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    said = re.search(r"learned in ([\d.]+) s", proc.stderr)
    name = re.search(r"`shellagent recipes rm (\S+)`", proc.stdout)
    line = (
        (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr) else ""
    )
    return wall, float(said.group(1)) if said else float("nan"), name.group(1) if name else "", line


def paraphrases(args: argparse.Namespace) -> int:
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.recipes import DATA_DIR, load

    everyday = {t["id"]: t for t in _lines(EVERYDAY)}
    paras = _paraphrases(args)
    work, cache, base = _start(args, "teach-bench-", "untaught")
    backend = _backend(args)
    print(
        f"{len(paras)} paraphrases, model {backend.name}, load {os.getloadavg()}, out {work}",
        flush=True,
    )
    shipped = dict(load([DATA_DIR]).recipes)
    plain = RecipeBook(shipped, base)
    rows = []
    current = base  # as the daemon's book: the layer, once read, stays in memory
    for para in paras:
        ident = para["id"]
        task = {**everyday[ident], "task": para["paraphrase"]}
        before, before_by = _run_one(
            _agent(args, backend, plain, False), task, work / ident / "untaught"
        )
        config = work / ident / "config"
        wall, learned_s, name, line = _teach(
            everyday[ident]["task"], everyday[ident]["gold"]["commands"], config
        )
        _config(config)
        recipes = dict(load().recipes)
        began = time.perf_counter()
        ranker = current = current.with_taught(list(recipes.values()), cache)
        layer_s = time.perf_counter() - began
        book = RecipeBook(recipes, ranker)
        after, after_by = _run_one(_agent(args, backend, book, True), task, work / ident / "taught")
        taught = recipes.get(name)
        how = "taught" if after_by == name else ("free" if after_by == "free" else after_by)
        row = {
            "id": ident,
            "paraphrase": para["paraphrase"],
            "learned": name,
            "phrasing_of": taught.base if taught is not None else None,
            "teach_wall_s": round(wall, 3),
            "learn_s": learned_s,
            "layer_s": round(layer_s, 4),
            "untaught": before.status,
            "untaught_by": before_by,
            "taught": after.status,
            "taught_by": how,
            "wall_s": after.wall_s,
            "agent_s": after.agent_s,
        }
        rows.append(row)
        mark = "ok  " if after.status == "solved" else "FAIL"
        print(
            f"{mark} {ident:32s} untaught {before.status:7s} taught {after.status:7s} by {how:28s}"
            f" teach {wall:.1f} s (learn {learned_s:.2f}, layer {layer_s:.3f})"
            + ("" if name else f"  [{line}]"),
            flush=True,
        )
    (work / "teach.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    valid = [r for r in rows if r["taught"] in ("solved", "failed")]
    n = len(valid)
    if not n:
        print("no valid tasks")
        return 1
    solved = sum(r["taught"] == "solved" for r in valid)
    before = sum(r["untaught"] == "solved" for r in valid)
    by: dict[str, list[int]] = {}
    for r in valid:
        key = r["taught_by"] if r["taught_by"] in ("taught", "free", "none") else "a shipped recipe"
        by.setdefault(key, [0, 0])
        by[key][0] += 1
        by[key][1] += r["taught"] == "solved"
    print(f"\nparaphrases solved after teaching once: {solved}/{n} ({100 * solved / n:.1f} %)")
    print(
        f"the same paraphrases untaught (shipped recipes only): {before}/{n} "
        f"({100 * before / n:.1f} %)"
    )
    print("answered by: " + ", ".join(f"{k} {v[0]} (solved {v[1]})" for k, v in sorted(by.items())))
    phr = sum(1 for r in rows if r["phrasing_of"])
    print(
        f"taught as a phrasing of a shipped recipe: {phr}, as a recipe of yours: {len(rows) - phr}"
    )

    def mean(key: str) -> float:
        return sum(float(r[key]) for r in valid) / n

    later = [float(r["layer_s"]) for r in valid[1:]] or [float(valid[0]["layer_s"])]
    print(
        f"teach: {mean('teach_wall_s'):.2f} s wall per `recipes add --task` (process start "
        f"included), {mean('learn_s'):.2f} s learning; the ranker takes it in in "
        f"{1000 * sum(later) / len(later):.0f} ms (the first time {valid[0]['layer_s']:.2f} s: "
        "its layer read from the cache)"
    )
    print(f"seconds per taught paraphrase: {mean('wall_s'):.2f} wall, {mean('agent_s'):.2f} agent")
    print(f"load average at the end: {os.getloadavg()}; rows in {work / 'teach.jsonl'}")
    return 0


def together(args: argparse.Namespace) -> int:
    """``paraphrases --together``: every everyday task taught at once (its gold command,
    as ``recipes add --task`` does), then each paraphrase asked with all of them taught, as
    a user who taught many things asks: what was taught for one request must not take
    another's paraphrase."""
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.recipes import load
    from shellagent.recipes.learn import teach_commands

    everyday = {t["id"]: t for t in _lines(EVERYDAY)}
    paras = _paraphrases(args)
    work, cache, base = _start(args, "teach-together-")
    learned = {}
    for task in everyday.values():
        got = teach_commands(
            task["task"], task["gold"]["commands"], redact=lambda s: s, kind="question"
        )
        learned[task["id"]] = got.name
    recipes = dict(load().recipes)
    book = RecipeBook(recipes, base.with_taught(list(recipes.values()), cache))
    backend = _backend(args)
    print(f"{len(learned)} taught at once; {len(paras)} paraphrases, model {backend.name}")
    rows = []
    for para in paras:
        ident = para["id"]
        task = {**everyday[ident], "task": para["paraphrase"]}
        result, by = _run_one(_agent(args, backend, book, True), task, work / ident)
        own = learned[ident]
        how = "its own" if by == own else ("another's" if by in learned.values() else by)
        rows.append({"id": ident, "status": result.status, "by": by, "how": how})
        mark = "ok  " if result.status == "solved" else "FAIL"
        print(f"{mark} {ident:32s} by {by:36s} ({how})", flush=True)
    (work / "together.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    valid = [r for r in rows if r["status"] in ("solved", "failed")]
    if not valid:
        print("no valid tasks")
        return 1
    solved = sum(r["status"] == "solved" for r in valid)
    other = [r for r in valid if r["how"] == "another's"]
    print(
        f"\nparaphrases solved with every everyday task taught at once: {solved}/{len(valid)} "
        f"({100 * solved / len(valid):.1f} %); answered by what was taught for another "
        f"request: {len(other)} (solved {sum(r['status'] == 'solved' for r in other)})"
    )
    return 0


def disturb(args: argparse.Namespace) -> int:
    from shellagent.recipes import load
    from shellagent.recipes.fitness import rerank
    from shellagent.recipes.learn import teach_commands
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    work, cache, base = _start(args, "teach-disturb-")
    untaught = dict(load().recipes)
    began = time.perf_counter()
    learned = {}
    for task in _lines(EVERYDAY):
        got = teach_commands(
            task["task"], task["gold"]["commands"], redact=lambda s: s, kind="question"
        )
        learned[got.name] = task["id"]
    teach_s = (time.perf_counter() - began) / len(learned)
    taught = dict(load().recipes)
    began = time.perf_counter()
    ranker = base.with_taught(list(taught.values()), cache)
    layer_s = time.perf_counter() - began
    print(f"taught {len(learned)} tasks ({teach_s:.2f} s each); layer took them in {layer_s:.2f} s")

    def first(ranked_by: Any, recipes: dict[str, Any], text: str) -> str:
        ranked = ranked_by.rank(text, 12)
        ranked = [c for c in ranked if c.name in recipes]
        return rerank(ranked, recipes, task_values(read_task(text)))[0].name

    names = set(untaught)
    held = [(r["task"], r["recipe"]) for r in _lines(HELDOUT) if r["recipe"] in names]
    was = [first(base, untaught, text) for text, _ in held]
    dev = [r["task"] for r in _lines(DEV)] if DEV.exists() else []
    for setting in _settings(args):
        said = _apply(setting)
        assert ranker.taught_ is not None
        ranker.taught_.floor = setting["FLOOR"]
        right_before = right_after = 0
        changed = []
        for (text, want), a in zip(held, was, strict=True):
            b = first(ranker, taught, text)
            right_before += a == want
            right_after += b == want
            if a != b:
                changed.append(f"  {want}: {a} -> {b} ({learned.get(b, '')}): {text}")
        n = len(held)
        print(
            f"{said}: held-out phrasings: top-1 {right_before}/{n} ({100 * right_before / n:.1f} "
            f"%) untaught, {right_after}/{n} ({100 * right_after / n:.1f} %) with the everyday "
            f"set taught; {len(changed)} changed"
        )
        if args.verbose:
            print("\n".join(changed))
        # tasks no everyday request is: any lift to what was taught is wrong
        lifted = [t for t in dev if ranker.rank(t, 3)[0].name in learned]
        if dev:
            print(f"{said}: dev tasks lifted to something taught: {len(lifted)}/{len(dev)}")
        if args.verbose:
            print("\n".join(f"  {t[:140]}" for t in lifted), flush=True)
    return 0


def _wordings() -> Any:
    """A ``Draw`` that remembers which of a ``phrase`` call's templates it picked."""
    from shellagent.taskgen.family import Draw

    class Wording(Draw):
        def __init__(self, rng: Any) -> None:
            super().__init__(rng)
            self.said: list[str] = []
            self.rendered: set[str] = set()  # the recipes whose commands it rendered
            self._templates: Any = None

        def recipe(self, name: str, /, template: int | None = None, **args: object) -> Any:
            self.rendered.add(name)
            return super().recipe(name, template, **args)

        def phrase(self, templates: Any, **values: object) -> str:
            self._templates = templates
            try:
                return super().phrase(templates, **values)
            finally:
                self._templates = None

        def pick(self, items: Any) -> Any:
            chosen = super().pick(items)
            if items is self._templates:
                self.said.append(str(chosen))
            return chosen

    return Wording


def _rewording(first: Any) -> Any:
    """A ``Draw`` that replays the draw ``first`` made (the same random stream: the same
    values) but words it from the next of each ``phrase`` call's templates."""
    from shellagent.taskgen.family import Draw

    wording = _wordings()

    class Rewording(wording):  # type: ignore[misc, valid-type]
        forced: str | None = None

        def phrase(self, templates: Any, **values: object) -> str:
            # the template the first draw picked (the same randomness spent), then the next
            index = list(templates).index(self.rng.choice(templates))
            self.forced = templates[(index + 1) % len(templates)]
            self.said.append(str(self.forced))
            return Draw.phrase(self, [self.forced], **values)

        def pick(self, items: Any) -> Any:
            if self.forced is not None:
                chosen, self.forced = self.forced, None
                return chosen
            return super().pick(items)

    return Rewording


def _shape(instance: Any) -> str:
    """The instance's commands with its values taken out: two draws of a family that
    ask for different things (the newest photo, how many photos) differ in it."""
    shape = " ; ".join(instance.gold)
    for value in sorted(map(str, instance.slots.values()), key=len, reverse=True):
        if len(value) > 1:
            shape = shape.replace(value, "V")
    return re.sub(r"\d+", "N", shape)


def family_pairs(
    seed: str = "teach-dev", tries: int = 40, *, same_values: bool = False
) -> list[tuple[str, Any, Any, frozenset[str]]]:
    """Per family whose tasks are worded from templates: (family, first, second, the
    recipes the second's commands were rendered from), two draws worded from different
    templates, with different values, whose commands are the same but for the values. A
    ``_to_file`` twin renders its question's recipe, whose answer the recipe step saves
    where the task says. ``same_values``: the second draw keeps the first's values (its
    random stream replayed) and only its wording differs, as a user asks again about the
    same things."""
    import random

    from shellagent.taskgen.generate import families

    wording = _wordings()
    pairs = []
    for fam in families():
        if same_values:
            seeded = f"{seed}/{fam.name}/0"
            d = wording(random.Random(seeded))
            one = fam.make(d)
            if not d.said:
                continue
            again = _rewording(d)(random.Random(seeded))
            two = fam.make(again)
            if (
                again.said != d.said
                and one.task != two.task
                and dict(two.slots) == dict(one.slots)
                and _shape(two) == _shape(one)
            ):
                pairs.append((fam.name, one, two, frozenset(again.rendered)))
            continue
        first = None
        for attempt in range(tries):
            d = wording(random.Random(f"{seed}/{fam.name}/{attempt}"))
            instance = fam.make(d)
            if not d.said:
                break  # worded without templates: no other wording to ask
            if first is None:
                first = (d.said, instance)
            elif (
                d.said != first[0]
                and dict(instance.slots) != dict(first[1].slots)
                and _shape(instance) == _shape(first[1])
            ):
                pairs.append((fam.name, first[1], instance, frozenset(d.rendered)))
                break
    return pairs


def _settings(args: argparse.Namespace) -> list[dict[str, float]]:
    """The nearest-phrasing layer's settings to measure at (``--reading``, ``--floor``,
    ``--overruled``, ``--own``: comma-separated; every combination), or its own when none
    is given."""
    from itertools import product

    from shellagent.recipes import nearest

    given = {
        "READING": args.reading,
        "FLOOR": args.floor,
        "OVERRULED": args.overruled,
        "OWN": args.own,
    }
    grid = {
        name: said or str(getattr(nearest, name))
        for name, said in given.items()
        if hasattr(nearest, name)  # a layer without a reading part has no READING
    }
    names = list(grid)
    values = [[float(v) for v in grid[n].split(",")] for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in product(*values)]


def _apply(setting: dict[str, float]) -> str:
    from shellagent.recipes import nearest

    for name, value in setting.items():
        setattr(nearest, name, value)
    return ", ".join(f"{k} {v:g}" for k, v in setting.items())


def families_check(args: argparse.Namespace) -> int:
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.fitness import rerank
    from shellagent.recipes.learn import teach_commands
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    work, cache, base = _start(args, "teach-families-")
    shipped = load([DATA_DIR])
    began = time.perf_counter()
    pairs = family_pairs(same_values=args.same_values)
    print(f"{len(pairs)} families with two wordings ({time.perf_counter() - began:.1f} s)")

    def first(ranker: Any, recipes: Any, text: str) -> str:
        reading = read_task(text)
        ranked = [c for c in ranker.rank(text, 12, asked=reading.request) if c.name in recipes]
        return rerank(ranked, recipes, task_values(reading))[0].name

    def target(recipes: Any, name: str) -> str:
        recipe = recipes.get(name)
        return (recipe.base or recipe.name) if recipe is not None else name

    def commands(instance: Any) -> list[str]:
        """What a user teaches: the recipe's command(s) the gold renders, without the
        commands that only show the result; the gold itself when no recipe renders it."""
        if instance.recipes:
            return [u.command for u in instance.recipes]
        # a twin's answer saved in a file: what saves it, without the cat that shows it
        saved = len(instance.gold) > 1 and instance.gold[-1].startswith("cat ")
        return list(instance.gold[:-1] if saved else instance.gold)

    def right(recipes: Any, name: str, want: str, rendered: frozenset[str]) -> bool:
        """The recipe the first draw was taught as, or a shipped recipe the second's
        commands were rendered from."""
        return target(recipes, name) in {want, *rendered}

    every = work / "all" / "taught.toml"
    every.parent.mkdir(parents=True)
    for _, one, _, _ in pairs:
        teach_commands(
            one.task, commands(one), redact=lambda s: s, kind=one.kind, catalog=shipped, path=every
        )
    together = dict(load([DATA_DIR, every.parent]).recipes)
    ranker_all = base.with_taught(list(together.values()), cache)
    cases = []
    current = base
    for i, (fam, one, two, rendered) in enumerate(pairs):
        alone = work / f"{i:03d}" / "taught.toml"
        alone.parent.mkdir(parents=True)
        learned = teach_commands(
            one.task, commands(one), redact=lambda s: s, kind=one.kind, catalog=shipped, path=alone
        ).name
        recipes = dict(load([DATA_DIR, alone.parent]).recipes)
        ranker = current = current.with_taught(list(recipes.values()), cache)
        want = target(recipes, learned)
        untaught = first(base, shipped.recipes, two.task)
        before = right(shipped.recipes, untaught, want, rendered)
        cases.append((fam, one, two, rendered, learned, recipes, ranker, want, untaught, before))
    n = len(cases)
    already = sum(c[-1] for c in cases)
    print(f"untaught, {already}/{n} of the second draws already rank the recipe first")
    for setting in _settings(args):
        said = _apply(setting)
        for ranker in (ranker_all, *(c[6] for c in cases)):
            ranker.taught_.floor = setting["FLOOR"]
        found = found_all = wrong = 0
        rows = []
        for fam, one, two, rendered, learned, recipes, ranker, want, untaught, _ in cases:
            after = first(ranker, recipes, two.task)
            after_all = first(ranker_all, together, two.task)
            ok = right(recipes, after, want, rendered)
            ok_all = right(together, after_all, want, rendered)
            found += ok
            found_all += ok_all
            # lifted to what was taught for another family, and not a recipe it means
            wrong += together[after_all].taught and not ok_all if after_all in together else 0
            rows.append(
                {
                    "family": fam,
                    "taught": one.task,
                    "asked": two.task,
                    "learned": learned,
                    "want": want,
                    "untaught": untaught,
                    "after": after,
                    "after_all": after_all,
                }
            )
            if args.verbose and not (ok and ok_all):
                print(
                    f"{'ok  ' if ok else 'MISS'} {fam:28s} {want:26s} -> {after:26s} "
                    f"(all {after_all})"
                )
                print(f"       taught: {one.task}\n       asked:  {two.task}")
        (work / "families.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(
            f"{said}: one taught {found}/{n} found ({100 * found / n:.1f} %); every family "
            f"taught at once {found_all}/{n} found, {wrong}/{n} lifted to another's",
            flush=True,
        )
    print(f"rows in {work / 'families.jsonl'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("paraphrases")
    p.add_argument("--model", default=None, help="a model, or first-values: no model")
    p.add_argument("--max-turns", type=int, default=15)
    p.add_argument("--examples", type=int, default=2)
    p.add_argument("--ids", help="only these task ids (comma-separated)")
    p.add_argument("--limit", type=int)
    p.add_argument("--out")
    p.add_argument("--cache", help="cache dir holding the trained ranker (default: the user's)")
    p.add_argument(
        "--together",
        action="store_true",
        help="teach every everyday task at once, then ask each paraphrase",
    )
    p.set_defaults(func=lambda a: together(a) if a.together else paraphrases(a))
    d = sub.add_parser("disturb")
    d.add_argument("--out")
    d.add_argument("--cache")
    d.add_argument("-v", "--verbose", action="store_true")
    d.set_defaults(func=disturb)
    f = sub.add_parser("families")
    f.add_argument("--out")
    f.add_argument("--cache")
    f.add_argument("-v", "--verbose", action="store_true")
    f.set_defaults(func=families_check)
    for each in (d, f):
        each.add_argument("--reading", help="READING weights to measure at (comma-separated)")
        each.add_argument("--floor", help="FLOOR values to measure at")
        each.add_argument("--overruled", help="OVERRULED values to measure at")
        each.add_argument("--own", help="OWN weights to measure at")
    f.add_argument(
        "--same-values",
        action="store_true",
        help="the second draw keeps the first's values (the same things in other words)",
    )
    args = parser.parse_args()
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
