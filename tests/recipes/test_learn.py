"""Teaching once: a request and its command (or a picked recipe) are learned at once, as a
phrasing of the recipe the command renders or as a recipe of yours; the ranker's
nearest-phrasing layer takes it in without retraining, so a paraphrase with other values
picks it next time and runs it with the new values; ``forget`` takes it out again."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import AgentConfig, AutoApprover, Hooks, Oversight, Parts, Recording, run_task
from shellagent.agent.learning import BookWatch
from shellagent.agent.recipe_step import RecipeBook
from shellagent.errors import InputError
from shellagent.events import Execution
from shellagent.policy import PolicyEngine
from shellagent.recipes import Catalog, load, user_dir
from shellagent.recipes.learn import forget, match_commands, teach, teach_commands
from shellagent.recipes.rank import Ranker
from shellagent.recipes.taught import taught_path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

# A small recipe set standing for the shipped one (the real one takes a minute to train).
SHELF = """
area = "test"

[[recipe]]
name = "dir_size"
summary = "how much space a folder uses in total"
kind = "question"
phrasings = [
  "how big is {dir}",
  "total size of {dir}",
  "how much disk space does {dir} use",
  "what does {dir} weigh altogether",
  "disk usage of the folder {dir}",
]
templates = ["du -sh {dir}"]
[recipe.slots]
dir = { type = "dir", default = "." }

[[recipe]]
name = "largest_files"
summary = "the N largest files in a folder, largest first"
kind = "question"
phrasings = [
  "which {count} files in {dir} are the largest",
  "list the biggest files in {dir}",
  "what is taking up space in {dir}",
  "show the {count} heaviest files under {dir}",
  "find the largest file in {dir}",
]
templates = ["ls -S {dir} | head -n {count}"]
[recipe.slots]
dir = { type = "dir", default = "." }
count = { type = "count", default = 5 }

[[recipe]]
name = "count_matching_lines"
summary = "how many lines of a file mention a text"
kind = "question"
phrasings = [
  "how many lines in {file} mention {pattern}",
  "count the lines containing {pattern} in {file}",
  "number of {pattern} lines in {file}",
  "in {file}, on how many lines does {pattern} appear",
  "how often does {pattern} occur in {file}",
]
templates = ["grep -c -e {pattern} -- {file}"]
[recipe.slots]
file = { type = "file" }
pattern = { type = "pattern" }

[[recipe]]
name = "count_entries"
summary = "how many entries a folder has"
kind = "question"
phrasings = [
  "how many entries does {dir} have",
  "count what is in {dir}",
  "number of things in {dir}",
  "how full is {dir}, in entries",
  "tally the entries of {dir}",
]
templates = ["ls -A {dir} | wc -l"]
[recipe.slots]
dir = { type = "dir", default = "." }

[[recipe]]
name = "remove_tmp"
summary = "delete the temporary files of a folder"
kind = "action"
phrasings = [
  "delete the .tmp files in {dir}",
  "clean up temporary files in {dir}",
  "get rid of the *.tmp files under {dir}",
  "erase leftover tmp files in {dir}",
  "remove scratch files from {dir}",
]
templates = ["find {dir} -maxdepth 1 -name '*.tmp' -delete"]
[recipe.slots]
dir = { type = "dir", default = "." }
"""

CHECKSUM = "What is the sha256 checksum of ./notes.txt?"
ROOM = "How much room does ./photos take up?"


def same(text: str) -> str:
    return text


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    folder = tmp_path / "shelf"
    folder.mkdir()
    (folder / "test.toml").write_text(SHELF)
    return folder


def catalog(shelf: Path) -> Catalog:
    found = load([shelf, user_dir()])
    assert not found.problems, found.problems
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    (ws / "big").mkdir(parents=True)
    (ws / "big" / "huge.bin").write_bytes(b"x" * 50_000)
    (ws / "todo.txt").write_text("call the dentist\n")
    (ws / "notes.txt").write_text("one\ntwo\n")
    return ws


def first_values(messages: list[dict[str, str]]) -> str:
    """The reply the prompt shows as its example: each slot's first value (no model)."""
    return messages[0]["content"].rsplit("\n", 1)[-1]


def answer(task: str, book: RecipeBook, workspace: Path) -> list[str]:
    """The commands the recipe step runs for ``task`` in a real sandbox, filled with each
    slot's first value (what the task says first, else the default)."""
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as shell:
        run_task(
            task,
            Parts(
                backend=ScriptedBackend([first_values] * 3),
                shell=shell,
                policy=PolicyEngine.load(workspace=workspace),
                config=AgentConfig(examples=0, max_turns=2),
                recipes=book,
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink),
            Hooks(cancel=threading.Event()),
        )
    return [e.command for e in sink.events if isinstance(e, Execution)]


