"""The recipes for requests people saw go wrong: a copy into a folder that made a file of
the folder's name, a rename that never happened, "the .tmp files" that took editor
leftovers with them, a count of the files changed *within* N days for "not changed in N
days". Each shipped recipe is rendered and run for real (bash, in a folder of its own, as
root and as an unprivileged user), and its direction is read as said."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from shellagent.recipes import DATA_DIR, Recipe, load, render
from shellagent.recipes.rank import Ranker
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import CONFIDENT, FITS, OFFERED, Shortlist, shortlist
from shellagent.recipes.values import task_values

from ..unprivileged import AS_NOBODY, give_to_nobody, make_traversable

CATALOG = load([DATA_DIR])
USERS = ["root", "nobody"]


def run(
    recipe: str, args: dict[str, str], cwd: Path, user: str
) -> subprocess.CompletedProcess[str]:
    """The shipped recipe rendered with ``args`` and run by bash in ``cwd`` (HOME=cwd)."""
    return run_recipe(CATALOG.get(recipe), args, cwd, user)


def run_recipe(
    recipe: Recipe, args: dict[str, str], cwd: Path, user: str
) -> subprocess.CompletedProcess[str]:
    """``recipe`` (shipped, or made at run time: a composed one) rendered with ``args``
    and run by bash in ``cwd`` (HOME=cwd)."""
    if user == "nobody":
        if os.getuid() != 0:
            pytest.skip("already unprivileged: the root runs cover this user")
        make_traversable(cwd)
        give_to_nobody(cwd)
    prefix = AS_NOBODY if user == "nobody" else []
    return subprocess.run(
        [*prefix, "/bin/bash", "--norc", "-c", render(recipe, args)],
        cwd=cwd,
        env={"HOME": str(cwd), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "resume.pdf").write_text("cv\n")
    return home


@pytest.mark.parametrize("user", USERS)
def test_a_copy_into_a_folder_not_there_yet_lands_inside_a_new_folder(
    home: Path, user: str
) -> None:
    done = run("copy_file_into_dir", {"file": "docs/resume.pdf", "dest": "~/Desktop"}, home, user)
    assert done.returncode == 0, done.stderr
    assert (home / "Desktop").is_dir()
    assert (home / "Desktop" / "resume.pdf").read_text() == "cv\n"
    assert (home / "docs" / "resume.pdf").exists()


@pytest.mark.parametrize("user", USERS)
def test_a_move_into_a_folder_not_there_yet_lands_inside_a_new_folder(
    home: Path, user: str
) -> None:
    done = run(
        "move_file_into_dir", {"file": "docs/resume.pdf", "dest": "Pictures/2024"}, home, user
    )
    assert done.returncode == 0, done.stderr
    assert (home / "Pictures" / "2024" / "resume.pdf").read_text() == "cv\n"
    assert not (home / "docs" / "resume.pdf").exists()


@pytest.mark.parametrize("user", USERS)
def test_a_rename_keeps_the_file_in_its_folder(home: Path, user: str) -> None:
    done = run("rename_file", {"file": "docs/resume.pdf", "new": "cv-2024.pdf"}, home, user)
    assert done.returncode == 0, done.stderr
    assert (home / "docs" / "cv-2024.pdf").read_text() == "cv\n"
    assert not (home / "docs" / "resume.pdf").exists()
    assert not (home / "cv-2024.pdf").exists()


@pytest.mark.parametrize("user", USERS)
def test_a_rename_onto_an_existing_file_fails_and_changes_nothing(home: Path, user: str) -> None:
    (home / "docs" / "cv.pdf").write_text("other\n")
    done = run("rename_file", {"file": "docs/resume.pdf", "new": "cv.pdf"}, home, user)
    assert done.returncode != 0
    assert "already exists" in done.stderr
    assert (home / "docs" / "cv.pdf").read_text() == "other\n"
    assert (home / "docs" / "resume.pdf").read_text() == "cv\n"


@pytest.mark.parametrize("user", USERS)
def test_a_copy_under_a_new_name_stays_beside_the_original(home: Path, user: str) -> None:
    done = run("copy_file_as", {"file": "docs/resume.pdf", "copy": "resume-old.pdf"}, home, user)
    assert done.returncode == 0, done.stderr
    assert (home / "docs" / "resume-old.pdf").read_text() == "cv\n"
    assert (home / "docs" / "resume.pdf").read_text() == "cv\n"


@pytest.mark.parametrize("user", USERS)
def test_deleting_the_tmp_files_leaves_editor_leftovers_and_look_alikes(
    home: Path, user: str
) -> None:
    names = ["a.tmp", "docs/b.tmp", "notes.txt~", "docs/.notes.txt.swp", "c.tmp.txt", "keep.md"]
    for name in names:
        (home / name).write_text("x\n")
    done = run("delete_by_extension", {"dir": ".", "ext": "tmp"}, home, user)
    assert done.returncode == 0, done.stderr
    assert [n for n in names if (home / n).exists()] == names[2:]


@pytest.mark.parametrize("user", USERS)
def test_a_file_is_found_anywhere_in_the_home_whatever_its_case(home: Path, user: str) -> None:
    (home / "docs" / "money").mkdir()
    (home / "docs" / "money" / "Budget.xlsx").write_text("x\n")
    (home / "budget-2019.xlsx").write_text("x\n")
    done = run("find_in_home", {"name": "budget.xlsx"}, home, user)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{home}/docs/money/Budget.xlsx"]


def _aged(home: Path) -> None:
    for name, days in (("new.txt", 1), ("docs/mid.txt", 20), ("old.txt", 90), ("docs/old.md", 60)):
        (home / name).write_text("x\n")
        stamp = (home / name).stat().st_mtime - days * 86400
        os.utime(home / name, (stamp, stamp))


@pytest.mark.parametrize(
    ("recipe", "count"),
    [("count_older_than_days", "2"), ("count_recently_modified", "3")],  # resume.pdf is new
)
def test_a_count_by_age_counts_the_side_it_says(home: Path, recipe: str, count: str) -> None:
    _aged(home)
    done = run(recipe, {"dir": ".", "days": "30"}, home, "root")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == count


@pytest.mark.parametrize(
    ("recipe", "found"),
    [
        ("find_at_least_size", ["./exact.bin", "./more.bin"]),
        ("find_at_most_size", ["./exact.bin", "./less.bin"]),
        ("find_larger_than", ["./more.bin"]),
        ("find_smaller_than", ["./less.bin"]),
    ],
)
def test_a_size_bound_said_inclusive_keeps_a_file_of_exactly_that_size(
    tmp_path: Path, recipe: str, found: list[str]
) -> None:
    for name, size in (("exact.bin", 10240), ("more.bin", 10241), ("less.bin", 10239)):
        (tmp_path / name).write_bytes(b"x" * size)
    done = run(recipe, {"dir": ".", "size": "10k"}, tmp_path, "root")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == found


@dataclass(frozen=True)
class Shelf:
    recipes: Mapping[str, Recipe]
    ranker: Ranker
    confident: float = CONFIDENT
    fits: float = FITS
    offered: int = OFFERED
    shapes: bool = True


# The request, and the recipes that do what it says (a composed count or find-then-act of
# the right selection is as good): each direction said either way, negations included.
OLD_COUNT = ("count_older_than_days", "older_than_days_count")
NEW_COUNT = ("count_recently_modified", "recently_modified_count")
SAID = [
    ("how many files in /srv/inbox have not been modified for 45 days", OLD_COUNT),
    ("how many files in /srv/inbox were edited within the past 5 days", NEW_COUNT),
    ("list the files under /srv/inbox that nobody has changed in 3 weeks", ("older_than_days",)),
    ("which files in /srv/inbox are less than 10 days old", ("recently_modified",)),
    ("which files in /srv/media are 20M or more", ("find_at_least_size",)),
    ("which files in /srv/media are no bigger than 300k", ("find_at_most_size",)),
    ("which files in /srv/media are over 2G", ("find_larger_than",)),
    (
        "erase the files in /srv/cache not touched during the last 60 days",
        ("delete_older_than_days", "older_than_days_then_delete"),
    ),
    ("get rid of only the .tmp files in /srv/build", ("delete_by_extension",)),
    ("copy /srv/docs/cv.odt into the folder /srv/share/new", ("copy_file_into_dir",)),
    # no size, emptiness or age said: no selection narrowed by one, whatever its default
    (
        "Count the log files in /srv/data, subfolders included.",
        ("count_by_extension", "list_by_extension_count", "files_under_by_ext_count"),
    ),
]


@pytest.fixture(scope="module")
def shelf() -> Shelf:
    recipes = dict(CATALOG.recipes)
    return Shelf(recipes, Ranker.train(list(recipes.values())))


def shortlisted(shelf: Shelf, task: str) -> Shortlist:
    """The shortlist for ``task`` (the words alone: no listing), which must fit."""
    reading = read_task(task)
    found = shortlist(shelf, reading, lambda: task_values(reading))
    assert found is not None, "no recipe fits"
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("task", "right"), SAID, ids=[r[0] for _, r in SAID])
def test_a_direction_said_either_way_is_read_that_way(
    shelf: Shelf, task: str, right: tuple[str, ...]
) -> None:
    found = shortlisted(shelf, task)
    assert found.usable[0].name in right, [c.name for c in found.usable[:3]]


@pytest.mark.parametrize("user", USERS)
def test_a_selection_turned_around_lists_exactly_the_files_the_plain_one_leaves_out(
    home: Path, user: str
) -> None:
    """ "which scripts can't be executed": ``find_executables`` turned around lists the
    scripts that cannot, and ``empty_files`` turned around the files that hold something."""
    from shellagent.recipes.compose import negated

    tools = home / "tools"
    tools.mkdir()
    for name, mode, text in [("run.sh", 0o755, "x\n"), ("lib.sh", 0o644, "x\n"), ("e", 0o644, "")]:
        (tools / name).write_text(text)
        (tools / name).chmod(mode)
    not_run = negated(CATALOG.get("find_executables"))
    not_empty = negated(CATALOG.get("empty_files"))
    assert not_run is not None and not_empty is not None
    done = run_recipe(not_run, {"dir": "tools"}, home, user)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == ["tools/e", "tools/lib.sh"]
    done = run_recipe(not_empty, {"dir": "tools"}, home, user)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tools/lib.sh", "tools/run.sh"]
    assert negated(CATALOG.get("files_under")) is None  # every file: nothing to turn around
    assert negated(CATALOG.get("find_larger_than")) is None  # a size's direction is read


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "right"),
    [
        ("Which files in /srv/bin are not executable?", "find_executables_not"),
        ("how many files in /srv/bin cannot be executed", "find_executables_not_count"),
        ("remove every file in /srv/cache that is not empty", "empty_files_not_then_delete"),
        ("which files in /srv/bin are executable", "find_executables"),
    ],
)
def test_a_property_said_negated_selects_the_files_without_it(
    shelf: Shelf, task: str, right: str
) -> None:
    found = shortlisted(shelf, task)
    assert found.usable[0].name == right, [c.name for c in found.usable[:3]]
    # nothing that keeps to the property said unwanted ("delete_empty_files") is offered
    kept = [c.name for c in found.usable if c.name in ("delete_empty_files", "find_executables")]
    assert kept == ([] if found.values.reading.unwanted else ["find_executables"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "picked"),
    [
        ("copy the newest file in /srv/x that is not empty to /tmp", "empty_files_not_newest"),
        ("how many files in /srv/x are not executable", "find_executables_not_count"),
        ("which file in /srv/x that is not empty is the largest", "empty_files_not_largest"),
    ],
)
def test_a_selection_turned_around_is_never_turned_back(
    shelf: Shelf, task: str, picked: str
) -> None:
    """A selection already turned around for a property said negated is composed from as
    it is: no pick, count or ending turns it back (``empty_files_not_not_newest`` once
    appeared among the candidates)."""
    names = [c.name for c in shortlisted(shelf, task).usable]
    assert not [n for n in names if "_not_not" in n], names
    assert any(n.startswith(picked) for n in names[:3]), names[:3]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """A home with a job's log, an address book and a film list."""
    home = tmp_path / "records"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "job.log").write_text(
        "2025-06-01 02:00:00 INFO backup started\n"
        "2025-06-01 02:09:00 INFO backup done\n"
        "2025-06-02 02:00:00 INFO backup started\n"
        "2025-06-02 02:03:00 ERROR disk full\n"
        "2025-06-02 02:04:00 ERROR backup aborted\n"
        "2025-06-03 02:00:00 INFO backup started\n"
        "2025-06-03 02:07:00 INFO backup done\n"
        "2025-06-03 02:08:00 WARN slow disk\n"
    )
    (home / "people.csv").write_text(
        "name,email,city\nAna Lima,ana@example.org,Porto\nBen Okafor,ben@example.org,Lagos\n"
    )
    (home / "films.json").write_text(
        '[{"title": "A", "year": 1962}, {"title": "B", "year": 1999}, {"title": "C", "year": 2011}]'
    )
    (home / "todo.json").write_text(
        '[{"what": "tax", "done": true}, {"what": "vet", "done": false}]'
    )
    (home / "code" / "api").mkdir(parents=True)
    (home / "code" / "api" / "requirements.txt").write_text("flask==3.0.2\nrequests>=2.31\n")
    return home


