"""Know when it knows: a recipe's result is claimed only when what was observed supports
it. Checked on the pure weighing (``agent/confidence.py``) and end to end through the
loop with a scripted model and a real sandbox: a wrong shape is never presented as done,
the doubt says what ran in plain words, and the next recipes are offered."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import AgentConfig, AutoApprover, Hooks, Oversight, Parts, Recording, run_task
from shellagent.agent.claims import CLAIM_SCORE
from shellagent.agent.confidence import (
    Confidence,
    Doubt,
    Entry,
    Expected,
    Ranking,
    Snapshot,
    action_doubts,
    limit_doubts,
    question_doubts,
    read_snapshot,
    unsaid_doubts,
    unused_names,
)
from shellagent.agent.recipe_step import RecipeBook
from shellagent.events import End, ModelTurn
from shellagent.policy import PolicyEngine
from shellagent.recipes import load
from shellagent.recipes.rank import Ranker
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

SURE = Ranking(score=0.8, margin=1.0, confident=True)
FILE = Entry("f", "10", "644", "1.0")
FOLDER = Entry("d", "4096", "755", "1.0")


def snap(**entries: Entry) -> Snapshot:
    return Snapshot("/home/u", "/home/u", {k.replace("__", "/"): v for k, v in entries.items()})


# -- the weighing ---------------------------------------------------------------------------


def test_a_list_is_no_answer_to_how_many() -> None:
    wanted = Expected(count=True)
    assert question_doubts(wanted, "12\n") == []
    assert question_doubts(wanted, "12 total") == []
    doubts = question_doubts(wanted, "a.txt\nb.txt\n")
    assert [d.check for d in doubts] == ["count"]
    assert question_doubts(Expected(), "a.txt\nb.txt\n") == []


def test_a_named_file_the_command_never_used_is_a_doubt() -> None:
    wanted = Expected(named=("budget.xlsx",))
    assert unused_names(wanted, "du -sh *", "4.0K\tdocs\n") != []
    assert unused_names(wanted, "find ~ -name budget.xlsx", "") == []
    assert unused_names(wanted, "du -sh *", "8K\tbudget.xlsx\n") == []  # in the answer
    home = Expected(named=("~/Downloads",))
    assert unused_names(home, "find /home/u/Downloads -type f", "", home="/home/u") == []
    assert unused_names(home, "find . -type f", "", home="/home/u") != []


def test_a_limit_the_request_sets_that_what_ran_ignores_is_a_doubt() -> None:
    from shellagent.agent.claims import expected
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    said = "Archive all files in /data/sessions older than 30 days into /tmp/old.tar.gz"
    wanted = expected(task_values(read_task(said)))
    assert wanted.limits == (("age", ">30d"),)
    whole = "tar -czf /tmp/old.tar.gz -C /data/sessions ."
    assert [d.check for d in limit_doubts(wanted, whole)] == ["limit"]
    assert limit_doubts(wanted, "find /data/sessions -type f -mtime +30 -print0 | tar …") == []
    big = expected(task_values(read_task("list the files in /srv bigger than 100MB")))
    assert [d.check for d in limit_doubts(big, "ls /srv")] == ["limit"]
    assert limit_doubts(big, "find /srv -type f -size +100M") == []
    # a size or an age only mentioned, with no direction, sets no limit
    assert expected(task_values(read_task("how big is /srv/x.iso"))).limits == ()


def test_a_destination_folder_made_as_a_file_is_a_doubt() -> None:
    wanted = Expected(folders=("~/Desktop",))
    before = snap()
    as_file = snap(**{"/home/u/Desktop": FILE})
    as_folder = snap(**{"/home/u/Desktop": FOLDER, "/home/u/Desktop/cv.pdf": FILE})
    assert [d.check for d in action_doubts(wanted, "files", before, as_file)] == ["not-a-folder"]
    assert action_doubts(wanted, "files", before, as_folder) == []


def test_deleting_files_of_another_kind_than_asked_is_a_doubt() -> None:
    wanted = Expected(kinds=("tmp",))
    before = snap(
        **{"/home/u/a.tmp": FILE, "/home/u/b~": FILE, "/home/u/.c.swp": FILE, "/home/u/k": FILE}
    )
    only_tmp = snap(**{"/home/u/b~": FILE, "/home/u/.c.swp": FILE, "/home/u/k": FILE})
    more = snap(**{"/home/u/k": FILE})
    assert action_doubts(wanted, "files", before, only_tmp) == []
    doubts = action_doubts(wanted, "files", before, more)
    assert [d.check for d in doubts] == ["other-kinds"]
    assert "b~" in doubts[0].says and ".c.swp" in doubts[0].says


def test_a_file_recipe_that_changed_nothing_is_a_doubt_but_a_process_one_is_not() -> None:
    same = snap(**{"/home/u/a": FILE})
    assert [d.check for d in action_doubts(Expected(), "renames", same, same)] == ["unchanged"]
    assert action_doubts(Expected(), "procs", same, same) == []


def test_an_empty_archive_and_one_without_the_folder_are_doubts() -> None:
    before, after = snap(), snap(**{"/home/u/b.tgz": FILE})
    packed = Expected(packed=("~/Documents",))
    assert action_doubts(packed, "archives", before, after, ("b.tgz", ["Documents/a"])) == []
    empty = action_doubts(packed, "archives", before, after, ("b.tgz", []))
    assert "archive" in [d.check for d in empty]
    other = action_doubts(packed, "archives", before, after, ("b.tgz", ["Music/a"]))
    assert [d.check for d in other] == ["archive"]


def test_only_blocking_doubts_keep_a_result_from_being_claimed() -> None:
    assert Confidence(SURE).claimed
    from shellagent.agent.confidence import Doubt

    assert not Confidence(SURE, (Doubt("count", "x"),)).claimed


def test_a_snapshot_reads_find_lines_into_absolute_paths() -> None:
    lines = [
        "HOME\t/home/u",
        "PWD\t/home/u/work",
        "d\t4096\t755\t1.5\t.",
        "f\t3\t644\t1.5\t./a.txt",
        "f\t3\t644\t1.5\t/home/u/Desktop",
    ]
    shot = read_snapshot(lines)
    assert set(shot.entries) == {"/home/u/work", "/home/u/work/a.txt", "/home/u/Desktop"}
    assert shot.absolute("~/Desktop") == "/home/u/Desktop"


# -- end to end ------------------------------------------------------------------------------

RECIPES = """
area = "files"

