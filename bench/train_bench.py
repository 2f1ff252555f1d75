"""What ``shellagent train`` on a user's own confirmed sessions adds (issue 38, item 6).

One command, end to end, every step kept in ``--out`` (a step whose output is there is not
run again, so an interrupted run goes on where it stopped):

1. **Confirmed sessions.** The everyday set (shellagent/taskgen/data/everyday-answers.jsonl,
   58 tasks) runs with the shipped default model as ``recipes_bench.py eval`` runs it. The
   sessions that were solved stand for the sessions a user confirmed: ``shellagent export``
   reads both the same way (the transcript's ``end`` says ``success: true``; a user's "did
   that do it? y" and a passing check write the same flag). Their transcripts are copied to
   ``OUT/confirmed/``.
2. **Export and train as a user would**: ``shellagent export --format sft --from
   OUT/confirmed -o OUT/confirmed-sft.jsonl``, then ``shellagent train OUT/confirmed-sft.jsonl
   --from SHIPPED -o OUT/trained.gguf`` with ``--epochs 10 --lr 5e-4 --threads 2 --seed 0
   --held-out 0`` (the defaults of ``--train-args``; see docs/results.md for why).
3. **The paraphrases** (bench/data/everyday-paraphrases.jsonl: each everyday task's setup
   and check, other words, written before anything was trained or taught) run with the
   shipped adapter and with the trained one, nothing taught (shipped recipes only); the
   everyday set runs again with the trained adapter (does it keep what it had). Both sets
   also run with first values (``recipes_bench.FirstValues``: the ranker's first recipe
   with each slot's first value, no model), so a task where the model's run executed
   exactly what first values executed is one where the model's tokens decided nothing.
4. **The same sessions as the recipe step asked them** (``trained-asked``): a transcript
   written before ``model_turn.prompt`` was recorded holds only the free loop's prompt, so
   the export of step 2 paired the ``use`` reply with a prompt it was never asked under
   (transcripts written since export under the recipe step's prompt, docs/training.md).
   ``asked_sft`` rebuilds each recipe-answered session with the recipe step's prompt (as
   ``recipes sft`` writes calls); an adapter trained on that, with the same settings, runs
   both sets again.

The run takes ``/tmp/shellagent-model.lock`` at its first step that loads the model (a model
eval or the training) and keeps it to the end, so the arms it compares run back to back
with no other model run between them; the first-values runs, first, do not wait for it.
The ranker is read from ``--cache`` (default ``/tmp/tr-cache``; trained there first if
absent, which no figure counts), never the user's cache.

    python bench/train_bench.py run --out /tmp/tr-run
    python bench/train_bench.py report --out /tmp/tr-run     # the figures again, no runs
    python bench/train_bench.py choices    # where the model's reply can decide at all
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
EVERYDAY = ROOT / "shellagent" / "taskgen" / "data" / "everyday-answers.jsonl"
PARAPHRASES = ROOT / "bench" / "data" / "everyday-paraphrases.jsonl"
SHIPPED = ROOT / "shellagent" / "models" / "smollm2-135m-shell.gguf"
LOCK = Path("/tmp/shellagent-model.lock")
TRAIN_ARGS = "--epochs 10 --lr 5e-4 --threads 2 --seed 0 --held-out 0"

# (run name, task set, model): the model is "shipped", "trained" or "first-values"
RUNS = (  # the first-values runs first: they need no model, so they do not wait for its lock
    ("everyday-first-values", "everyday", "first-values"),
    ("paraphrases-first-values", "paraphrases", "first-values"),
    ("everyday-shipped", "everyday", "shipped"),
    ("paraphrases-shipped", "paraphrases", "shipped"),
    ("paraphrases-trained", "paraphrases", "trained"),
    ("everyday-trained", "everyday", "trained"),
    ("paraphrases-trained-asked", "paraphrases", "trained-asked"),
    ("everyday-trained-asked", "everyday", "trained-asked"),
)
ADAPTERS = {"trained": "trained.gguf", "trained-asked": "trained-asked.gguf"}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@contextlib.contextmanager
def model_lock(path: Path = LOCK) -> Iterator[None]:
    """The lock every model-loading run on this machine takes: one model at a time."""
    with path.open("a") as handle:
        began = time.monotonic()
        fcntl.flock(handle, fcntl.LOCK_EX)
        waited = time.monotonic() - began
        if waited > 1:
            print(f"  (waited {waited:.0f} s for {path})", flush=True)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def paraphrase_tasks(everyday: Path, paraphrases: Path) -> list[dict[str, Any]]:
    """Each everyday task with its paraphrase's words: the same id, setup and check."""
    tasks = {t["id"]: t for t in _lines(everyday)}
    return [{**tasks[p["id"]], "task": p["paraphrase"]} for p in _lines(paraphrases)]


