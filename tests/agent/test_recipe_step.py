"""The recipe step of the loop, driven by a scripted model: a recipe that fits answers the
task, an uncertain ranking is tried before it is shown (read-only confined, writers on an
overlay copy, never the real files), and when no recipe fits the model writes the commands
itself, marked free, and says plainly what to do next when that fails too."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import (
    AgentConfig,
    AutoApprover,
    Hooks,
    Oversight,
    Parts,
    Recording,
    RefuseApprover,
    run_task,
)
from shellagent.agent.recipe_step import RecipeBook
from shellagent.agent.trial import OverlayTrial
from shellagent.events import ChatMessage, Execution, ModelTurn
from shellagent.model.backend import ReplyFormat
from shellagent.policy import PolicyEngine
from shellagent.recipes import load
from shellagent.recipes.rank import Ranker
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend

from .conftest import cmd

RECIPES = """
area = "test"

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
name = "count_lines"
summary = "how many lines a file has"
kind = "question"
phrasings = [
  "how many lines are in {file}",
  "count the lines of {file}",
  "number of lines in {file}",
  "how long is {file} in lines",
  "line count of {file}",
]
templates = ["wc -l < {file}"]
[recipe.slots]
file = { type = "file" }

[[recipe]]
name = "delete_tmp_files"
summary = "delete the .tmp files of a folder"
kind = "action"
phrasings = [
  "delete the tmp files in {dir}",
  "remove all .tmp files from {dir}",
  "clean up temporary files in {dir}",
  "get rid of the *.tmp files under {dir}",
  "erase leftover tmp files in {dir}",
]
templates = ["find {dir} -maxdepth 1 -name '*.tmp' -delete"]
[recipe.slots]
dir = { type = "dir", default = "." }

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
templates = ["cd {dir} && ls | wc -l"]
[recipe.slots]
dir = { type = "dir", default = "." }