@pytest.mark.parametrize(
    ("task", "chosen", "printed"),
    [
        (
            "When did ~/logs/job.log last say 'backup done'?",
            "last_matching_line",
            "2025-06-03 02:07:00 INFO backup done\n",
        ),
        (
            "Which errors did ~/logs/job.log record on 2 June?",
            "log_level_on_day",
            "2025-06-02 02:03:00 ERROR disk full\n2025-06-02 02:04:00 ERROR backup aborted\n",
        ),
        (
            "What is Ben Okafor's email? It's in ~/people.csv.",
            "csv_field_of_row",
            "ben@example.org\n",
        ),
        ("How many films in ~/films.json came out before 2000?", "json_count_below", "2\n"),
        (
            "Which chores in ~/todo.json are not done yet?",
            "json_records_not_flagged",
            '{"what":"vet","done":false}\n',
        ),
        (
            "Which version of requests does ~/code/api need?",
            "project_dependency_version",
            "~/code/api/requirements.txt:2:requests>=2.31\n",
        ),
    ],
)
def test_a_record_found_by_what_it_says_is_answered_from_the_real_file(
    shelf: Shelf, records: Path, task: str, chosen: str, printed: str
) -> None:
    answered_from(shelf, records, task, chosen, printed)


def answered_from(shelf: Shelf, records: Path, task: str, chosen: str, printed: str) -> None:
    """``task``, read with the listing of ``records`` (the home), ranks ``chosen`` first;
    filled with its first values and run there, it prints ``printed``."""
    from shellagent.agent.trying import first_values
    from shellagent.recipes.listing import read_values

    def read(command: str) -> list[str]:
        done = run_command(command, records)
        return done.stdout.splitlines()

    reading = read_task(task)
    found = shortlist(shelf, reading, lambda: read_values(reading, read))
    assert found is not None and found.usable[0].name == chosen, found and found.usable[:3]
    action = first_values(found.offers[0])
    assert action is not None
    done = run_recipe(found.recipes[chosen], dict(action.arguments), records, "root")
    said = done.stdout.replace(str(records), "~")  # the home's paths as the task says them
    assert (done.returncode, said) == (0, printed), done.stderr