def confirmed_sessions(run: Path) -> list[Path]:
    """The transcripts of a run's solved tasks (``records.jsonl`` beside ``transcripts/``):
    what stands for the sessions a user confirmed."""
    out = []
    for record in _lines(run / "records.jsonl"):
        path = run / "transcripts" / f"{record['session']}.jsonl"
        if record["status"] == "solved" and path.exists():
            out.append(path)
    return out


def _recipe_call(transcript: Path) -> tuple[str, str, dict[str, str]] | None:
    """(task id, recipe, arguments) of a session answered by a recipe alone (its last
    ``use``), or None when the free loop wrote commands in it or no recipe ran."""
    task_id, call, free = "", None, False
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") == "session_start":
            task_id = str(event.get("task_id") or "")
        action = (event.get("action") or {}) if event.get("type") == "model_turn" else {}
        if action.get("origin") == "free":
            free = True
        elif action.get("origin") == "recipe" and action.get("use"):
            call = (str(action["use"]), json.loads(action.get("args") or "{}"))
    return None if free or call is None else (task_id, *call)


def asked_sft(
    transcripts: Sequence[Path], tasks: dict[str, dict[str, Any]], output: Path
) -> tuple[int, int]:
    """The same sessions written as the recipe step asked the model: for a session a recipe
    answered, the recipe step's own prompt (``recipe_prompt.prompt``: the recipe with the values
    its slots are offered, read from the task's working directory made again in a throwaway
    sandbox, as ``recipes sft`` writes calls) and the call that ran; a session of the free
    loop as ``export`` writes it. Returns (conversations written as asked, as exported)."""
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.taskgen.calls import Call, conversation
    from shellagent.transcript import read_transcript
    from shellagent.transcript.export import sft_records

    book = RecipeBook.load()
    asked = exported = 0
    lines: list[Any] = []
    for path in transcripts:
        got = _recipe_call(path)
        record = None
        if got is not None and got[0] in tasks:
            task = tasks[got[0]]
            call = Call(task["task"], got[1], got[2], "session", tuple(task["setup_commands"]))
            record = conversation(book, call)
        if record is not None:
            lines.append({"messages": record["messages"]})
            asked += 1
        else:
            lines.extend(sft_records(read_transcript(path)))
            exported += 1
    output.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines))
    return asked, exported


def export_sft(transcripts: Sequence[Path], folder: Path, output: Path) -> str:
    """``shellagent export --format sft`` over just ``transcripts`` (copied into ``folder``),
    as a user runs it; returns what it said on stderr (its counts)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in transcripts:
        shutil.copy2(path, folder / path.name)
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent", "export", "--format", "sft"]
        + ["--from", str(folder), "-o", str(output)],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stderr.strip()


@dataclass(frozen=True)
class Task:
    """One task's outcome in one run, with what its session ran and who wrote it."""

    id: str
    solved: bool
    claimed: bool
    wall_s: float
    commands: tuple[str, ...]
    model_replies: int  # replies the model generated (tokens > 0)
    free: bool  # the free loop ran (the model's own commands)


def read_run(run: Path) -> dict[str, Task]:
    """A finished run's tasks by id (valid ones only)."""
    tasks = {}
    for record in _lines(run / "records.jsonl"):
        if record.get("status") not in ("solved", "failed"):
            continue
        commands: list[str] = []
        replies = 0
        free = False
        path = run / "transcripts" / f"{record['session']}.jsonl"
        for line in path.read_text().splitlines() if path.exists() else ():
            event = json.loads(line)
            if event.get("type") == "execution":
                commands.append(str(event.get("command", "")))
            elif event.get("type") == "model_turn":
                replies += int(event.get("generated_tokens") or 0) > 0
                free = free or (event.get("action") or {}).get("origin") == "free"
        tasks[record["id"]] = Task(
            record["id"],
            record["status"] == "solved",
            bool(record.get("claimed")),
            float(record.get("wall_s") or 0.0),
            tuple(commands),
            replies,
            free,
        )
    return tasks