def book_of(shelf: Path) -> RecipeBook:
    recipes = dict(catalog(shelf).recipes)
    return RecipeBook(recipes, Ranker.train(list(recipes.values())))


def test_a_command_that_renders_a_recipe_becomes_a_phrasing_of_it_with_its_values(
    shelf: Path,
) -> None:
    learned = teach_commands(
        ROOM, ["du -sh ./photos"], redact=same, kind="question", catalog=catalog(shelf)
    )
    assert learned.base == "dir_size"
    loaded = catalog(shelf).recipes[learned.name]
    assert loaded.base == "dir_size" and loaded.taught
    assert loaded.phrasings == ("How much room does {dir} take up?",)
    assert loaded.slots["dir"].default == "./photos"
    assert loaded.templates == catalog(shelf).recipes["dir_size"].templates
    assert "[[phrasing]]" in taught_path().read_text()


def test_a_command_no_recipe_renders_becomes_a_recipe_of_yours_with_slots(shelf: Path) -> None:
    learned = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    assert learned.base is None
    loaded = catalog(shelf).recipes[learned.name]
    assert loaded.templates == ("sha256sum {path}",)
    assert loaded.slots["path"].default == "./notes.txt"
    assert (loaded.origin, loaded.taught, loaded.kind) == ("yours", True, "question")


def test_a_paraphrase_with_other_values_runs_what_was_taught_with_the_new_values(
    shelf: Path, workspace: Path
) -> None:
    untaught = book_of(shelf)
    assert untaught.ranker.rank("give me the sha256 checksum of ./todo.txt")[0].score < 0
    teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    teach_commands(ROOM, ["du -sh ./photos"], redact=same, kind="question", catalog=catalog(shelf))
    book = book_of(shelf)
    ran = answer("give me the sha256 checksum of ./todo.txt", book, workspace)
    assert ran[0] == "sha256sum ./todo.txt"
    ran = answer("how much room does ./big take up on disk", book, workspace)
    assert ran[0] == "du -sh ./big"


def test_a_task_of_another_recipe_keeps_its_recipe_after_teaching(shelf: Path) -> None:
    tasks = ["which 3 files in /srv are the largest", "delete the .tmp files in /var/x"]
    before = [book_of(shelf).ranker.rank(t)[0].name for t in tasks]
    teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    teach_commands(ROOM, ["du -sh ./photos"], redact=same, kind="question", catalog=catalog(shelf))
    assert [book_of(shelf).ranker.rank(t)[0].name for t in tasks] == before
    assert before == ["largest_files", "remove_tmp"]


def test_forget_takes_out_what_was_taught_and_what_was_taught_of_it(shelf: Path) -> None:
    mine = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    also = teach(
        "print the checksum of the file ./todo.txt",
        mine.name,
        {"path": "./todo.txt"},
        redact=same,
        catalog=catalog(shelf),
    )
    assert also.base == mine.name
    assert forget(mine.name, catalog=catalog(shelf)) == [mine.name, also.name]
    assert not {mine.name, also.name} & set(catalog(shelf).recipes)
    ranked = book_of(shelf).ranker.rank("give me the sha256 checksum of ./todo.txt")
    assert ranked[0].name not in (mine.name, also.name)