def run_command(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash in ``cwd`` (HOME=cwd), as the listing is read at run time."""
    return subprocess.run(
        ["/bin/bash", "--norc", "-c", command],
        cwd=cwd,
        env={"HOME": str(cwd), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def project(records: Path) -> Path:
    """The records' home with a repository of three branches, a guide, a setting changed
    since its original copy and one disk image."""
    code = records / "code" / "site"
    code.mkdir(parents=True)
    (code / "GUIDE.md").write_text("\n# Site handbook\n\nHow we publish.\n## Build\n")
    (code / "app.ini").write_text("workers = 2\ntimeout = 90\n")
    (code / "app.ini.orig").write_text("workers = 2\ntimeout = 30\n")
    git = ["git", "-C", str(code), "-c", "user.name=A", "-c", "user.email=a@example.org"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(code)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    for branch in ("develop", "hotfix"):
        subprocess.run([*git, "branch", branch], check=True)
    (records / "isos").mkdir()
    (records / "isos" / "tiny-1.0.iso").write_bytes(b"iso image\n")
    (records / "isos" / "README.txt").write_text("images\n")
    return records


@pytest.mark.parametrize(
    ("task", "chosen", "printed"),
    [
        (
            "According to ~/logs/job.log, on which day was the backup aborted?",
            "log_days_mentioning",
            "2025-06-02\n",
        ),
        (
            "Going by ~/logs/job.log, when was the backup started for the last time?",
            "last_matching_line",
            "2025-06-03 02:00:00 INFO backup started\n",
        ),
        (
            "Which branches does ~/code/site have besides develop?",
            "git_branches_except",
            "hotfix\nmain\n",
        ),
        (
            "What is the title of the handbook at ~/code/site/GUIDE.md?",
            "document_title",
            "Site handbook\n",
        ),
        (
            "What's the md5 checksum of the .iso image in ~/isos?",
            "file_checksum",
            "39281bd7d20f1231509888b3491deb48  isos/tiny-1.0.iso\n",
        ),
    ],
)
def test_a_question_of_when_which_or_what_is_answered_from_the_real_files(
    shelf: Shelf, project: Path, task: str, chosen: str, printed: str
) -> None:
    answered_from(shelf, project, task, chosen, printed)


@pytest.mark.parametrize("recipe", ["compare_files", "backup_file_diff"])
def test_what_differs_between_two_files_is_only_the_lines_that_differ(
    project: Path, recipe: str
) -> None:
    site = project / "code" / "site"
    slots = list(CATALOG.get(recipe).slots)
    done = run(
        recipe,
        dict(zip(slots, [str(site / "app.ini"), str(site / "app.ini.orig")], strict=True)),
        project,
        "root",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert {"-timeout = 90", "+timeout = 30"} <= set(lines) or {
        "+timeout = 90",
        "-timeout = 30",
    } <= set(lines)
    assert not any("workers" in line for line in lines)