def summary(name: str, tasks: dict[str, Task]) -> str:
    from shellagent.eval.report import wilson_interval

    n = len(tasks)
    if not n:
        return f"{name}: no valid tasks"
    solved = sum(t.solved for t in tasks.values())
    claimed = [t for t in tasks.values() if t.claimed]
    right = sum(t.solved for t in claimed)
    low, high = wilson_interval(solved, n)
    share = f"{100 * right / len(claimed):.1f} %" if claimed else "-"
    return (
        f"{name}: solved {solved}/{n} ({100 * solved / n:.1f} %, CI {100 * low:.1f}–"
        f"{100 * high:.1f} %), claimed {len(claimed)} ({share} right), "
        f"{sum(t.wall_s for t in tasks.values()) / n:.2f} s/task"
    )


def flips(a: dict[str, Task], b: dict[str, Task]) -> tuple[list[str], list[str]]:
    """Tasks solved in ``b`` and not in ``a``, and solved in ``a`` and not in ``b``."""
    both = sorted(set(a) & set(b))
    return (
        [i for i in both if b[i].solved and not a[i].solved],
        [i for i in both if a[i].solved and not b[i].solved],
    )


def decided(model: dict[str, Task], first: dict[str, Task]) -> list[str]:
    """Tasks where the model's run executed other commands than first values did: the only
    ones where the model's tokens can have changed the outcome."""
    return sorted(i for i in set(model) & set(first) if model[i].commands != first[i].commands)


def _run_set(
    name: str, tasks: list[dict[str, Any]], backend: Any, out: Path, args: argparse.Namespace
) -> None:
    from recipes_bench import _origins

    from shellagent.eval import ModelAgent, RunConfig, load_tasks, run_eval
    from shellagent.eval.report import render_summary, summarize

    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks))
    agent = ModelAgent(backend, max_turns=15, examples=2, policy="default", recipes=True)
    agent.recipe_book()  # a ranker read or trained now is not a task's time
    print(f"{name}: {len(tasks)} tasks, model {backend.name}, load {os.getloadavg()}", flush=True)
    run = run_eval(
        load_tasks(path).tasks, agent, RunConfig(transcripts_dir=folder / "transcripts"), jobs=1
    )
    print(render_summary(summarize(run, agent=f"{name}: {backend.name}")), flush=True)
    records = []
    for result in run.results:
        transcript = folder / "transcripts" / f"{result.session}.jsonl"
        origin, model_s = _origins(transcript) if transcript.exists() else ("none", 0.0)
        records.append({**result.to_json(), "origin": origin, "model_s": model_s})
    # written last: its presence says the run is complete
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _backend(model: str, out: Path) -> Any:
    if model == "first-values":
        from recipes_bench import FirstValues

        return FirstValues()
    from shellagent.model import load_backend

    return load_backend(None if model == "shipped" else f"default+{out / ADAPTERS[model]}")


def _train(out: Path, args: argparse.Namespace, model: str) -> None:
    """``trained``: on the sessions as ``shellagent export`` writes them; ``trained-asked``:
    on the same sessions as the recipe step asked (``asked_sft``)."""
    confirmed = confirmed_sessions(out / "everyday-shipped")
    if model == "trained":
        sft = out / "confirmed-sft.jsonl"
        said = export_sft(confirmed, out / "confirmed", sft)
    else:
        sft = out / "confirmed-asked-sft.jsonl"
        tasks = {t["id"]: t for t in _lines(EVERYDAY)}
        asked, exported = asked_sft(confirmed, tasks, sft)
        said = f"{asked} as the recipe step asked, {exported} as exported"
    records = _lines(sft)
    print(f"{len(confirmed)} confirmed sessions -> {len(records)} SFT conversations ({said})")
    adapter = out / ADAPTERS[model]
    command = [sys.executable, "-m", "shellagent", "train", str(sft), "--from", str(SHIPPED)]
    command += ["-o", str(adapter), *shlex.split(args.train_args), "--json"]
    print("  " + shlex.join(command[2:]), flush=True)
    began = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    took = time.monotonic() - began
    log = adapter.with_suffix(".log")
    log.write_text(proc.stderr + proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"training failed ({proc.returncode}); see {log}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(took, 1)
    result["conversations"] = len(records)
    adapter.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"  trained in {took:.0f} s: {json.dumps(result)}", flush=True)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SHELLAGENT_CACHE_DIR"] = str(args.cache)
    os.environ.setdefault("SHELLAGENT_CONFIG_DIR", str(out / "config"))  # no user recipes
    sets = {
        "everyday": _lines(EVERYDAY),
        "paraphrases": paraphrase_tasks(EVERYDAY, PARAPHRASES),
    }
    if args.limit:
        sets = {k: v[: args.limit] for k, v in sets.items()}
    with contextlib.ExitStack() as held:
        locked = False
        for name, which, model in RUNS:
            if model != "first-values" and not locked:
                # taken at the first step that loads the model and kept to the end: the arms
                # compared run back to back, no other model run between them
                held.enter_context(model_lock())
                locked = True
            if model in ADAPTERS and not (out / ADAPTERS[model]).exists():
                _train(out, args, model)
            if (out / name / "records.jsonl").exists():
                print(f"{name}: done before, kept", flush=True)
                continue
            backend = _backend(model, out)
            _run_set(name, sets[which], backend, out, args)
            del backend
    return report(args)


