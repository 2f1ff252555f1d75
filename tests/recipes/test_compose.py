"""Find-then-act recipes: a question recipe's plain ``find`` joined with a fixed ending
(delete, move, copy, gzip, one archive), rendered with typed, quoted values and run for
real on a temporary tree."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from shellagent.recipes import Recipe, Slot, SlotError, render
from shellagent.recipes.compose import (
    COUNT,
    ENDINGS,
    PICKS,
    Ending,
    Pick,
    compose,
    compose_pick,
    is_selection,
    names_of,
    narrowed,
    pick_named,
)
from shellagent.recipes.reading import read_task


def ending_for(task: str) -> Ending | None:
    """The ending the task's reading asks for."""
    return ENDINGS.get(read_task(task).ending)


def pick_for(task: str) -> Pick | None:
    """The pick the task's reading asks for."""
    return pick_named(read_task(task).pick)


SMALL = Recipe(
    "find_smaller_than",
    "files in a folder smaller than a size",
    "question",
    ("files in {dir} smaller than {size}",),
    ("find {dir} -type f -size -{size} | sort",),
    {"dir": Slot("dir", "dir", default="."), "size": Slot("size", "size")},
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "big.bin").write_bytes(b"x" * 4096)
    (tmp_path / "src" / "small.txt").write_text("x\n")
    (tmp_path / "src" / "sub" / "tiny.log").write_text("y\n")
    return tmp_path


def bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("task", "ending"),
    [
        ("Remove all files in /srv/tmp that are smaller than 1KB", "delete"),
        ("Locate and delete the empty files in /tmp/junk", "delete"),
        ("Find logs older than 30 days and move them to /archive", "move"),
        ("Find the PDFs larger than 1MB and copy them to /backup", "copy"),
        (
            "Compress all reports older than 30 days into a single archive named 'old.tar.gz'",
            "archive",
        ),
        ("Compress all files larger than 100MB into individual '.gz' files", "gzip"),
        ("Combine all log files from the last week into a single file named 'w.txt'", "concat"),
        ("Concatenate the .csv files into /tmp/all.csv", "concat"),
        ("Combine the reports into a single archive named 'r.tar.gz'", "archive"),
        ("Which files in /srv are empty?", None),
    ],
)
def test_the_ending_is_the_verb_the_task_says(task: str, ending: str | None) -> None:
    found = ending_for(task)
    assert (found.name if found else None) == ending


def test_only_a_plain_find_that_lists_files_is_a_selection() -> None:
    assert is_selection(SMALL)
    printed = Recipe("x", "x", "question", (), ("find {dir} -type f -printf '%s\\n'",), SMALL.slots)
    piped = Recipe("x", "x", "question", (), ("find {dir} -type f | wc -l",), SMALL.slots)
    action = Recipe("x", "x", "action", (), SMALL.templates, SMALL.slots)
    for other in (printed, piped, action):
        assert not is_selection(other)
        assert compose(other, ENDINGS["delete"]) is None


def test_each_ending_acts_on_exactly_the_selection(tree: Path) -> None:
    args = {"dir": "src", "size": "2k"}
    deleted = compose(SMALL, ENDINGS["delete"])
    assert deleted is not None and deleted.kind == "action"
    out = bash(render(deleted, args), tree)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tree / "src").rglob("*") if p.is_file()) == ["big.bin"]


def test_move_and_archive_put_the_selection_where_the_task_says(tree: Path) -> None:
    moved = compose(SMALL, ENDINGS["move"])
    assert moved is not None
    out = bash(render(moved, {"dir": "src", "size": "2k", "dest": "old files"}), tree)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tree / "old files").iterdir()) == ["small.txt", "tiny.log"]
    assert (tree / "src" / "big.bin").exists()

    packed = compose(SMALL, ENDINGS["archive"])
    assert packed is not None
    (tree / "src" / "again.txt").write_text("z\n")
    out = bash(render(packed, {"dir": "src", "size": "2k", "archive": "small.tar.gz"}), tree)
    assert out.returncode == 0, out.stderr
    with tarfile.open(tree / "small.tar.gz") as tar:
        assert tar.getnames() == ["src/again.txt"]


def test_concat_joins_the_selection_even_into_a_file_it_selects(tree: Path) -> None:
    joined = compose(SMALL, ENDINGS["concat"])
    assert joined is not None and joined.kind == "action"
    (tree / "src" / "all.txt").write_text("stale\n")  # selected itself: read before written
    out = bash(render(joined, {"dir": "src", "size": "2k", "output": "src/all.txt"}), tree)
    assert out.returncode == 0, out.stderr
    # name order: src/all.txt (its old content), src/small.txt, src/sub/tiny.log
    assert (tree / "src" / "all.txt").read_text() == "stale\nx\ny\n"
    assert (tree / "src" / "big.bin").stat().st_size == 4096