[[recipe]]
name = "copy_file_to"
summary = "copy a file to another place"
kind = "action"
phrasings = [
  "copy {file} to {dest}",
  "put a copy of {file} in {dest}",
  "duplicate {file} into {dest}",
  "make a copy of {file} at {dest}",
  "copy the file {file} over to {dest}",
]
templates = ["cp {file} {dest}"]
[recipe.slots]
file = { type = "file" }
dest = { type = "path" }

[[recipe]]
name = "list_files"
summary = "the files of a folder, one per line"
kind = "question"
phrasings = [
  "list the files in {dir}",
  "how many files are in {dir}",
  "what files does {dir} have",
  "show the files of {dir}",
  "which files are in {dir}",
]
templates = ["ls -1 {dir}"]
[recipe.slots]
dir = { type = "dir", default = "." }

[[recipe]]
name = "count_files"
summary = "how many files a folder has"
kind = "question"
phrasings = [
  "count the files in {dir}",
  "number of files in {dir}",
  "tally the files of {dir}",
  "files in {dir}, how many",
  "give me the file count of {dir}",
]
templates = ["ls -1 {dir} | wc -l"]
[recipe.slots]
dir = { type = "dir", default = "." }
"""


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "files.toml").write_text(RECIPES)
    catalog = load([folder])
    assert not catalog.problems, catalog.problems
    recipes = dict(catalog.recipes)
    # confident: the ranking never doubts, only the result's shape can
    return RecipeBook(recipes, Ranker.train(list(recipes.values())), confident=-99.0)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    (ws / "docs").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / "docs" / name).write_text("x\n")
    (ws / "resume.pdf").write_text("cv\n")
    return ws


@pytest.fixture
def sandbox(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as session:
        yield session


def run(task: str, reply: str, shell: Any, book: RecipeBook, workspace: Path) -> Any:
    sink = MemorySink()
    outcome = run_task(
        task,
        Parts(
            backend=ScriptedBackend([reply, '{"done": "ok"}']),
            shell=shell,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0),
            recipes=book,
        ),
        Oversight(approver=AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=threading.Event()),
    )
    return outcome, sink


def use(name: str, **args: str) -> str:
    return json.dumps({"use": name, "args": args})


def test_a_count_answered_with_a_list_is_not_claimed_and_says_what_ran(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink = run(
        "how many files are in docs?", use("list_files", dir="docs"), sandbox, book, workspace
    )
    assert outcome.reason == "finished"
    assert not outcome.claimed
    assert outcome.ran.startswith("the files of a folder")
    assert any("how many" in d for d in outcome.doubts)
    # the next recipe that fits is offered, tried at once (read-only) with its output
    offered = {a.recipe: a for a in outcome.alternatives}
    assert "count_files" in offered
    assert offered["count_files"].output == "3"
    end = sink.of_type(End)[0]
    assert end.claimed is False and end.doubts == outcome.doubts


def test_a_clean_count_is_claimed(book: RecipeBook, sandbox: Sandbox, workspace: Path) -> None:
    outcome, sink = run(
        "count the files in docs", use("count_files", dir="docs"), sandbox, book, workspace
    )
    assert outcome.reason == "finished" and outcome.claimed, outcome.doubts
    assert outcome.summary.strip() == "3"
    assert outcome.alternatives == ()
    ranking = json.loads(sink.of_type(ModelTurn)[0].action["ranking"])
    assert ranking["confident"] is True


def test_a_copy_that_makes_a_file_where_a_folder_was_meant_is_not_claimed(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, _ = run(
        f"put a copy of resume.pdf in {workspace}/Desktop",
        use("copy_file_to", file="resume.pdf", dest=f"{workspace}/Desktop"),
        sandbox,
        book,
        workspace,
    )
    assert outcome.reason == "finished"
    assert not outcome.claimed
    assert any("is now a file, not a folder" in d for d in outcome.doubts), outcome.doubts


def test_the_free_loop_never_claims(book: RecipeBook, sandbox: Sandbox, workspace: Path) -> None:
    none_fit = RecipeBook(book.recipes, book.ranker, fits=99.0)
    sink = MemorySink()
    outcome = run_task(
        "say hello",
        Parts(
            backend=ScriptedBackend(['{"cmd": "echo hello"}', '{"done": "said hello"}']),
            shell=sandbox,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0),
            recipes=none_fit,
        ),
        Oversight(approver=AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=threading.Event()),
    )
    assert outcome.reason == "finished" and not outcome.claimed
    assert outcome.doubts


def test_an_answer_saved_to_a_file_is_not_claimed(
    book: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, _ = run(
        "count the files in docs and save the count to count.txt",
        use("count_files", dir="docs"),
        sandbox,
        book,
        workspace,
    )
    assert outcome.reason == "finished" and outcome.summary.startswith("Saved to count.txt")
    assert not outcome.claimed
    assert any("as the recipe prints it" in d for d in outcome.doubts)


# -- the shape of an answer to what was asked ------------------------------------------------


def wanted_by(task: str) -> Expected:
    from shellagent.agent.claims import expected
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    return expected(task_values(read_task(task)))


def checks(doubts: list[Doubt]) -> list[str]:
    return [d.check for d in doubts]


def test_the_size_of_a_folder_inside_the_one_asked_is_a_doubt() -> None:
    wanted = wanted_by("How much space does my Music folder take?")
    assert wanted.size_of == "Music"
    doubts = question_doubts(wanted, "3.0M\tMusic/album/\n")
    assert checks(doubts) == ["part"] and "inside Music" in doubts[0].says
    # one size a line for each folder inside: no total among them
    several = question_doubts(wanted, "3.0M\tMusic/album/\n1.0M\tMusic/live/\n")
    assert checks(several) == ["part"] and "2 sizes" in several[0].says
    assert question_doubts(wanted, "4.0M\tMusic\n") == []
    assert question_doubts(wanted, "4.0M\n") == []
    # du without -s ends on the folder itself, du -c on a total: the total is there
    assert question_doubts(wanted, "3.0M\tMusic/album\n4.0M\tMusic\n") == []
    assert question_doubts(wanted, "3.0M\tMusic/album\n3.0M\ttotal\n") == []
    # the sizes of the folders inside are what is asked here
    assert wanted_by("how big are the folders in ~/Music?").size_of == ""
    assert wanted_by("which folder in ~/Music takes the most space?").size_of == ""


def test_a_newest_file_of_another_kind_than_asked_is_a_doubt() -> None:
    wanted = wanted_by("what is the latest document in ~/work?")
    doubts = question_doubts(wanted, "holiday.jpg\n")
    assert checks(doubts) == ["kind"] and "holiday.jpg" in doubts[0].says
    assert question_doubts(wanted, "/home/u/work/letter.odt\n") == []
    photos = wanted_by("which are the 2 newest photos in ~/Pictures")
    assert question_doubts(photos, "a.png\nb.JPG\n") == []  # a photo is more than a .jpg
    assert checks(question_doubts(photos, "a.png\nnotes.txt\n")) == ["kind"]
    # a name without an extension says nothing; a rotated log is still a log
    logs = wanted_by("which is the newest log in /var/log")
    assert question_doubts(logs, "syslog\n") == [] and question_doubts(logs, "app.log.1\n") == []
    # the lines of a log are no list of files, whatever file a line ends on
    entries = wanted_by("show the latest log entries in app.log")
    assert question_doubts(entries, "12:00 started\n12:01 loaded config.yaml\n") == []
    # no kind asked, or a folder named by a kind's word: any file answers
    assert question_doubts(wanted_by("the newest file in my Documents folder"), "a.ods") == []


def test_a_sum_answered_by_counting_lines_is_a_doubt() -> None:
    wanted = wanted_by("What do the amounts in ~/Documents/expenses.csv add up to?")
    assert wanted.sum
    counted = question_doubts(wanted, "4\n", "wc -l < ~/Documents/expenses.csv")
    assert checks(counted) == ["sum"] and "wc -l" in counted[0].says
    assert checks(question_doubts(wanted, "4", "grep -c , expenses.csv")) == ["sum"]
    summed = "awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' ~/Documents/expenses.csv"
    assert question_doubts(wanted, "61.5\n", summed) == []
    # lines added up are a count, and a count asked is no sum
    assert not wanted_by("add up the lines of the .py files in src").sum
    assert not wanted_by("what is the total number of files in /srv").sum


def test_more_lines_than_the_top_few_asked_is_a_doubt() -> None:
    wanted = wanted_by("what are the top 3 IP addresses in ~/logs/access.log?")
    assert wanted.at_most == 3
    every = question_doubts(wanted, "10.0.0.1\n10.0.0.2\n10.0.0.3\n10.0.0.4\n")
    assert checks(every) == ["many"] and "3 were asked for" in every[0].says
    assert question_doubts(wanted, "5 10.0.0.1\n4 10.0.0.2\n3 10.0.0.3\n") == []
    # du -c's last line is a total, not one more folder
    five = wanted_by("Show me the 5 biggest folders in /srv")
    sizes = "".join(f"{n}M\t/srv/{n}\n" for n in range(5)) + "15M\ttotal\n"
    assert question_doubts(five, sizes) == []


def test_an_amount_the_request_never_said_is_a_doubt() -> None:
    types = {"dir": "dir", "days": "days", "dest": "dir"}
    guessed = wanted_by("Identify the 5 oldest files in /srv/tmp and move them to /srv/old")
    doubts = unsaid_doubts(types, {"dir": "/srv/tmp", "days": "30"}, guessed.amounts)
    assert checks(doubts) == ["unsaid"] and "days 30" in doubts[0].says
    said = wanted_by("move the files older than a month from /srv/tmp to /srv/old")
    assert unsaid_doubts(types, {"dir": "/srv/tmp", "days": "30"}, said.amounts) == []
    week = wanted_by("which files in /srv changed in the last week")
    assert unsaid_doubts(types, {"days": "7"}, week.amounts) == []
    assert checks(unsaid_doubts({"size": "size"}, {"size": "100M"}, week.amounts)) == ["unsaid"]


def test_a_text_looked_for_that_the_request_never_said_is_a_doubt() -> None:
    types = {"file": "file", "pattern": "pattern"}
    wanted = wanted_by("When did the app in /srv last start, according to /srv/app.log?")
    guessed = unsaid_doubts(types, {"pattern": "s"}, wanted.amounts, wanted.said)
    assert checks(guessed) == ["unsaid"] and "'s'" in guessed[0].says
    assert unsaid_doubts(types, {"pattern": "start"}, wanted.amounts, wanted.said) == []
    errors = wanted_by("show the last of the errors in /srv/app.log")
    assert unsaid_doubts(types, {"pattern": "ERROR"}, errors.amounts, errors.said) == []


def test_a_count_of_zero_by_a_name_pattern_says_what_matched_nothing() -> None:
    from shellagent.agent.confidence import nothing_counted

    wanted = Expected(count=True)
    by_name = "find ~/Pictures -maxdepth 1 -type f -name '*.jpg' | wc -l"
    assert nothing_counted(wanted, by_name, "0\n") == ("*.jpg",)
    assert nothing_counted(wanted, "ls ~/Pictures/*.JPG | wc -l", "0") == ("*.JPG",)
    assert nothing_counted(wanted, by_name, "3\n") == ()  # something matched
    assert nothing_counted(wanted, "ls ~/Pictures | wc -l", "0") == ()  # no name selected
    assert nothing_counted(Expected(), by_name, "0") == ()  # no count asked


SHAPE_RECIPES = """
area = "files"