def test_forget_refuses_a_recipe_that_was_not_taught(shelf: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no recipe named 'nothing'"):
        forget("nothing", catalog=catalog(shelf))
    with pytest.raises(InputError, match="a file you wrote: remove it there"):
        forget("dir_size", catalog=catalog(shelf))


def test_the_same_request_taught_again_replaces_what_was_taught_for_it(shelf: Path) -> None:
    first = teach_commands(
        CHECKSUM, ["md5sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    second = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    assert second.replaced == (first.name,)
    taught = [r for r in catalog(shelf).recipes.values() if r.taught]
    assert [r.templates for r in taught] == [("sha256sum {path}",)]


def test_a_picked_alternative_is_learned_for_its_request_through_the_api(
    shelf: Path, workspace: Path
) -> None:
    task = "show the single biggest file in ./big"
    learned = teach(
        task, "largest_files", {"dir": "./big", "count": 1}, redact=same, catalog=catalog(shelf)
    )
    assert learned.base == "largest_files"
    loaded = catalog(shelf).recipes[learned.name]
    assert loaded.phrasings == ("show the single biggest file in {dir}",)
    assert (loaded.slots["dir"].default, loaded.slots["count"].default) == ("./big", "1")
    ran = answer("show the single biggest file in ./work", book_of(shelf), workspace.parent)
    assert ran[0] == "ls -S ./work | head -n 1"


def test_a_picked_recipe_made_for_the_task_alone_is_kept_as_a_recipe_of_yours(
    shelf: Path,
) -> None:
    base = catalog(shelf).recipes["remove_tmp"]
    composed = dataclasses.replace(
        base, name="remove_tmp_then_count", templates=("find {dir} -name '*.tmp' | wc -l",)
    )
    learned = teach(
        "how many tmp files are left in ./big",
        composed,
        {"dir": "./big"},
        redact=same,
        catalog=catalog(shelf),
    )
    loaded = catalog(shelf).recipes[learned.name]
    assert learned.base is None and loaded.origin == "yours"
    assert loaded.templates == composed.templates and loaded.slots["dir"].default == "./big"


@pytest.mark.parametrize(
    ("task", "commands", "message"),
    [
        ("", ["ls"], "the task is empty"),
        ("list it", [" "], "no command to learn"),
        ("say hi", ["echo 'hi"], "unbalanced quoting"),
        ("log in", ["mysql -u root -pHunter2Secret db"], "holds a secret"),
    ],
)
def test_what_cannot_be_learned_is_one_clear_error_and_nothing_is_written(
    shelf: Path, task: str, commands: list[str], message: str
) -> None:
    from shellagent.transcript import Redactor

    redact = Redactor.from_environment().redact
    with pytest.raises(InputError, match=message) as caught:
        teach_commands(task, commands, redact=redact, kind="action", catalog=catalog(shelf))
    assert "\n" not in caught.value.text()
    assert not taught_path().exists()


def test_a_command_is_read_against_templates_only_where_it_renders_exactly(shelf: Path) -> None:
    recipes = list(catalog(shelf).recipes.values())
    assert match_commands(["ls -S '/my dir' | head -n 3"], recipes) == (
        catalog(shelf).recipes["largest_files"],
        {"dir": "/my dir", "count": "3"},
    )
    assert match_commands(["grep -c -e 'a b' -- x.log"], recipes) is not None
    assert match_commands(["ls -S /srv | head -3"], recipes) is None  # not the template's form
    assert match_commands(["du -sh /srv; rm -rf ~"], recipes) is None


def test_teaching_does_not_retrain_the_cached_ranker(shelf: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    Ranker.build(list(catalog(shelf).recipes.values()), cache)
    (trained,) = cache.glob("recipe-ranker-*.pickle")
    before = hashlib.sha256(trained.read_bytes()).hexdigest()
    learned = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    ranker = Ranker.build(list(catalog(shelf).recipes.values()), cache)
    assert list(cache.glob("recipe-ranker-*.pickle")) == [trained]
    assert hashlib.sha256(trained.read_bytes()).hexdigest() == before
    assert ranker.rank("give me the sha256 checksum of ./todo.txt")[0].name == learned.name


def test_a_long_lived_book_takes_in_what_another_process_taught(shelf: Path) -> None:
    watch = BookWatch()
    watch.mark()
    book = book_of(shelf)
    assert watch(book) is book  # nothing changed: the same book
    learned = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    fresh: Any = watch(book)
    assert learned.name in fresh.recipes and learned.name not in book.recipes
    assert fresh.ranker.rank("the sha256 checksum of ./x.txt, please")[0].name == learned.name
    assert watch(fresh) is fresh


def test_whose_commands_a_recipe_runs_is_on_it_and_kept_when_composed(shelf: Path) -> None:
    from shellagent.recipes import DATA_DIR
    from shellagent.recipes.compose import ENDINGS, compose
    from shellagent.recipes.reading import read_task

    shipped = load([DATA_DIR]).recipes["largest_files"]
    assert (shipped.origin, shipped.taught) == ("shipped", False)
    mine = user_dir() / "mine.toml"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(
        'area = "mine"\n[[recipe]]\nname = "empty_logs"\nsummary = "the empty logs"\n'
        'kind = "question"\nphrasings = ["which logs in {dir} are empty"]\n'
        "templates = [\"find {dir} -type f -name '*.log' -empty\"]\n"
        '[recipe.slots]\ndir = { type = "dir", default = "." }\n'
    )
    own = catalog(shelf).recipes["empty_logs"]
    assert (own.origin, own.taught) == ("yours", False)
    ending = ENDINGS.get(read_task("delete the empty logs in /srv").ending)
    assert ending is not None
    composed = compose(own, ending)
    assert composed is not None and composed.origin == "yours"
    learned = teach_commands(
        CHECKSUM, ["sha256sum ./notes.txt"], redact=same, kind="question", catalog=catalog(shelf)
    )
    assert catalog(shelf).recipes[learned.name].origin == "yours"


def test_a_phrasing_of_a_recipe_that_is_gone_is_a_one_line_problem(shelf: Path) -> None:
    taught_path().parent.mkdir(parents=True, exist_ok=True)
    taught_path().write_text(
        'area = "taught"\n[[phrasing]]\nname = "my_old"\nrecipe = "no_such"\n'
        'text = "how big is it"\nargs = {}\n'
    )
    found = load([shelf, user_dir()])
    assert "my_old" not in found.recipes
    assert len(found.problems) == 1
    assert (
        "taught.toml:4: phrasing 'my_old': recipe: no recipe named 'no_such'" in (found.problems[0])
    )
    assert forget("my_old", catalog=found) == ["my_old"]
    assert not load([shelf, user_dir()]).problems


def test_a_taught_request_overrules_the_recipe_it_corrected_for_its_paraphrases(
    shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taught with a command of its own, a request the ranker gave to count_entries says
    count_entries is not what it means: a paraphrase a little nearer to count_entries'
    own phrasings than to the taught text goes to what was taught; a plain count_entries
    request, far from the taught text, keeps count_entries."""
    from shellagent.recipes import nearest

    paraphrase = "number of entries in ./photos, leaving out the hidden ones"
    plain = ["how many entries does /srv have", "tally the entries of ./photos"]
    assert book_of(shelf).ranker.rank(paraphrase)[0].name == "count_entries"
    learned = teach_commands(
        "How many entries are in ./big, leaving out the hidden ones?",
        ["ls ./big | wc -l"],
        redact=same,
        kind="question",
        catalog=catalog(shelf),
    )
    ranker = book_of(shelf).ranker
    assert ranker.rank(paraphrase)[0].name == learned.name
    assert [ranker.rank(t)[0].name for t in plain] == ["count_entries"] * 2
    monkeypatch.setattr(nearest, "OVERRULED", 0.0)  # without the overrule: the nearest wins
    # (the words "leaving" and "hidden", which this small shelf's phrasings never use,
    # are both requests' own words: counted, they lift the paraphrase by themselves)
    monkeypatch.setattr(nearest, "OWN", 0.0)
    assert ranker.rank(paraphrase)[0].name == "count_entries"


def test_a_paraphrase_naming_the_same_own_things_goes_to_what_was_taught(
    shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paraphrase nearer in words to a shipped recipe's phrasings than to the taught
    request, but about the same things (the user marta, zephyrd.log), goes to what was
    taught: the own words count (``nearest.OWN``). The same words about other things keep
    the shipped recipe."""
    from shellagent.recipes import nearest

    learned = teach_commands(
        "In ./logs/zephyrd.log, on how many lines does the user marta appear?",
        ["grep -c 'user=marta' ./logs/zephyrd.log"],
        redact=same,
        kind="question",
        catalog=catalog(shelf),
    )
    assert learned.base is None  # a recipe of yours: the command renders no recipe
    ranker = book_of(shelf).ranker
    paraphrase = "how often does marta show up in ./logs/zephyrd.log"
    other = "how often does ERROR show up in ./logs/other.log"
    assert ranker.rank(paraphrase)[0].name == learned.name
    assert ranker.rank(other)[0].name == "count_matching_lines"
    monkeypatch.setattr(nearest, "OWN", 0.0)  # without the own words: the words decide
    assert ranker.rank(paraphrase)[0].name == "count_matching_lines"


def test_own_words_are_the_things_a_request_names_not_the_words_everyone_uses() -> None:
    """Paths' parts, names and numbers count; common English words, the standard places
    (/tmp, Documents), the clause that says where to save, and words the shipped
    phrasings use (``common``) do not."""
    from shellagent.recipes.nearest import own_words

    said = own_words(
        "How many lines does the user marta have in ~/Documents/logs/zephyrd.log? "
        "Save the answer to /tmp/summary.txt.",
        frozenset({"lines", "user", "logs", "does"}),
    )
    assert set(said) == {"marta", "zephyrd.log"}
    assert abs(sum(v * v for v in said.values()) - 1) < 1e-9
    assert own_words("how many of them are there", frozenset()) == {}