@pytest.mark.parametrize("hostile", ["; rm -rf ~", "$(touch pwned)", "-rf", "a\nb", "`id`"])
def test_a_hostile_destination_stays_one_quoted_word(tree: Path, hostile: str) -> None:
    moved = compose(SMALL, ENDINGS["move"])
    assert moved is not None
    try:
        command = render(moved, {"dir": "src", "size": "2k", "dest": hostile})
    except SlotError:
        return  # the type refused it: never rendered
    bash(command, tree)
    assert not (tree / "pwned").exists()
    assert (tree / "src" / "big.bin").exists()


@pytest.mark.parametrize(
    ("task", "selection"),
    [
        (
            "The x service keeps files in '/var/x'. Remove all files older than 30 days to "
            "free up space.",
            "The x service keeps files in '/var/x'. find all files older than 30 days",
        ),
        (
            "Find the logs in /srv not modified for 30 days and delete them.",
            "Find the logs in /srv not modified for 30 days",
        ),
        (
            "Combine all log files from the last week into a single file named 'w.txt'",
            "find all log files from the last week",
        ),
        (
            "Compress all reports older than 30 days into one archive",
            "find all reports older than 30 days",
        ),
        (
            "Get rid of the empty files in /tmp/x, but keep the folders.",
            "find the empty files in /tmp/x",
        ),
    ],
)
def test_the_selection_is_what_the_task_says_of_the_files(task: str, selection: str) -> None:
    reading = read_task(task)
    assert reading.ending
    assert reading.selection == selection


def test_a_verb_that_is_not_asked_for_is_no_ending() -> None:
    task = "A backup script left files in /srv/tmp. Remove all files smaller than 1KB."
    found = ending_for(task)
    assert found is not None and found.name == "delete"
    assert ending_for("What's inside site.tar.gz? I don't want to unpack it.") is None


@pytest.mark.parametrize(
    ("task", "pick"),
    [
        ("Identify the largest file in /tmp and move it to /var/tmp", "largest"),
        ("Copy the most recent backup file in /backups to /tmp/latest.tar.gz", "newest"),
        ("Which file under /srv is the oldest?", "oldest"),
        ("Find the 10 largest files in /srv", None),
        ("What are the biggest files in /srv?", None),
        ("Which file has the most lines?", "longest"),
        ("Which .py file under /srv/tools has the most lines?", "longest"),
        ("What .conf file changed most recently in /etc?", "newest"),
        ("Which log files are the largest?", None),
        ("Show the longest line in app.log", None),
        ("Which five files in my Downloads folder are the largest?", None),
        ("What's the earliest date in ~/logs/app.log?", None),
        ("Remove backups older than 7 days, but keep the most recent 5 files.", None),
        ("What's the single biggest file anywhere in my home folder?", "largest"),
        ("Copy the log file with the most recent modification time to /tmp", "newest"),
    ],
)
def test_one_file_that_is_the_most_of_something_is_a_pick(task: str, pick: str | None) -> None:
    found = pick_for(task)
    assert (found.name if found else None) == pick


def test_a_pick_acts_on_that_one_file_only(tree: Path) -> None:
    (tree / "src" / "older.txt").write_text("o\n")
    os.utime(tree / "src" / "older.txt", (1_000_000, 1_000_000))
    newest = next(p for p in PICKS if p.name == "newest")
    largest = next(p for p in PICKS if p.name == "largest")
    copied = compose_pick(SMALL, largest, ENDINGS["copy"])
    assert copied is not None and copied.kind == "action"
    out = bash(render(copied, {"dir": "src", "size": "8k", "dest": "the one.bin"}), tree)
    assert out.returncode == 0, out.stderr
    assert (tree / "the one.bin").stat().st_size == 4096  # big.bin, the largest under 8k
    said = compose_pick(SMALL, newest, None)
    assert said is not None and said.kind == "question"
    os.utime(tree / "src" / "small.txt", (2_000_000_000, 2_000_000_000))
    out = bash(render(said, {"dir": "src", "size": "8k"}), tree)
    assert out.stdout == "src/small.txt\n"
    gone = compose_pick(SMALL, next(p for p in PICKS if p.name == "oldest"), ENDINGS["delete"])
    assert gone is not None
    assert bash(render(gone, {"dir": "src", "size": "8k"}), tree).returncode == 0
    assert not (tree / "src" / "older.txt").exists()
    assert (tree / "src" / "small.txt").exists() and (tree / "src" / "big.bin").exists()