[[recipe]]
name = "subfolder_sizes"
summary = "the space each folder inside a folder takes"
kind = "question"
phrasings = [
  "how much space does my {dir} folder take",
  "sizes of the subfolders of {dir}",
  "how big is every folder inside {dir}",
  "disk usage per subfolder of {dir}",
  "list the folders in {dir} with their sizes",
]
templates = ["du -sh {dir}/*/"]
[recipe.slots]
dir = { type = "dir" }

[[recipe]]
name = "folder_size"
summary = "the space a folder takes in all"
kind = "question"
phrasings = [
  "how big is {dir} in total",
  "how big is {dir}",
  "total size of {dir}",
  "disk usage of {dir}",
  "how much room does {dir} use",
]
templates = ["du -sh {dir}"]
[recipe.slots]
dir = { type = "dir" }

[[recipe]]
name = "newest_file"
summary = "the file of a folder changed last"
kind = "question"
phrasings = [
  "what is the newest file in {dir}",
  "which file in {dir} changed last",
  "the latest file in {dir}",
  "most recently modified file in {dir}",
  "what did I save last in {dir}",
]
templates = ["ls -t {dir} | head -n 1"]
[recipe.slots]
dir = { type = "dir" }

[[recipe]]
name = "count_by_ext"
summary = "how many files of a folder end in an extension"
kind = "question"
phrasings = [
  "how many {ext} files are in {dir}",
  "count the {ext} files in {dir}",
  "number of {ext} files in {dir}",
  "how many photos are in {dir}",
  "tally the {ext} files of {dir}",
]
templates = ["find {dir} -type f -name '*.{ext}' | wc -l"]
[recipe.slots]
dir = { type = "dir" }
ext = { type = "ext" }

