"""``shellagent recipes``: list, show and test the recipes; make one from a session."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent.cli.argtypes import positive_int, subcommand
from shellagent.errors import InputError, TaskFailed
from shellagent.jsontypes import JsonObject

if TYPE_CHECKING:
    from shellagent.recipes import Recipe

FORMATTER = argparse.RawDescriptionHelpFormatter


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "recipes",
        help="verified command templates with typed slots (list, show, test, add, rm)",
        description="Recipes: commands with typed slots the model fills, verified in the\n"
        "throwaway sandbox. Shipped ones and your own (<config dir>/recipes/*.toml).\n\n"
        "example: shellagent recipes list --area logs",
        formatter_class=FORMATTER,
    )
    sub = parser.add_subparsers(dest="recipes_command", metavar="ACTION", required=True)
    lister = subcommand(sub, "list", cmd_list, "the recipes, one a line")
    lister.add_argument("--area", metavar="A", help="only this area (files, logs, text, ...)")
    lister.add_argument("--json", action="store_true", help="one JSON object per recipe")
    shower = subcommand(sub, "show", cmd_show, "one recipe: slots, phrasings, templates, tests")
    shower.add_argument("name", metavar="NAME")
    tester = subcommand(sub, "test", cmd_test, "run the recipes' tests in the throwaway sandbox")
    tester.add_argument("names", nargs="*", metavar="NAME", help="these recipes (default: all)")
    tester.add_argument("--area", metavar="A", help="only this area")
    tester.add_argument(
        "--jobs", type=positive_int, default=2, metavar="J", help="sandboxes at once"
    )
    tester.add_argument(
        "--instances", type=int, default=2, metavar="N",
        help="also N drawn instances of each task family a recipe maps (2; 0: none)",
    )  # fmt: skip
    tester.add_argument("--json", action="store_true", help="one JSON object per recipe")
    subcommand(sub, "index", cmd_index, "train the ranker that picks recipes (install does it)")
    sft = subcommand(sub, "sft", cmd_sft, "task -> recipe call pairs as SFT data for `train`")
    sft.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    sft.add_argument(
        "--instances", type=int, default=20, metavar="N",
        help="drawn instances of each task family a recipe maps (20)",
    )  # fmt: skip
    sft.add_argument(
        "--phrasings", type=int, default=2500, metavar="N",
        help="this many of the recipes' phrasings written out with their tests' values "
        "(2500; 0: none)",
    )  # fmt: skip
    sft.add_argument("--seed", type=int, default=0, metavar="S", help="draws and samples")
    adder = subcommand(
        sub, "add", cmd_add, "teach a request its command(s), or keep a confirmed session"
    )
    source = adder.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--task", metavar="TEXT",
        help="the request the command(s) after -- do: learned at once",
    )  # fmt: skip
    source.add_argument(
        "--from", dest="session", metavar="SESSION",
        help="a confirmed session: an id or a unique prefix (see `shellagent logs list`)",
    )  # fmt: skip
    adder.add_argument("--name", metavar="NAME", help="the recipe's name (default: from the task)")
    adder.add_argument(
        "commands", nargs="*", metavar="COMMAND",
        help="with --task: the command(s) that do it, after --, each one argument",
    )  # fmt: skip
    remover = subcommand(sub, "rm", cmd_rm, "forget a recipe or phrasing you taught")
    remover.add_argument("name", metavar="NAME")


def _catalog() -> Any:
    from shellagent.recipes import load

    catalog = load()
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return catalog


def _chosen(catalog: Any, area: str | None, names: list[str] | None = None) -> list[Any]:
    from shellagent.recipes.loader import iter_recipes

    if names:
        return [catalog.get(n) for n in names]
    if area is not None and area not in catalog.areas():
        raise InputError(
            f"no recipes in area {area!r}", hint="areas: " + ", ".join(catalog.areas())
        )
    return list(iter_recipes(catalog, area))


def _as_json(recipe: Recipe) -> JsonObject:
    return {
        "name": recipe.name,
        "area": recipe.area,
        "kind": recipe.kind,
        "origin": recipe.origin,
        "taught": recipe.taught,
        "base": recipe.base,
        "family": recipe.family,
        "family_args": dict(recipe.family_args),
        "summary": recipe.summary,
        "slots": {
            s.name: {"type": s.type, "default": s.default, "help": s.help, "regex": s.regex}
            | ({"choices": list(s.choices)} if s.choices else {})
            for s in recipe.slots.values()
        },
        "phrasings": list(recipe.phrasings),
        "templates": list(recipe.templates),
        "tests": len(recipe.tests),
        "source": recipe.source,
    }


def cmd_list(args: argparse.Namespace) -> int:
    """List the recipes: name, area, kind and what each does.

    example: shellagent recipes list --area files
    """
    recipes = _chosen(_catalog(), args.area)
    if args.json:
        for recipe in recipes:
            print(json.dumps(_as_json(recipe), ensure_ascii=False))
        return 0
    width = max((len(r.name) for r in recipes), default=4)
    for r in recipes:
        print(f"{r.name:<{width}}  {r.area:<6} {r.kind:<8} {_described(r)}")
    print(f"{len(recipes)} recipes", file=sys.stderr)
    return 0


def _described(recipe: Recipe) -> str:
    """What ``recipes list`` says of a recipe: its summary; yours marked as yours."""
    if recipe.base is not None:
        return f'yours: "{recipe.phrasings[0]}" means {recipe.base}'
    if recipe.origin == "yours" or recipe.taught:
        return f"yours: {recipe.summary}"
    return recipe.summary


def cmd_show(args: argparse.Namespace) -> int:
    """Show one recipe: its slots with types and defaults, phrasings, templates, tests, and
    the command it renders with its defaults.

    example: shellagent recipes show largest_files
    """
    from shellagent.recipes import SlotError, render_all

    recipe = _catalog().get(args.name)
    print(f"{recipe.name}: {recipe.summary}")
    family = f", family {recipe.family}" if recipe.family else ""
    print(f"  {recipe.kind}, area {recipe.area}{family}; from {recipe.source}")
    if recipe.family_args:
        mapped = ", ".join(f"{k} = {v}" for k, v in recipe.family_args.items())
        print(f"  also tested on instances of {recipe.family}: {mapped}")
    print("slots:")
    for slot in recipe.slots.values():
        default = "required" if slot.default is None else f"default {slot.default}"
        choices = f" one of {', '.join(slot.choices)}" if slot.choices else ""
        helps = f" - {slot.help}" if slot.help else ""
        print(f"  {slot.name}: {slot.type}{choices}, {default}{helps}")
    if not recipe.slots:
        print("  (none)")
    print("phrasings:")
    for text in recipe.phrasings:
        print(f"  {text}")
    print("templates:")
    for text in recipe.templates:
        print(f"  {text}")
    try:
        rendered = render_all(recipe, {})
    except SlotError:
        rendered = []
    if rendered:
        print("with the defaults:")
        for text in rendered:
            print(f"  $ {text}")
    print(f"tests: {len(recipe.tests)}")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    """Run the recipes' tests in the throwaway sandbox: for each test and each template,
    the setup must exit 0, the check must fail before the command and pass after it.
    A recipe that maps its task family's slots (family_args) also runs on drawn instances
    of the family. Exits 1 when a recipe fails (or a recipe file has a problem); a recipe
    of yours without tests is listed, not failed.

    example: shellagent recipes test --area logs --jobs 2
    """
    from shellagent.taskgen.recipe_tests import RecipeResult, run_recipe_tests

    catalog = _catalog()
    recipes = _chosen(catalog, args.area, args.names)
    if not recipes:
        raise InputError("no recipes to test")

    def heard(result: RecipeResult) -> None:
        if args.json:
            row = {
                "name": result.name,
                "ok": result.ok,
                "runs": result.runs,
                "failures": [f.__dict__ for f in result.failures],
            }
            print(json.dumps(row, ensure_ascii=False), flush=True)
            return
        if result.ok:
            print(f"ok    {result.name} ({result.runs} runs)", flush=True)
        elif not result.failures:
            print(f"--    {result.name}: no tests (add a [[recipe.tests]])", flush=True)
        for failure in result.failures:
            detail = " | ".join(failure.detail.splitlines()[:3])
            print(f"FAIL  {failure.task} [{failure.step}] {detail}", flush=True)

    results = run_recipe_tests(recipes, jobs=args.jobs, instances=args.instances, on_result=heard)
    passed = sum(r.ok for r in results)
    failed = sum(bool(r.failures) for r in results)
    untested = len(results) - passed - failed
    note = f", {untested} without tests" if untested else ""
    print(f"{passed} of {len(results)} recipes pass{note}", file=sys.stderr)
    if failed:
        raise TaskFailed(f"{failed} of {len(results)} recipes fail")
    if catalog.problems and not args.names:
        raise TaskFailed(f"{len(catalog.problems)} recipe file problems (see the warnings)")
    return 0


def session_commands(transcript: Any) -> tuple[list[str], bool]:
    """The commands of a confirmed session that worked, and whether it changed files;
    ``InputError`` for a session that cannot become a recipe."""
    from shellagent.events import ChangeSetRecord, Execution

    verdict = transcript.verdict
    ident = transcript.session_id
    if verdict != "confirmed":
        why = {
            "failed": "it did not do the job",
            "unverified": "nobody confirmed that it did the job",
            "incomplete": "it never ended",
        }.get(verdict, verdict)
        raise InputError(
            f"session {ident} cannot become a recipe: {why}",
            hint="only a session you confirmed worked can",
        )
    for change in transcript.of_type(ChangeSetRecord):
        if change.outcome in ("discarded", "refused"):
            raise InputError(
                f"session {ident} cannot become a recipe: its changes were {change.outcome}",
                hint="only a session whose changes were kept can",
            )
    worked = [
        e.command
        for e in transcript.of_type(Execution)
        if e.exit_code == 0 and not e.timed_out and not e.refused
    ]
    if not worked:
        raise InputError(f"session {ident} ran no command that worked; nothing to make a recipe of")
    changed = any(
        c.created + c.modified + c.deleted + c.renamed > 0
        for c in transcript.of_type(ChangeSetRecord)
    )
    return worked, changed


def cmd_index(args: argparse.Namespace) -> int:
    """Train the ranker for the current recipe set into the cache directory, where the
    daemon reads it (a task asked while it is still training goes without recipes).

    example: shellagent recipes index"""
    from shellagent import paths
    from shellagent.recipes.rank import Ranker

    recipes = list(_catalog().recipes.values())
    cache = paths.cache_dir()
    began = time.monotonic()
    cached = Ranker.cached(recipes, cache) is not None
    if not cached:
        Ranker.build(recipes, cache)
    took = "already indexed" if cached else f"indexed in {time.monotonic() - began:.1f} s"
    print(f"{len(recipes)} recipes {took} ({Ranker.cache_path(recipes, cache)})")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    """Teach a request the command(s) that do it (--task), or make a recipe of yours from a
    session you confirmed worked (--from).

    --task TEXT -- COMMAND...: learned at once, no retraining. When the command is a
    rendering of an existing recipe, TEXT becomes a phrasing of that recipe with its
    values; otherwise a recipe of yours is made of it (paths, numbers, extensions and
    quoted strings of TEXT found in the command become slots). Written, redacted, to
    <config dir>/recipes/taught.toml; `shellagent recipes rm NAME` forgets it.

    --from SESSION: the task text becomes the recipe's first phrasing, the session's
    commands (joined with &&) the template, with slots as above. Written, redacted, to
    <config dir>/recipes/mine.toml.

    example: shellagent recipes add --task "how big is my Downloads folder" -- 'du -sh ~/Downloads'
    """
    if args.task is not None:
        return _teach(args)
    if args.commands:
        raise InputError("commands are given with --task", hint="or drop them to use --from")
    from shellagent.recipes import load, recipe_from_session, render_all, user_dir
    from shellagent.recipes.fromsession import save_recipe
    from shellagent.transcript.reader import find_session, read_transcript
    from shellagent.transcript.redact import Redactor

    transcript = read_transcript(find_session(args.session))
    commands, changed = session_commands(transcript)
    catalog = load()
    if args.name and args.name in catalog.recipes:
        raise InputError(f"a recipe named {args.name!r} exists", hint="choose another --name")
    recipe = recipe_from_session(
        transcript.task,
        commands,
        redact=Redactor.from_environment().redact,
        kind="action" if changed else "question",
        taken=set(catalog.recipes),
        name=args.name,
    )
    path = save_recipe(recipe, user_dir() / "mine.toml")
    slots = ", ".join(f"{s.name} ({s.type}, default {s.default})" for s in recipe.slots.values())
    print(f"added recipe {recipe.name} to {path}")
    print(f"  phrasing: {recipe.phrasings[0]}")
    print(f"  slots: {slots or 'none'}")
    for text in render_all(recipe, {}):
        print(f"  $ {text}")
    return 0


def _teach(args: argparse.Namespace) -> int:
    from shellagent.recipes import SlotError, render_all
    from shellagent.recipes.learn import teach_commands
    from shellagent.transcript.redact import Redactor

    commands = [c for c in args.commands if c.strip()]
    if not args.task.strip():
        raise InputError("the task is empty: say what the command does", hint='--task "…"')
    if not commands:
        raise InputError(
            "no command to learn", hint="give it after --: recipes add --task \"…\" -- 'COMMAND'"
        )
    catalog = _catalog()
    if args.name is not None and args.name in catalog.recipes:
        raise InputError(f"a recipe named {args.name!r} exists", hint="choose another --name")
    began = time.monotonic()
    learned = teach_commands(
        args.task,
        commands,
        redact=Redactor.from_environment().redact,
        kind=_kind(commands),
        catalog=catalog,
        name=args.name,
    )
    took = time.monotonic() - began
    print(learned.line())
    if learned.replaced:
        print(f"  replaces what was taught for the same request: {', '.join(learned.replaced)}")
    try:
        rendered = render_all(learned.recipe, {})
    except SlotError:
        rendered = []
    for text in rendered[:1]:
        print(f"  $ {text}")
    print(f"learned in {took:.2f} s ({learned.path})", file=sys.stderr)
    return 0


def _kind(commands: list[str]) -> Any:
    """A question when the policy reads every command as read-only; else an action."""
    from shellagent.agent.learning import kind_of
    from shellagent.errors import ShellagentError
    from shellagent.policy import PolicyEngine

    try:
        return kind_of(commands, PolicyEngine.load(workspace=Path.cwd()), Path.cwd())
    except ShellagentError:
        return "action"  # a policy that cannot be read: the careful kind


def cmd_rm(args: argparse.Namespace) -> int:
    """Forget a recipe or phrasing you taught (`shellagent recipes list` marks yours), with
    the phrasings taught of it. Shipped recipes, and recipes in files you wrote, are not
    removed here.

    example: shellagent recipes rm my_dir_size
    """
    from shellagent.recipes.learn import forget

    gone = forget(args.name, catalog=_catalog())
    others = [n for n in gone if n != args.name]
    print(f"forgot {args.name}" + (f" and its phrasings {', '.join(others)}" if others else ""))
    return 0


def cmd_sft(args: argparse.Namespace) -> int:
    """Write (task -> recipe call) pairs for `shellagent train`, prompted as the recipe step
    prompts the model: drawn instances of the task families the recipes map (their setup
    run in a throwaway sandbox, so the values come from its listing) and the recipes' own
    phrasings, each with its recipe offered as the recipe step offers it and the gold
    reply {"use": NAME, "args": {...}}.

    example: shellagent recipes sft -o calls.jsonl && shellagent train calls.jsonl -o calls.gguf
    """
    import random

    from shellagent.taskgen.calls import family_calls, phrasing_calls, records

    if args.instances < 0 or args.phrasings < 0:
        raise InputError("--instances and --phrasings must be >= 0")
    book = _book()
    recipes = list(book.recipes.values())
    phrased = list(phrasing_calls(recipes))
    random.Random(args.seed).shuffle(phrased)
    calls = [*family_calls(recipes, args.instances, f"sft{args.seed}"), *phrased[: args.phrasings]]
    started, count = time.monotonic(), 0
    kinds = {"family": 0, "phrasing": 0}
    with open(args.output, "w", encoding="utf-8") as f:
        for record in records(book, calls):
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
            kinds[record["source"].split()[0]] += 1
    print(
        f"wrote {count} conversations to {args.output} from {len(calls)} tasks "
        f"({kinds['family']} of task families, {kinds['phrasing']} of phrasings) "
        f"in {time.monotonic() - started:.0f} s; "
        "tasks no recipe fits, or whose call needs a value the task does not say, are left out",
        file=sys.stderr,
    )
    return 0 if count else 1


def _book() -> Any:
    """The recipes a session would use (shipped and yours) with their ranker."""
    from shellagent import paths
    from shellagent.agent.recipe_step import RecipeBook

    _catalog()  # its problems are warned of once
    return RecipeBook.load(cache_dir=paths.cache_dir())