def test_the_longest_file_is_counted_in_lines_whatever_its_name(tree: Path) -> None:
    (tree / "src" / "sub" / "tiny.log").write_text("1\n2\n3\n")
    # a name with a newline and a tab cannot forge a record of its own
    (tree / "src" / "x\n99999\tsmall.txt").write_text("1\n2\n")
    longest = next(p for p in PICKS if p.name == "longest")
    shortest = next(p for p in PICKS if p.name == "shortest")
    said = compose_pick(SMALL, longest, None)
    assert said is not None
    assert bash(render(said, {"dir": "src", "size": "8k"}), tree).stdout == "src/sub/tiny.log\n"
    gone = compose_pick(SMALL, shortest, ENDINGS["delete"])
    assert gone is not None
    out = bash(render(gone, {"dir": "src", "size": "8k"}), tree)
    assert out.returncode == 0, out.stderr
    assert not (tree / "src" / "big.bin").exists()  # no newline at all: 0 lines
    assert (tree / "src" / "small.txt").exists()


def test_the_newest_archive_is_unpacked_where_the_task_says(tree: Path) -> None:
    archives = tree / "backups"
    archives.mkdir()
    for name, stamp in (("old.tar.gz", 1_000_000), ("new.tar.gz", 2_000_000)):
        (tree / "payload.txt").write_text(name)
        with tarfile.open(archives / name, "w:gz") as tar:
            tar.add(tree / "payload.txt", arcname="payload.txt")
        os.utime(archives / name, (stamp, stamp))
    task = "Identify the most recent backup in backups and extract its contents to 'restored'."
    ending, pick = ending_for(task), pick_for(task)
    assert ending is not None and ending.name == "extract"
    assert pick is not None and pick.name == "newest"
    unpacked = compose_pick(SMALL, pick, ending)
    assert unpacked is not None
    out = bash(render(unpacked, {"dir": "backups", "size": "2M", "dest": "restored"}), tree)
    assert out.returncode == 0, out.stderr
    assert (tree / "restored" / "payload.txt").read_text() == "new.tar.gz"
    # the question's twin for text, not an archive: no extract ending
    assert ending_for("Extract the ERROR lines of app.log and save them to /tmp/e.txt") is None


@pytest.mark.parametrize(
    ("task", "counted"),
    [
        ("Count the number of log files modified in the last 24 hours", True),
        ("How many PDFs are stored anywhere under ~/Documents?", True),
        ("Count how many of these scripts are executable", True),
        ("Count how many times the word 'completed' appears in x.log", False),
        ("how many lines does x.log have", False),
    ],
)
def test_how_many_files_is_a_count_of_a_selection(task: str, counted: bool) -> None:
    found = pick_for(task)
    assert (found is COUNT) is counted


def test_a_selection_is_counted_and_narrowed_to_a_kind(tree: Path) -> None:
    (tree / "src" / "more.log").write_text("z\n")
    by_kind = narrowed(SMALL)
    assert by_kind is not None and "ext" in by_kind.slots
    assert narrowed(by_kind) is None  # already told the kind
    counted = compose_pick(by_kind, COUNT, None)
    assert counted is not None and counted.kind == "question"
    out = bash(render(counted, {"dir": "src", "size": "2k", "ext": "log"}), tree)
    assert out.stdout.strip() == "2"  # tiny.log and more.log; not small.txt nor big.bin
    assert compose_pick(by_kind, COUNT, ENDINGS["delete"]) is None  # no act on a count


def test_a_file_name_cannot_forge_the_file_a_pick_acts_on(tree: Path) -> None:
    """A name holding a newline and a huge 'size' must not become a record of its own:
    the act lands on a file the selection found, never on the path the name spells."""
    victim = tree / "victim.txt"
    victim.write_text("keep me\n")
    # a name cannot hold "/": the forged path is one relative to where the command runs
    (tree / "src" / "x\n99999999999\tvictim.txt").write_text("")
    largest = next(p for p in PICKS if p.name == "largest")
    gone = compose_pick(SMALL, largest, ENDINGS["delete"])
    assert gone is not None
    out = bash(render(gone, {"dir": "src", "size": "8k"}), tree)
    assert out.returncode == 0, out.stderr
    assert victim.read_text() == "keep me\n"
    assert not (tree / "src" / "big.bin").exists()  # the real largest went


@pytest.mark.parametrize(
    ("task", "names"),
    [
        ("Which files in /srv/in are empty? Put their names in /tmp/e.txt.", True),
        ("Save just the names of the files over 1MB in /srv/in to /tmp/big.txt.", True),
        ("List the full paths of the files over 1MB in /srv/in.", False),
        ("Write their names and paths to /tmp/x.txt.", False),
        ("Delete the files in /srv/in whose names end in '.bak'.", False),
    ],
)
def test_a_request_for_the_files_names_is_read_as_such(task: str, names: bool) -> None:
    assert read_task(task).names_only is names


def test_a_selection_for_names_prints_each_name_alone_sorted(tree: Path) -> None:
    alone = names_of(SMALL)
    assert alone is not None and alone.kind == "question" and alone.slots == SMALL.slots
    out = bash(render(alone, {"dir": "src", "size": "2k"}), tree)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "small.txt\ntiny.log\n"
    piped = Recipe("x", "x", "question", (), ("find {dir} -type f | wc -l",), SMALL.slots)
    assert names_of(piped) is None