def report(args: argparse.Namespace) -> int:
    out = Path(args.out)
    runs = {
        name: read_run(out / name) for name, _, _ in RUNS if (out / name / "records.jsonl").exists()
    }
    for model, adapter in ADAPTERS.items():
        train = (out / adapter).with_suffix(".json")
        if train.exists():
            print(f"{model}: " + train.read_text().strip().replace("\n", ""))
    for name, tasks in runs.items():
        print(summary(name, tasks))
    for which in ("everyday", "paraphrases"):
        shipped = runs.get(f"{which}-shipped")
        for model in ADAPTERS:
            trained = runs.get(f"{which}-{model}")
            if shipped and trained:
                gained, lost = flips(shipped, trained)
                print(f"{which}, shipped -> {model}: gained {gained or '-'}, lost {lost or '-'}")
        first = runs.get(f"{which}-first-values")
        for model in ("shipped", *ADAPTERS):
            ran = runs.get(f"{which}-{model}")
            if not (ran and first):
                continue
            differ = decided(ran, first)
            consulted = sum(t.model_replies > 0 for t in ran.values())
            free = sum(t.free for t in ran.values())
            gained, lost = flips(first, ran)
            print(
                f"{which}-{model}: the model generated a reply in {consulted}/{len(ran)} "
                f"sessions (the free loop in {free}); ran other commands than first values in "
                f"{len(differ)}: {differ or '-'}; against first values gained {gained or '-'}, "
                f"lost {lost or '-'}"
            )
    print(f"load average now: {os.getloadavg()}")
    return 0


def choices(args: argparse.Namespace) -> int:
    """Where the model's tokens can decide at all (no model): each task's run-time shortlist,
    its working directory made by the task's setup in a throwaway sandbox (as
    ``recipes_bench.py calls`` offers), sorted into no recipe fits (the free loop writes the
    commands), the first recipe's slots each offered one value and no free one (the grammar
    leaves the reply nothing to choose: it is the first values) and a choice (a slot with
    two values or more, or a free one)."""
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.taskgen.calls import Call, offered

    os.environ["SHELLAGENT_CACHE_DIR"] = str(args.cache)
    book = RecipeBook.load()
    sets = {
        "everyday": _lines(EVERYDAY),
        "paraphrases": paraphrase_tasks(EVERYDAY, PARAPHRASES),
    }
    for name, tasks in sets.items():
        kinds: dict[str, list[str]] = {"no recipe": [], "forced": [], "choice": []}
        for task in tasks[: args.limit or None]:
            call = Call(task["task"], "", {}, "task", tuple(task["setup_commands"]))
            listed = offered(book, call)
            if listed is None or not listed.offers:
                kinds["no recipe"].append(task["id"])
                continue
            slots = listed.offers[0].slots
            forced = all(len(s.values()) == 1 and not s.free for s in slots)
            kinds["forced" if forced else "choice"].append(task["id"])
        n = sum(map(len, kinds.values()))
        print(f"{name} ({n}): " + ", ".join(f"{k} {len(v)}" for k, v in kinds.items()))
        print(f"  a choice: {kinds['choice']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="every step not done yet in --out, then the report")
    r.add_argument("--out", default="/tmp/tr-run")
    r.add_argument("--cache", default="/tmp/tr-cache", help="the ranker's cache dir")
    r.add_argument("--train-args", default=TRAIN_ARGS, help="passed to `shellagent train`")
    r.add_argument("--limit", type=int, default=0, help="only the first N tasks of each set")
    r.set_defaults(func=run)
    c = sub.add_parser("choices", help="where the model can decide anything (no model)")
    c.add_argument("--cache", default="/tmp/tr-cache", help="the ranker's cache dir")
    c.add_argument("--limit", type=int, default=0)
    c.set_defaults(func=choices)
    p = sub.add_parser("report", help="the figures of the runs in --out")
    p.add_argument("--out", default="/tmp/tr-run")
    p.set_defaults(func=report)
    args = parser.parse_args()
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