[[recipe]]
name = "csv_column_total"
summary = "the total of a CSV column, named by its header"
kind = "question"
phrasings = [
  "what's the total of the {field} column in {file}",
  "add up the {field} values in {file}",
  "how much does {file} come to in total",
  "sum the {field} of the spreadsheet {file}",
  "grand total of {file}",
]
templates = ['''awk -F, -v col={field} 'NR == 1 { for (i = 1; i <= NF; i++) \
if ($i == col) c = i; next } { s += $c } END { print s }' {file}''']
[recipe.slots]
file = { type = "file" }
field = { type = "key", numbers = true }
"""


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "test.toml").write_text(RECIPES)
    catalog = load([folder])
    assert not catalog.problems, catalog.problems
    recipes = dict(catalog.recipes)
    return RecipeBook(recipes, Ranker.train(list(recipes.values())))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    (ws / "big").mkdir(parents=True)
    (ws / "big" / "huge.bin").write_bytes(b"x" * 5000)
    (ws / "big" / "tiny.txt").write_text("x\n")
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    (ws / "a.tmp").write_text("scratch\n")
    return ws


@pytest.fixture
def sandbox(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as session:
        yield session


def format_of(backend: ScriptedBackend, call: int = 0) -> ReplyFormat:
    fmt = backend.options[call]["reply_format"]
    assert isinstance(fmt, ReplyFormat)
    return fmt


def use(name: str, **args: str) -> str:
    return json.dumps({"use": name, "args": args}, separators=(", ", ": "))


def fill(**replies: str) -> Any:
    """A reply for whichever single recipe the prompt offers: ``replies[name]``."""

    def reply(messages: list[dict[str, str]]) -> str:
        offered = [n for n in replies if f"- {n}:" in messages[0]["content"]]
        assert len(offered) == 1, messages[0]["content"]
        return replies[offered[0]]

    return reply


def run(
    task: str,
    replies: list[Any],
    shell: Any,
    book: RecipeBook,
    workspace: Path,
    approver: Any = None,
    **config: Any,
) -> tuple[Any, MemorySink, ScriptedBackend]:
    backend = ScriptedBackend(replies)
    sink = MemorySink()
    outcome = run_task(
        task,
        Parts(
            backend=backend,
            shell=shell,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0, **config),
            recipes=book,
        ),
        Oversight(approver=approver or AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=threading.Event()),
    )
    return outcome, sink, backend


def test_a_fitting_recipe_answers_the_question_with_its_output(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, backend = run(
        "which 1 files in big are the largest",
        [use("largest_files", dir="big", count="1")],
        sandbox,
        book,
        workspace,
    )
    assert outcome.reason == "finished"
    assert outcome.summary == "huge.bin"
    turn = sink.of_type(ModelTurn)[0]
    assert turn.action is not None
    assert turn.action["use"] == "largest_files"
    assert json.loads(turn.action["args"]) == {"dir": "big", "count": "1"}
    assert turn.action["cmd"] == "ls -S big | head -n 1"
    assert [e.command for e in sink.of_type(Execution)] == ["ls -S big | head -n 1"]
    # the model was asked under the per-task grammar, which names the candidates
    fmt = format_of(backend)
    assert fmt.name == "use"
    assert '"\\"largest_files\\""' in fmt.gbnf
    assert '"\\"big\\""' in fmt.gbnf  # the folder the task names is a candidate value


def test_a_question_whose_reader_stopped_early_is_answered(
    book: RecipeBook, workspace: Path
) -> None:
    """With pipefail, `sort … | head -n 1` exits 141 when head had enough before sort was
    done writing (a race the input's size decides): its output is the answer. An action
    that exits 141 did not do its job."""
    import subprocess

    from shellagent.agent.trying import answered
    from shellagent.sandbox import CommandResult

    real = subprocess.run(
        ["bash", "-c", "set -o pipefail; yes | head -n 1"], capture_output=True, text=True
    )
    assert real.returncode == 141 and real.stdout == "y\n"  # the premise, on this machine
    fake = FakeShell({"ls -S big | head -n 1": ("huge.bin\n", 141)}, cwd=str(workspace))
    outcome, sink, _ = run(
        "which 1 files in big are the largest",
        [use("largest_files", dir="big", count="1")],
        fake,
        book,
        workspace,
    )
    assert outcome.reason == "finished" and outcome.summary == "huge.bin"
    cut = CommandResult("x | head -n 1", "", 141, 0.1)
    assert not answered("question", cut)  # nothing printed: no answer
    assert not answered("action", replace(cut, output="moved\n"))
    assert answered("question", replace(cut, output="huge.bin\n"))


def test_a_value_its_type_refuses_is_never_rendered_and_the_free_loop_takes_over(
    book: RecipeBook, workspace: Path
) -> None:
    fake = FakeShell(cwd=str(workspace))
    outcome, sink, _ = run(
        "which 1 files in big are the largest",
        [use("largest_files", dir="big", count="0; rm -rf ~"), cmd("ls -S big"), '{"done": "ok"}'],
        fake,
        book,
        workspace,
    )
    assert not any("rm -rf" in c for c in fake.ran)
    turns = sink.of_type(ModelTurn)
    assert turns[-2].action is not None and turns[-2].action["origin"] == "free"
    assert outcome.reason == "finished" and outcome.origin == "free"


def test_when_no_recipe_fits_the_model_writes_the_command_marked_free(
    book: RecipeBook, workspace: Path
) -> None:
    fake = FakeShell({"uptime": ("up 3 days\n", 0)}, cwd=str(workspace))
    strict = replace(book, fits=99.0)  # nothing reaches this score
    outcome, sink, backend = run(
        "how long has this machine been up",
        [cmd("uptime", "see the uptime"), '{"done": "up 3 days"}'],
        fake,
        strict,
        workspace,
    )
    assert outcome.reason == "finished"
    assert fake.ran == ["uptime"]  # no listing, no recipe: straight to the free loop
    first = sink.of_type(ModelTurn)[0]
    assert first.action == {"cmd": "uptime", "why": "see the uptime", "origin": "free"}
    notes = [m.content for m in sink.of_type(ChatMessage) if m.role == "system"]
    assert any("no recipe fits" in n for n in notes)
    assert format_of(backend).name == "action"


def test_when_the_free_commands_fail_too_the_summary_names_the_next_step(
    book: RecipeBook, workspace: Path
) -> None:
    fake = FakeShell({"frobnicate --all": ("frobnicate: command not found\n", 127)})
    strict = replace(book, fits=99.0)
    outcome, _, _ = run(
        "frobnicate everything",
        [cmd("frobnicate --all")] * 3,
        fake,
        strict,
        workspace,
        stall_limit=0,  # the repeat limit, not the budget without progress (test_free_loop_budget)
    )
    assert outcome.reason == "repeated_failure"
    assert "No recipe fits this task" in outcome.summary
    assert "shellagent model pull" in outcome.summary
    assert "frobnicate --all" in outcome.summary  # the command to edit
    assert "failed 3 times" in outcome.error


def test_a_free_command_the_policy_denies_again_ends_on_what_was_not_allowed(
    book: RecipeBook, workspace: Path
) -> None:
    # not "no recipe fits … pull a larger model": the policy said no, and says why
    fake = FakeShell({})
    strict = replace(book, fits=99.0)
    outcome, _, _ = run(
        "wipe everything", [cmd("rm -rf /"), cmd("rm -rf / && ls")], fake, strict, workspace
    )
    assert fake.ran == []
    assert outcome.reason == "repeated_failure"
    assert outcome.summary.startswith("the policy does not allow `rm -rf /`"), outcome.summary
    assert "No recipe fits" not in outcome.summary


def test_an_uncertain_ranking_tries_the_candidates_confined_and_keeps_the_one_that_fits(
    book: RecipeBook, workspace: Path
) -> None:
    answers = {
        "(\ncd . && ls | wc -l\n)": ("ls: cannot open directory '.': Permission denied\n", 2),
        "(\nwc -l < notes.txt\n)": ("3\n", 0),
        "wc -l < notes.txt": ("3\n", 0),
    }
    fake = FakeShell(answers, cwd=str(workspace))
    unsure = replace(book, confident=99.0, fits=-99.0)
    # The model names a recipe it was not offered (a server that ignores the schema): the
    # reply is not used; the offers are filled from the task and tried.
    wrong = use("count_entries", dir=".")
    outcome, sink, backend = run(
        "how many lines does notes.txt have", [wrong], fake, unsure, workspace
    )
    assert set(answers) <= set(fake.confined)  # both readers tried, confined, in a subshell
    assert outcome.reason == "finished"
    assert outcome.summary == "3"
    assert [e.command for e in sink.of_type(Execution)] == ["wc -l < notes.txt"]
    assert len(backend.calls) == 1  # one reply: the others were filled without the model
    root = format_of(backend).gbnf.splitlines()[0]
    assert root.count("|") == 0  # the model fills the ranker's first; the ranker chooses
    record = sink.of_type(ModelTurn)[0].action
    assert record is not None and record["use"] == "count_lines"
    codes = {t["recipe"]: t["exit_code"] for t in json.loads(record["tried"])}
    # without a writer trial, the writer is not run at all
    assert codes["count_lines"] == 0 and codes["count_entries"] == 2


def test_a_filling_of_the_model_that_fails_its_trial_loses_to_the_first_values(
    book: RecipeBook, workspace: Path
) -> None:
    """The model's values are tried beside each slot's first value for the same recipe:
    a wrong file of the model's does not cost the recipe that fits."""
    answers = {
        "(\nwc -l < /var/log/other.log\n)": ("wc: /var/log/other.log: No such file\n", 1),
        "(\nwc -l < notes.txt\n)": ("3\n", 0),
        "wc -l < notes.txt": ("3\n", 0),
    }
    fake = FakeShell(answers, default=("", 1), cwd=str(workspace))
    unsure = replace(book, confident=99.0, fits=-99.0)
    outcome, sink, _ = run(
        "how many lines does notes.txt have",
        [use("count_lines", file="/var/log/other.log")],
        fake,
        unsure,
        workspace,
    )
    assert outcome.reason == "finished" and outcome.summary == "3"
    assert [e.command for e in sink.of_type(Execution)] == ["wc -l < notes.txt"]
    record = sink.of_type(ModelTurn)[0].action
    assert record is not None
    tried = [(t["recipe"], t["command"], t["exit_code"]) for t in json.loads(record["tried"])]
    assert ("count_lines", "wc -l < /var/log/other.log", 1) in tried
    assert ("count_lines", "wc -l < notes.txt", 0) in tried


def test_when_the_chosen_recipe_fails_the_next_ones_are_tried_without_the_model(
    book: RecipeBook, workspace: Path
) -> None:
    answers = {
        "wc -l < notes.txt": ("wc: notes.txt: Permission denied\n", 1),
        "(\ncd . && ls | wc -l\n)": ("2\n", 0),
        "cd . && ls | wc -l": ("2\n", 0),
    }
    fake = FakeShell(answers, default=("", 1), cwd=str(workspace))
    sure = replace(book, confident=-99.0, fits=-99.0, offered=4)
    outcome, sink, backend = run(
        "how many lines does notes.txt have",
        [use("count_lines", file="notes.txt")],
        fake,
        sure,
        workspace,
    )
    assert outcome.reason == "finished" and outcome.summary == "2"
    # the recipe that did it is the outcome's origin (the first, failed one is not)
    assert outcome.origin.startswith("recipe ") and outcome.origin != "recipe count_lines"
    assert [e.command for e in sink.of_type(Execution)] == [
        "wc -l < notes.txt",
        "cd . && ls | wc -l",
    ]
    assert len(backend.calls) == 1  # the second chance asked the model nothing
    uses = [t.action["use"] for t in sink.of_type(ModelTurn) if t.action]
    assert uses == ["count_lines", "count_entries"]


def test_a_reply_naming_a_recipe_not_offered_is_not_run(book: RecipeBook, workspace: Path) -> None:
    """The ranker chooses: a reply for another recipe (a server that ignored the schema)
    runs nothing; the task goes on without recipes."""
    fake = FakeShell({}, default=("", 0), cwd=str(workspace))
    sure = replace(book, confident=-99.0, fits=-99.0)
    outcome, sink, backend = run(
        "how many lines does notes.txt have",
        [use("count_entries", dir="."), '{"done": "cannot"}'],
        fake,
        sure,
        workspace,
    )
    assert not sink.of_type(Execution)
    root = format_of(backend).gbnf.splitlines()[0]
    assert root.count("|") == 0 and "count-lines" in root
    notes = [m.content for m in sink.of_type(ChatMessage) if m.role == "system"]
    assert any("could not be filled" in n for n in notes), notes


def test_a_writer_is_tried_on_an_overlay_copy_and_the_real_files_stay(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    unsure = replace(book, confident=99.0, fits=-99.0, writer_trial=OverlayTrial())
    outcome, sink, _ = run(
        "delete the tmp files here",
        [use("delete_tmp_files", dir="."), '{"done": "left them"}'],
        sandbox,
        unsure,
        workspace,
        approver=RefuseApprover(),  # the real run is refused: only the trial ran
    )
    assert (workspace / "a.tmp").read_text() == "scratch\n"
    record = sink.of_type(ModelTurn)[0].action
    assert record is not None and record["use"] == "delete_tmp_files"
    tried = {t["command"]: t for t in json.loads(record["tried"])}
    writer = "find . -maxdepth 1 -name '*.tmp' -delete"
    assert tried[writer]["exit_code"] == 0  # it ran, on the copy
    assert outcome.commands == ()  # nothing ran for real


def test_a_trial_that_changes_directory_leaves_the_session_where_it_was(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    unsure = replace(book, confident=99.0, fits=-99.0, offered=4)  # every recipe is tried
    outcome, sink, _ = run(
        "which files in big are the largest",
        [use("largest_files", dir="big", count="5")],
        sandbox,
        unsure,
        workspace,
    )
    record = sink.of_type(ModelTurn)[0].action
    assert record is not None
    tried = {t["recipe"]: t for t in json.loads(record["tried"])}
    assert tried["count_entries"]["command"] == "cd big && ls | wc -l"  # it was tried
    assert outcome.reason == "finished", outcome
    assert outcome.summary.splitlines()[0] == "huge.bin"  # `ls -S big` still ran from here
    assert sandbox.cwd == str(workspace)


def test_an_answer_the_task_wants_in_a_file_is_saved_there(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    sure = replace(book, confident=-99.0, fits=-99.0)
    outcome, sink, _ = run(
        "count the lines of notes.txt and save the number to result.txt",
        [use("count_lines", file="notes.txt")],
        sandbox,
        sure,
        workspace,
    )
    assert outcome.reason == "finished", outcome
    assert (workspace / "result.txt").read_text() == "3\n"
    saved = "(set -C; { wc -l < notes.txt\n} > result.txt)"
    assert [e.command for e in sink.of_type(Execution)] == [saved]
    assert outcome.summary.startswith("Saved to result.txt")


def test_a_file_the_task_reads_is_never_where_the_answer_goes(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    sure = replace(book, confident=-99.0, fits=-99.0)
    before = (workspace / "notes.txt").read_text()
    outcome, sink, _ = run(
        "my log notes.txt was written to all week: count the lines in it",
        [use("count_lines", file="notes.txt")],
        sandbox,
        sure,
        workspace,
    )
    assert [e.command for e in sink.of_type(Execution)] == ["wc -l < notes.txt"]
    assert outcome.summary == "3"
    assert (workspace / "notes.txt").read_text() == before


def test_an_answer_never_overwrites_an_existing_file(sandbox: Sandbox, workspace: Path) -> None:
    from shellagent.agent.recipe_step import redirect

    result = sandbox.run(redirect("echo new", "notes.txt"), timeout=10)
    assert result.exit_code != 0
    assert (workspace / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_a_redirect_quotes_the_path() -> None:
    from shellagent.agent.recipe_step import redirect

    assert redirect("ls", "a b; rm -rf ~") == "(set -C; { ls\n} > 'a b; rm -rf ~')"
    assert redirect("ls", "~/out.txt", append=True) == "{ ls\n} >> ~/out.txt"


def test_a_read_only_trial_that_writes_is_refused_by_the_kernel(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    # A command the policy wrongly thought read-only still cannot write when tried.
    result = sandbox.run("rm -f a.tmp", timeout=10, confined=True)
    assert result.exit_code != 0
    assert (workspace / "a.tmp").exists()


def test_no_book_when_the_setting_turns_recipes_off() -> None:
    from shellagent.agent.recipe_step import book_for

    assert book_for("off") is None


@pytest.mark.slow
def test_every_model_gets_the_book_once_the_ranker_is_trained_in_the_background() -> None:
    from shellagent.agent import recipe_step

    if recipe_step.book_for("auto") is None:  # nothing cached: training started
        training = recipe_step._TRAINING
        assert training is not None
        training.join(timeout=600)
    book = recipe_step.book_for("auto")
    assert book is not None and book.writer_trial is not None
    assert book.ranker.rank("which files in ~/Downloads are the largest", 1)[0].name


def test_indexing_is_said_only_while_the_ranker_trains_and_only_with_recipes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shellagent.agent import recipe_step

    release = threading.Event()
    trainer = threading.Thread(target=release.wait, daemon=True)
    trainer.start()
    monkeypatch.setattr(recipe_step, "_DEFAULT", None)
    monkeypatch.setattr(recipe_step, "_TRAINING", trainer)
    assert recipe_step.indexing("auto")
    assert not recipe_step.indexing("off")  # never gets a book
    release.set()
    trainer.join(5)
    assert not recipe_step.indexing("auto")  # trained: the next task has its book


EMPTY_FILES = """
[[recipe]]
name = "empty_files"
summary = "the empty files below a folder"
kind = "question"
phrasings = [
  "which files in {dir} are empty",
  "list the empty files under {dir}",
  "find zero-byte files in {dir}",
  "show files of size zero in {dir}",
  "are there empty files in {dir}",
]
templates = ["find {dir} -type f -empty | sort"]
[recipe.slots]
dir = { type = "dir", default = "." }
"""


def test_a_task_that_acts_on_files_a_question_finds_gets_the_question_as_an_action(
    tmp_path_factory: pytest.TempPathFactory, sandbox: Sandbox, workspace: Path
) -> None:
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "test.toml").write_text(RECIPES + EMPTY_FILES)
    recipes = dict(load([folder]).recipes)
    book = RecipeBook(recipes, Ranker.train(list(recipes.values())))
    (workspace / "big" / "empty.log").write_text("")
    outcome, sink, _ = run(
        "Locate and delete the empty files in big.",
        [fill(empty_files_then_delete=use("empty_files_then_delete", dir="big"))],
        sandbox,
        book,
        workspace,
    )
    assert outcome.reason == "finished", outcome.summary
    turn = sink.of_type(ModelTurn)[0]
    assert turn.action is not None and turn.action["use"] == "empty_files_then_delete"
    assert turn.action["cmd"] == "find big -type f -empty -print -delete"
    assert not (workspace / "big" / "empty.log").exists()
    assert (workspace / "big" / "tiny.txt").exists()
    # the question alone is still the question
    (workspace / "big" / "empty.log").write_text("")
    outcome, sink, _ = run(
        "which files in big are empty",
        [fill(empty_files=use("empty_files", dir="big"))],
        sandbox,
        book,
        workspace,
    )
    assert outcome.summary == "big/empty.log"


TEXT_FILES = """
[[recipe]]
name = "text_files"
summary = "the text files in a folder"
kind = "question"
phrasings = ["which .txt files are in {dir}", "list the text files under {dir}"]
templates = ["find {dir} -type f -name '*.txt' | sort"]
[recipe.slots]
dir = { type = "dir", default = "." }
"""


def test_files_a_task_describes_are_joined_into_the_one_file_it_names(
    tmp_path_factory: pytest.TempPathFactory, sandbox: Sandbox, workspace: Path
) -> None:
    """ "Combine … into a single file named X in the same directory": the selection the
    task describes, joined in name order into the file it names, in that folder."""
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "test.toml").write_text(RECIPES + TEXT_FILES)
    recipes = dict(load([folder]).recipes)
    book = RecipeBook(recipes, Ranker.train(list(recipes.values())))
    (workspace / "big" / "more.txt").write_text("y\n")
    big = workspace / "big"
    outcome, sink, _ = run(
        f"The '{big}' folder has notes. Combine all text files into a single file named "
        "'all.txt' in the same directory.",
        [
            fill(
                text_files_then_concat=use(
                    "text_files_then_concat", dir=str(big), output=str(big / "all.txt")
                )
            )
        ],
        sandbox,
        book,
        workspace,
    )
    assert outcome.reason == "finished", outcome.summary
    turn = sink.of_type(ModelTurn)[0]
    assert turn.action is not None and turn.action["use"] == "text_files_then_concat"
    assert (big / "all.txt").read_text() == "y\nx\n"  # more.txt, tiny.txt
    assert (big / "huge.bin").stat().st_size == 5000


def test_a_listing_cut_at_its_limit_still_resolves_what_the_task_names(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    """The listing ends 141 when `head` cuts it (pipefail): what it listed still counts.
    "conf.d" looks like a file; the listing, cut in the crowd beside it, shows a folder."""
    (workspace / "conf.d").mkdir()
    for name in ("a.conf", "b.conf"):
        (workspace / "conf.d" / name).touch()
    crowd = workspace / "crowd"
    crowd.mkdir()
    for i in range(3100):
        (crowd / f"f{i}").touch()
    folder = workspace / "conf.d"
    outcome, _, backend = run(
        f"how many entries does {folder} have",
        [use("count_entries", dir=str(folder))],
        sandbox,
        book,
        workspace,
    )
    assert outcome.summary == "2"
    gbnf = format_of(backend).gbnf
    assert gbnf.index(f'"\\"{folder}\\""') < gbnf.index(f'"\\"{workspace}\\""')


def test_a_file_slot_with_a_default_is_offered_no_folder_and_a_required_one_is() -> None:
    from shellagent.recipes import Recipe, Slot
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.shortlist import make_offer
    from shellagent.recipes.values import task_values

    values = task_values(read_task("check the sums in my Downloads"), ["./Downloads/"])
    sums = Recipe(
        "checksum_mismatch",
        "files whose checksum differs",
        "question",
        ("x",),
        ("cd {dir} && sha256sum -c {sums}",),
        {"dir": Slot("dir", "dir", default="."), "sums": Slot("sums", "file", default="SUMS")},
    )
    offered = {s.name: s.values() for s in make_offer(sums, values).slots}
    assert offered == {"dir": ("Downloads", "."), "sums": ("SUMS",)}
    stat = Recipe(
        "permission_query",
        "a path's mode",
        "question",
        ("x",),
        ("stat -c %a {file}",),
        {"file": Slot("file", "file")},
    )
    assert make_offer(stat, values).slots[0].values() == ("Downloads",)


def test_a_column_is_chosen_from_the_header_of_the_file_the_task_names(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    """The file is read (confined) before the model is asked: its columns are the key
    slot's values, those holding numbers first for a sum."""
    (workspace / "expenses.csv").write_text(
        "date,category,amount\n2024-01-03,food,12\n2024-01-05,rent,7.5\n"
    )
    outcome, _, backend = run(
        "how much does expenses.csv come to in total?",
        [use("csv_column_total", file="expenses.csv", field="amount")],
        sandbox,
        book,
        workspace,
    )
    assert outcome.summary == "19.5"
    gbnf = format_of(backend).gbnf
    # the field slot's rule: the file's columns, numbers first; not the file's own name
    (rule,) = [line for line in gbnf.splitlines() if line.startswith("r0-csv-column-total-v1 ")]
    assert '"\\"amount\\""' in rule and '"\\"date\\""' in rule
    assert rule.index('"\\"amount\\""') < rule.index('"\\"date\\""')
    assert "expenses.csv" not in rule


def test_a_column_the_task_says_of_its_file_is_marked_for_the_ranker() -> None:
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.shortlist import _fields_marked
    from shellagent.recipes.values import task_values

    task = "What version is the shop at, according to its package.json?"
    reading = read_task(task)
    values = replace(task_values(reading), fields=("name", "version", "scripts.test"))
    marked = "What version qfield is the shop at, according to its package.json?"
    assert _fields_marked(reading, values) == (marked, marked)
    assert _fields_marked(reading, task_values(reading)) == (task, task)  # the file unread


def test_a_pick_is_not_narrowed_to_a_selection_the_task_cannot_tell_its_dates() -> None:
    from shellagent.recipes import DATA_DIR
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.shortlist import _described_picks
    from shellagent.recipes.values import task_values

    catalog = load([DATA_DIR])
    recipes = dict(catalog.recipes)
    shipped = RecipeBook(recipes, Ranker.train(list(recipes.values())))
    reading = read_task("Which file in my Documents did I change most recently?")
    assert reading.pick == "newest"
    found = _described_picks(shipped, shipped.recipes, reading, task_values(reading))
    offered = [c.name for c in found]
    # "files changed between two dates" fits "did I change" but needs dates it never says
    assert "files_changed_between" not in offered
    assert "files_under" in offered


@pytest.mark.parametrize("writes_commands", [True, False])
def test_a_model_that_writes_commands_well_may_call_the_shortlist_as_tools(
    writes_commands: bool, book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    backend = ScriptedBackend(
        [
            use("largest_files", dir="big", count="0; rm -rf ~"),  # refused by its type
            use("largest_files", dir="big", count="1"),  # a tool call in the free loop
            '{"done": "huge.bin"}',
        ],
        writes_commands=writes_commands,
    )
    sink = MemorySink()
    run_task(
        "which 1 files in big are the largest",
        Parts(
            backend=backend,
            shell=sandbox,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0),
            recipes=book,
        ),
        Oversight(approver=AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=threading.Event()),
    )
    free_format = format_of(backend, 1)
    ran = [e.command for e in sink.of_type(Execution)]
    if writes_commands:
        assert free_format.name == "action+use"
        assert "Verified commands you may use" in backend.calls[1][-1]["content"]
        assert ran == ["ls -S big | head -n 1"]  # the tool's rendering, its values typed
    else:
        assert free_format.name == "action" and ran == []  # no tools: the reply is refused


@pytest.mark.parametrize("folder", ["~/Downloads-{hex}", "/srv/nothing-here-{hex}"])
def test_a_question_about_a_folder_that_is_not_there_says_so_and_answers_of_no_other(
    book: RecipeBook, sandbox: Sandbox, workspace: Path, folder: str
) -> None:
    """On a fresh account "find the five largest files in ~/Downloads" listed the working
    directory (the default "." ran cleanly where ~/Downloads failed) as if it were it."""
    import uuid

    named = folder.format(hex=uuid.uuid4().hex[:8])
    outcome, sink, _ = run(
        f"which 5 files in {named} are the largest",
        [use("largest_files", dir=".", count="5")] * 2,  # the model takes the default
        sandbox,
        book,
        workspace,
    )
    assert outcome.summary == f"{named} does not exist"
    assert outcome.reason == "finished" and not outcome.claimed
    assert sink.of_type(Execution) == []  # nothing listed in its place
    there = str(workspace / "big")  # a folder that is there, named the same way: answered
    here, _, _ = run(
        f"which 1 files in {there} are the largest",
        [use("largest_files", dir=there, count="1")],
        sandbox,
        book,
        workspace,
    )
    assert here.summary == "huge.bin" and here.claimed


def test_ctrl_c_while_the_model_fills_a_recipe_runs_nothing_after_it(
    book: RecipeBook, workspace: Path
) -> None:
    """The recipe step's fill has no token callback of the loop's: a Ctrl-C while it
    generated used to let its command run, then say it was cancelled while running."""
    cancel = threading.Event()

    def pressed_while_thinking(messages: list[dict[str, str]]) -> str:
        cancel.set()  # the user presses Ctrl-C; the reply is complete all the same
        return use("largest_files", dir="big", count="1")

    fake = FakeShell({"ls -S big | head -n 1": ("huge.bin\n", 0)}, cwd=str(workspace))
    sink = MemorySink()
    outcome = run_task(
        "which 1 files in big are the largest",
        Parts(
            backend=ScriptedBackend([pressed_while_thinking]),
            shell=fake,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0),
            recipes=book,
        ),
        Oversight(approver=AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=cancel),
    )
    assert "ls -S big | head -n 1" not in fake.ran and sink.of_type(Execution) == []
    assert outcome.reason == "cancelled"
    assert outcome.summary == "cancelled before `ls -S big | head -n 1` ran; it did not run"


@pytest.mark.parametrize("writes_commands", [False, True])
def test_a_recipe_that_ran_and_failed_ends_not_done_unless_the_model_writes_commands_well(
    writes_commands: bool, book: RecipeBook, workspace: Path
) -> None:
    """A small model's own commands after a failed recipe solved nothing measured: the
    session ends there, not done, saying how the command failed, with the next recipes.
    A model that writes commands well still gets its turn (with the shortlist as tools)."""
    fake = FakeShell(
        {"wc -l < notes.txt": ("bash: notes.txt: Permission denied\n", 1)},
        default=("no such thing\n", 2),
        cwd=str(workspace),
    )
    backend = ScriptedBackend(
        [use("count_lines", file="notes.txt"), cmd("cat notes.txt | wc -l"), '{"done": "3"}'],
        writes_commands=writes_commands,
    )
    outcome = run_task(
        "how many lines are in notes.txt",
        Parts(
            backend=backend,
            shell=fake,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0),
            recipes=book,
        ),
        Oversight(approver=AutoApprover()),
        Recording(sink=MemorySink()),
        Hooks(cancel=threading.Event()),
    )
    assert "wc -l < notes.txt" in fake.ran
    if writes_commands:
        assert "cat notes.txt | wc -l" in fake.ran and len(backend.calls) >= 2
        return
    assert len(backend.calls) == 1  # the model filled the recipe and was asked nothing more
    assert "cat notes.txt | wc -l" not in fake.ran
    assert outcome.reason == "finished" and not outcome.claimed
    # what ran in the recipe's plain words, and how it failed: the last line says "not done"
    assert outcome.summary.endswith(
        ": the command failed (exit code 1): bash: notes.txt: Permission denied"
    ), outcome.summary
    assert "notes.txt" in outcome.summary.split(": the command failed")[0]
    assert not outcome.doubts and not outcome.ran