[[recipe]]
name = "count_lines"
summary = "how many lines a file has"
kind = "question"
phrasings = [
  "what do the entries in {file} add up to",
  "how many lines does {file} have",
  "count the lines of {file}",
  "line count of {file}",
  "number of lines in {file}",
  "how long is {file} in lines",
]
templates = ["wc -l < {file}"]
[recipe.slots]
file = { type = "file" }

[[recipe]]
name = "sum_column"
summary = "the total of a CSV file's Nth column (skips the header)"
kind = "question"
phrasings = [
  "sum column {col} of {file}",
  "the total of column {col} in {file}",
  "add up the numbers in column {col} of {file}",
  "what is the sum of {file}'s column {col}",
]
templates = ["awk -F, 'NR > 1 { s += ${col} } END { print s + 0 }' {file}"]
[recipe.slots]
file = { type = "file" }
col = { type = "number" }
"""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    folder = tmp_path_factory.mktemp("shape-recipes")
    (folder / "files.toml").write_text(SHAPE_RECIPES)
    catalog = load([folder])
    assert not catalog.problems, catalog.problems
    recipes = dict(catalog.recipes)
    return RecipeBook(recipes, Ranker.train(list(recipes.values())), confident=-99.0)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    ws = tmp_path / "home"
    (ws / "Music" / "album").mkdir(parents=True)
    (ws / "Music" / "album" / "a.mp3").write_bytes(b"\0" * 300_000)
    (ws / "Music" / "b.mp3").write_bytes(b"\0" * 200_000)
    (ws / "Pictures").mkdir()
    (ws / "Pictures" / "beach.png").write_bytes(b"\x89PNG")
    (ws / "Nothing").mkdir()
    for folder, older, newer in (
        ("Documents", "letter.pdf", "holiday.jpg"),
        ("Papers", "a.ods", "b.pdf"),
    ):
        (ws / folder).mkdir()
        (ws / folder / older).write_text("x\n")
        (ws / folder / newer).write_text("y\n")
        os.utime(ws / folder / older, (1_700_000_000, 1_700_000_000))
    (ws / "expenses.csv").write_text("what,amount\nrent,40\nfood,20\ncoffee,1.5\n")
    return ws


@pytest.fixture
def home_shell(home: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=home), timeout=10) as session:
        yield session


@pytest.mark.parametrize(
    ("task", "reply", "said"),
    [
        (
            "how much space does my Music folder take?",
            use("subfolder_sizes", dir="Music"),
            "inside Music, not of Music in all",
        ),
        (
            "what is the latest document in Documents?",
            use("newest_file", dir="Documents"),
            "it answered holiday.jpg, not a .pdf",
        ),
        (
            "what do the amounts in expenses.csv add up to?",
            use("count_lines", file="expenses.csv"),
            "a sum was asked, and what ran counted lines (wc -l)",
        ),
        (
            "how many photos are in Pictures?",
            use("count_by_ext", dir="Pictures", ext="jpg"),
            "counted 0: nothing matched *.jpg in Pictures",
        ),
        (
            "which file in Music did I change last?",
            use("newest_file", dir="Music"),
            "it looked only at the files directly in Music; its subfolders hold more",
        ),
    ],
)
def test_an_answer_of_another_shape_than_asked_is_not_claimed_and_says_what_ran(
    task: str, reply: str, said: str, shapes: RecipeBook, home_shell: Sandbox, home: Path
) -> None:
    outcome, sink = run(task, reply, home_shell, shapes, home)
    assert outcome.reason == "finished" and not outcome.claimed
    recipe = json.loads(reply)["use"]
    assert outcome.ran.startswith(shapes.recipes[recipe].summary)  # in plain words
    assert any(said in d for d in outcome.doubts), outcome.doubts
    # the ranking was sure: the answer's shape alone keeps it from being claimed
    ranking = json.loads(sink.of_type(ModelTurn)[0].action["ranking"])
    assert ranking["score"] >= CLAIM_SCORE


def test_the_top_of_a_folder_is_enough_when_the_request_says_so(
    shapes: RecipeBook, home_shell: Sandbox, home: Path
) -> None:
    task = "which file directly in Music did I change last?"
    outcome, _ = run(task, use("newest_file", dir="Music"), home_shell, shapes, home)
    assert not any("directly in" in d for d in outcome.doubts), outcome.doubts


@pytest.mark.parametrize(
    ("task", "reply", "answer"),
    [
        ("how big is Music in total?", use("folder_size", dir="Music"), "Music"),
        ("what is the latest document in Papers?", use("newest_file", dir="Papers"), "b.pdf"),
        ("sum column 2 of expenses.csv", use("sum_column", file="expenses.csv", col="2"), "61.5"),
        # a folder that holds no file at all: 0 is the answer
        ("how many photos are in Nothing?", use("count_by_ext", dir="Nothing", ext="jpg"), "0"),
    ],
)
def test_an_answer_of_the_shape_asked_is_claimed(
    task: str, reply: str, answer: str, shapes: RecipeBook, home_shell: Sandbox, home: Path
) -> None:
    outcome, _ = run(task, reply, home_shell, shapes, home)
    assert outcome.reason == "finished" and outcome.claimed, outcome.doubts
    assert outcome.summary.strip().endswith(answer)


def test_an_alternative_takes_what_the_model_gave_the_recipe_that_ran() -> None:
    """A slot the task names no value for (a pattern read in other words) is filled, in
    the recipes offered after the one that ran, with what the model gave that recipe for a
    slot of the same name and type; a value the task names comes first, and a value of
    another type is not taken."""
    from shellagent.agent.trying import fill_first
    from shellagent.recipes import DATA_DIR
    from shellagent.recipes.reading import read_task
    from shellagent.recipes.values import task_values

    recipe = load([DATA_DIR]).recipes["count_matching_lines"]
    values = task_values(read_task("how many lines of /srv/app.log went wrong?"))
    assert fill_first(recipe, values) is None  # no pattern in the task's words
    given = {"pattern": ("pattern", "ERROR"), "file": ("file", "/etc/other.log")}
    filled = fill_first(recipe, values, given)
    assert filled is not None
    assert dict(filled[1]) == {"file": "/srv/app.log", "pattern": "ERROR"}
    assert fill_first(recipe, values, {"pattern": ("text", "ERROR")}) is None
