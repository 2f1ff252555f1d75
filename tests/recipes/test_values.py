"""The values a task names, by slot type, and the listing that resolves bare names."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from shellagent.recipes.compose import the_one_of_a_ranking
from shellagent.recipes.listing import fields_command, listing_command, read_fields
from shellagent.recipes.reading import read_task as reading_of
from shellagent.recipes.values import (
    TaskValues,
    candidates_for,
    listed_folders,
    slot_candidates,
    task_values,
)


def read_task(task: str, listing: list[str] | tuple[str, ...] = ()) -> TaskValues:
    """What ``task`` names, with ``listing`` as the working directory's."""
    return task_values(reading_of(task), listing)


LISTING = [
    "./",
    "./Downloads/",
    "./Downloads/old-installer.exe",
    "./Documents/",
    "./Documents/contacts.csv",
    "./Documents/taxes/",
    "./logs/",
    "./logs/access.log",
    "./projects/",
    "./projects/webshop/",
    "./projects/webshop/package.json",
]


def test_explicit_paths_quoted_or_not_come_first_in_task_order() -> None:
    values = read_task("Move the logs in '/var/log/app' older than a week to /srv/archive/")
    assert candidates_for("dir", values)[:2] == ["/var/log/app", "/srv/archive"]
    assert candidates_for("days", values) == ["7"]


def test_a_bare_name_is_resolved_against_the_listing() -> None:
    values = read_task("Which five files in my Downloads folder are the largest?", LISTING)
    assert candidates_for("dir", values)[0] == "Downloads"
    assert candidates_for("count", values) == ["5"]
    values = read_task("Which URL in access.log failed with a 500 most often?", LISTING)
    assert candidates_for("file", values)[0] == "logs/access.log"
    values = read_task("How many contacts (Documents/contacts.csv) live in Berlin?", LISTING)
    assert candidates_for("file", values)[0] == "Documents/contacts.csv"
    assert candidates_for("pattern", values) == ["Berlin"]
    values = read_task("What version is the webshop project at?", LISTING)
    assert candidates_for("dir", values) == ["projects/webshop"]


def test_a_name_the_listing_found_elsewhere_is_not_offered_as_written() -> None:
    """Here access.log is logs/access.log: a file slot is not offered a name that does not
    exist where the command runs (a model copying the task's words would take it)."""
    for task in (
        "Which URL in access.log failed with a 500 most often?",
        "How many contacts (Documents/contacts.csv) live in Berlin?",
    ):
        values = read_task(task, LISTING)
        offered = candidates_for("file", values)
        listed = {e.removeprefix("./").rstrip("/") for e in LISTING}
        assert offered and all(o in listed for o in offered), offered
    # without a listing the name is all there is
    assert candidates_for("file", read_task("Which URL in access.log failed?")) == ["access.log"]


def test_an_output_named_with_its_folder_is_joined() -> None:
    task = "Combine the logs into a single file named 'last_week.txt' in '/tmp'."
    assert candidates_for("output", read_task(task))[0] == "/tmp/last_week.txt"
    task = "Pack /srv/b into a single archive named 'b.tar.gz' and place it in '/tmp'."
    assert candidates_for("archive", read_task(task))[0] == "/tmp/b.tar.gz"
    task = "The '/opt/dw' folder holds CSVs. Join them into 'all.csv' in the same directory."
    assert candidates_for("output", read_task(task))[0] == "/opt/dw/all.csv"
    # no folder named before it: the name stays as it is
    task = "Write the list to 'x.txt' in the same directory."
    assert candidates_for("output", read_task(task))[0] == "x.txt"


def test_kinds_of_values_read_from_words() -> None:
    values = read_task("Move all PDFs larger than 1MB modified in the last 24 hours")
    assert candidates_for("ext", values) == ["pdf"]
    assert candidates_for("glob", values) == ["*.pdf"]
    assert candidates_for("size", values) == ["1M"]
    assert candidates_for("minutes", values) == ["1440"]
    values = read_task("files with names ending in '_copy.txt' and mode 644")
    assert candidates_for("glob", values)[0] == "*_copy.txt"
    assert candidates_for("mode", values) == ["644"]
    assert candidates_for("mode", read_task("copy 644 files")) == []  # not a mode here
    values = read_task("send SIGHUP to nginx at 03:30 on 2024-05-01 as user named deploy")
    assert candidates_for("signal", values) == ["HUP"]
    assert candidates_for("time", values) == ["03:30"]
    assert candidates_for("date", values) == ["2024-05-01"]
    assert "deploy" in candidates_for("user", values)


def test_an_apostrophe_is_not_a_quote() -> None:
    values = read_task("What's Kofi Mensah's email address?")
    assert candidates_for("pattern", values) == ["Kofi Mensah"]


def test_the_listing_command_lists_the_tree_and_the_named_folders(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.log").write_text("x")
    (tmp_path / ".hidden").mkdir()
    other = tmp_path / "srv"
    (other / "deep").mkdir(parents=True)
    command = listing_command(reading_of(f"the logs in '{other}' and the file {other}/deep/y.txt"))
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert "./a/b/x.log" in lines and "./a/b/" in lines
    assert not any(".hidden" in line for line in lines)
    assert f"{other}/deep/" in lines


def test_an_archive_is_never_named_after_its_kind_alone() -> None:
    # "a tar.gz archive" names the kind, not the file: the archive is named after the folder
    values = read_task("back up ~/Documents into a tar.gz archive in my home folder")
    assert candidates_for("archive", values) == ["Documents.tar.gz"]
    assert candidates_for("archive", read_task("compress ~/notes as a zip")) == ["notes.zip"]
    # a folder the task names is what gets packed, never the archive to write
    values = read_task("pack /srv/proj into /srv/out/proj.tar.gz")
    assert candidates_for("archive", values)[0] == "/srv/out/proj.tar.gz"
    assert "/srv/proj" not in candidates_for("archive", values)
    assert candidates_for("archive", read_task("what is inside holiday-photos.zip")) == [
        "holiday-photos.zip"
    ]


@pytest.mark.parametrize(
    ("task", "asked"),
    [
        (
            "The 'phoenix-cache' service stores cache files in '/var/cache/phoenix'. "
            "Remove all files older than 30 days to free up space.",
            "Remove all files older than 30 days to free up space.",
        ),
        (
            "Something broke in the webshop. Which error did ~/logs/app.log record last?",
            "Which error did ~/logs/app.log record last?",
        ),
        ("Find the empty files in /srv. Then delete them.", None),
        ("A backup script ran. It left files (e.g. x.tmp) behind.", None),
        ("which files are big? and old", None),
    ],
)
def test_the_request_is_read_from_the_sentence_that_asks_on(task: str, asked: str | None) -> None:
    assert reading_of(task).request == (asked or task)


def test_a_destination_slot_takes_the_path_after_to_and_the_source_the_other() -> None:
    task = "Move all PDFs in '/home/user/documents' larger than 1MB to '/home/user/archive'."
    slots = [("glob", "glob", ()), ("dir", "dir", ()), ("dest", "dir", ()), ("size", "size", ())]
    found = slot_candidates(slots, read_task(task))
    assert found[1][0] == "/home/user/documents"
    assert found[2][0] == "/home/user/archive"
    # the other way round in the sentence, the same assignment
    task = "Copy into /srv/backup everything under /srv/www"
    found = slot_candidates([("dir", "dir", ()), ("dest", "dir", ())], read_task(task))
    assert (found[0][0], found[1][0]) == ("/srv/www", "/srv/backup")


def test_two_slots_of_one_kind_start_on_different_values() -> None:
    task = "show the lines that differ between app.conf and app.conf.bak"
    found = slot_candidates([("file", "file", ()), ("other", "file", ())], read_task(task))
    assert found[0][0] != found[1][0]
    assert set(found[0][:1] + found[1][:1]) == {"app.conf", "app.conf.bak"}
    # extensions too: the old and the new one of a rename are not both jpeg
    task = "rename all .jpeg files in ~/Pictures to .jpg"
    found = slot_candidates([("old", "ext", ()), ("new", "ext", ())], read_task(task))
    assert (found[0][0], found[1][0]) == ("jpeg", "jpg")


def test_a_folder_that_looks_like_a_file_is_a_folder_when_the_listing_says_so() -> None:
    task = "Are any files in '/etc/cron.daily' empty?"
    assert read_task(task, ["/etc/cron.daily/", "/etc/cron.daily/job"]).dirs == ("/etc/cron.daily",)


def test_a_word_after_user_is_not_taken_for_a_name_when_it_is_a_little_word() -> None:
    assert read_task("files not owned by the current user and not by root").names == ()
    assert read_task("files owned by user alice").names == ("alice",)


def test_the_archive_slot_takes_the_file_named_like_an_archive_and_the_other_is_looked_for() -> (
    None
):
    task = "Is there a config.php inside ~/Downloads/site-backup.tar.gz? Give me its path."
    archive, pattern = slot_candidates(
        [("archive", "archive", ()), ("pattern", "pattern", ())], read_task(task)
    )
    assert archive[0] == "~/Downloads/site-backup.tar.gz"
    assert pattern[0] == "config.php"
    # a slot named archive of type file, as some recipes have it: the same
    archive, _ = slot_candidates(
        [("archive", "file", ()), ("pattern", "pattern", ())], read_task(task)
    )
    assert archive[0] == "~/Downloads/site-backup.tar.gz"


def test_the_listing_tells_which_names_are_folders() -> None:
    values = read_task("What's the checksum of the installer in my Downloads?", ["./Downloads/"])
    assert values.dirs == ("Downloads",)
    assert listed_folders(values) == {"Downloads"}
    # a required file slot may still take it (stat, du): after any file named
    assert candidates_for("file", values) == ["Downloads"]


@pytest.mark.parametrize(
    ("task", "clause"),
    [
        ("Count the errors and save the count to /tmp/n.txt", "save the count to /tmp/n.txt"),
        (
            "List the empty folders to '/tmp/empty.txt'.",
            "List the empty folders to '/tmp/empty.txt'.",
        ),
        (
            "Find the .tmp files and list their paths in /tmp/t.txt",
            "list their paths in /tmp/t.txt",
        ),
        # what a program does is no instruction; a listing with no file saves nothing
        ("The x service stores its logs in /var/log/x.log. Count the errors.", ""),
        ("A script writes reports to /srv/r. Which is the newest?", ""),
        ("List the files in /srv", ""),
    ],
)
def test_the_saving_clause_is_an_instruction_to_put_the_answer_in_a_file(
    task: str, clause: str
) -> None:
    assert reading_of(task).saving == clause


RANKING = "awk '{print $7}' access.log | sort | uniq -c | sort -rn"


@pytest.mark.parametrize(
    ("task", "cut"),
    [
        ("Which URL in access.log failed with a 500 most often?", " | head -n 1"),
        ("Which status code is the least common in access.log?", " | tail -n 1"),
        ("Which paths returned a 500?", ""),
        ("What are the most common paths in access.log?", ""),
        ("Which three paths are requested the most?", ""),
    ],
)
def test_the_one_most_asked_of_a_ranking_is_its_first_line(task: str, cut: str) -> None:
    end = reading_of(task).ranking_end
    assert the_one_of_a_ranking(RANKING, end) == RANKING + cut
    # no ranking (sorted by name, not in reverse): nothing to cut
    assert the_one_of_a_ranking("sort -u x.txt", end) == "sort -u x.txt"


def test_key_slots_are_filled_from_the_columns_and_keys_of_the_files_named(
    tmp_path: Path,
) -> None:
    (tmp_path / "Documents").mkdir()
    (tmp_path / "Documents" / "expenses.csv").write_text(
        "date,category,amount\n2024-01-03,food,12\n2024-01-05,rent,7.5\n"
    )
    (tmp_path / "shop.json").write_text('{"name": "w", "version": "1.2", "server": {"port": 80}}')
    (tmp_path / "$(touch pwned) x.json").write_text('[{"title": "A", "read": false}]')
    task = (
        "Which port does shop.json listen on, and what's the total amount in "
        "Documents/expenses.csv?"
    )
    values = read_task(task, ["Documents/", "Documents/expenses.csv", "shop.json"])
    assert values.files[:2] == ("shop.json", "Documents/expenses.csv")
    # a hostile name reaches the command as one quoted word
    values = replace(values, files=(*values.files, "$(touch pwned) x.json"))
    command = fields_command(values)
    out = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True)
    found = read_fields(out.stdout, reading_of(task))
    values = replace(values, fields=found.names, number_fields=found.numbers)
    assert set(found.names) == {
        "date", "category", "amount", "name", "version", "server.port", "title", "read"
    }  # fmt: skip
    assert set(found.numbers) == {"amount", "server.port"}
    assert not (tmp_path / "pwned").exists()
    # what the task says comes first: "port", then "amount"
    assert candidates_for("key", values)[:2] == ["server.port", "amount"]
    assert fields_command(read_task("how big is notes.txt?")) == ""


def test_a_value_the_task_says_puts_the_column_that_holds_it_first() -> None:
    output = (
        "==> shellagent fields of contacts.csv\n"
        "name,email,city\nKofi Mensah,kofi@example.org,Berlin\nAna Lima,ana@example.org,Porto\n"
        "==> shellagent fields of books.json\n"
        "title\tstring\tDune\nyear\tnumber\t\nauthor\tstring\tFrank Herbert\n"
    )
    task = "How many of my contacts live in Berlin, and which books did Frank Herbert write?"
    found = read_fields(output, reading_of(task))
    assert found.holding == ("city", "author")
    values = replace(
        read_task(task),
        fields=found.names,
        number_fields=found.numbers,
        holding_fields=found.holding,
    )
    assert candidates_for("key", values)[:2] == ["city", "author"]
    assert found.numbers == ("year",)
    # the values themselves, as the files have them, are what a text slot is offered first
    assert found.held == ("Berlin", "Frank Herbert")
    values = replace(values, held_values=found.held)
    assert candidates_for("text", values)[:2] == ["Berlin", "Frank Herbert"]


def test_a_folder_named_tilde_in_the_project_is_never_the_home(tmp_path: Path) -> None:
    """A folder literally named ``~`` is listed as ``./~/…`` and offered so: rendered
    unquoted as ``~/reports`` it would be the home's reports folder (security review 3,
    L1)."""
    from shellagent.recipes import Recipe, Slot, render

    project, home = tmp_path / "project", tmp_path / "home"
    (project / "~" / "reports").mkdir(parents=True)
    (project / "~" / "reports" / "q3.txt").write_text("mine\n")
    (home / "reports").mkdir(parents=True)
    (home / "reports" / "private.txt").write_text("secret\n")
    task = "which files are in the reports folder"
    listing = subprocess.run(
        ["bash", "-c", listing_command(reading_of(task))],
        cwd=project,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert "./~/reports/" in listing
    offered = candidates_for("dir", read_task(task, listing))
    assert offered == ["./~/reports"]
    files = Recipe(
        "files_in",
        "the files in a folder",
        "question",
        ("x",),
        ("find {dir} -type f | sort",),
        {"dir": Slot("dir", "dir", default=".")},
    )
    out = subprocess.run(
        ["bash", "-c", render(files, {"dir": offered[0]})],
        cwd=project,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert out.stdout.splitlines() == ["./~/reports/q3.txt"]
    assert "private" not in out.stdout


def test_a_destination_said_to_be_a_folder_is_offered_as_one(tmp_path: Path) -> None:
    """ "Put a copy of my resume in ~/Desktop" never makes a file named Desktop: the
    folder is written with its slash, so a missing folder is an error, not a new file."""
    from shellagent.recipes import Recipe, Slot, render

    task = "Put a copy of resume.pdf in ~/Desktop"
    slots = [("path", "path", ()), ("dest", "path", ())]
    path, dest = slot_candidates(slots, read_task(task))
    assert (path[0], dest[0]) == ("resume.pdf", "~/Desktop/")
    # a file destination stays a file, and so does a slot that is no destination
    path, dest = slot_candidates(slots, read_task("copy notes.txt and save it as notes.bak"))
    assert (path[0], dest[0]) == ("notes.txt", "notes.bak")
    (tmp_path / "resume.pdf").write_text("cv\n")
    copy = Recipe(
        "copy_file",
        "copy a file",
        "action",
        ("x",),
        ("cp -a -- {path} {dest}",),
        {"path": Slot("path", "path"), "dest": Slot("dest", "path")},
    )
    home = tmp_path / "home"
    home.mkdir()
    command = render(copy, {"path": "resume.pdf", "dest": "~/Desktop/"})
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    missing = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True)
    assert missing.returncode != 0 and not (home / "Desktop").exists()
    (home / "Desktop").mkdir()
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 0 and (home / "Desktop" / "resume.pdf").read_text() == "cv\n"


def test_a_destination_only_guessed_to_be_a_folder_is_left_as_said() -> None:
    task = "Identify the largest file in /srv/x and copy it to '/tmp/largest_upload'"
    slots = [("dir", "dir", ()), ("dest", "path", ())]
    assert slot_candidates(slots, read_task(task))[1][0] == "/tmp/largest_upload"


@pytest.mark.parametrize(
    ("task", "source", "written"),
    [
        (
            "Bundle the invoices older than 60 days in /srv/billing into an archive called "
            "'stale.tar.gz' in '/var/tmp'.",
            "/srv/billing",
            "/var/tmp/stale.tar.gz",
        ),
        (
            "Glue every .part file under /opt/chunks together as one file named 'whole.bin' "
            "inside /scratch.",
            "/opt/chunks",
            "/scratch/whole.bin",
        ),
        (
            "Put the sessions of /data/web that are over 2MB in a tarball named 'big.tgz' in "
            "the same folder.",
            "/data/web",
            "/data/web/big.tgz",
        ),
    ],
)
def test_a_name_put_in_a_folder_is_written_there_and_that_folder_is_no_source(
    task: str, source: str, written: str
) -> None:
    values = read_task(task)
    dirs, archive, output = slot_candidates(
        [("dir", "dir", ()), ("archive", "archive", ()), ("output", "output", ())], values
    )
    assert dirs == [source]
    assert written in archive and written.rsplit("/", 1)[-1] not in archive
    assert output[0] == written and written.rsplit("/", 1)[-1] not in output


def test_the_folder_of_the_file_an_answer_is_saved_in_is_no_folder_to_read() -> None:
    values = read_task("Which files in /etc/app are empty? Write the names to /root/empty.txt.")
    assert values.output_dirs == ("/root",)
    assert slot_candidates([("dir", "dir", ())], values) == [["/etc/app"]]
    # said as the folder to read as well: kept
    both = read_task("List the files of /root older than 9 days and save them to /root/x.txt.")
    assert both.output_dirs == ()
    assert slot_candidates([("dir", "dir", ())], both)[0][0] == "/root"
    # the only folder said: still offered rather than nothing
    alone = read_task("Count the lines of every log and save the total to /tmp/n.txt.")
    assert slot_candidates([("dir", "dir", ())], alone) == [["/tmp"]]


def test_the_kind_of_the_file_an_answer_is_saved_in_is_no_kind_to_select() -> None:
    saved = read_task("Find the largest file in /srv/up and save its name to /tmp/largest.txt.")
    assert "*.txt" not in saved.globs
    said = read_task("Find the largest .csv file in /srv/up and save it to /tmp/x.txt.")
    assert said.globs == ("*.csv",)


def test_a_path_written_from_home_is_listed_as_a_folder_a_file_or_nothing(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "Documents" / "notes").mkdir(parents=True)
    (home / "todo.txt").write_text("x")
    work.mkdir()
    reading = reading_of("which of ~/Documents/notes, ~/todo.txt and ~/gone mention 'x'?")
    done = subprocess.run(
        ["bash", "-c", listing_command(reading)],
        cwd=work,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert "~/Documents/notes/" in lines and "~/todo.txt" in lines
    assert not any("gone" in line for line in lines)
    values = task_values(reading, lines)
    assert "~/Documents/notes" in listed_folders(values)
    assert "~/todo.txt" not in values.outputs  # it is there: read, not written


@pytest.mark.parametrize(
    ("task", "files"),
    [
        # the word names the folder the task writes, not a file elsewhere
        ("which of my notes in ~/Documents/notes mention 'x'", ()),
        # what the notes speak of is no file's name
        ("which files in Documents mention the budget", ()),
        ("what does my budget file say", ("Documents/budget.xlsx",)),
    ],
)
def test_a_stem_is_a_file_only_when_nothing_else_reads_the_word(
    task: str, files: tuple[str, ...]
) -> None:
    listing = [*LISTING, "./projects/webshop/notes.tmp", "./Documents/budget.xlsx"]
    assert read_task(task, listing).files == files


@pytest.mark.parametrize(
    ("task", "first"),
    [
        ("show the warnings of /var/log/x.log", "WARN"),
        ("show the WARNING lines of /var/log/x.log", "WARNING"),
        ("the errors in /var/log/x.log", "ERROR"),
        ("the lines of /var/log/x.log", None),
    ],
)
def test_a_choice_is_said_in_any_case_and_with_an_ending(task: str, first: str | None) -> None:
    levels = ("ERROR", "WARN", "WARNING", "INFO")
    found = candidates_for("choice", read_task(task), levels)
    assert (found[0] if found else None) == first


def test_a_day_slot_takes_a_day_said_or_the_day_of_a_date() -> None:
    assert candidates_for("day", read_task("the errors of 9 October in x.log")) == ["10-09"]
    assert candidates_for("day", read_task("the errors of 2024-03-05 in x.log")) == ["03-05"]
    assert candidates_for("day", read_task("the errors in x.log")) == []


def test_a_zone_is_what_the_task_writes_as_one_never_a_folder() -> None:
    assert candidates_for("zone", read_task("what time is it in Asia/Tokyo")) == ["Asia/Tokyo"]
    said = read_task("convert 2024-01-15 12:00 UTC to Europe/Paris time")
    assert candidates_for("zone", said) == ["Europe/Paris", "UTC"]
    assert candidates_for("zone", read_task("Wie viele Dateien liegen in ~/Downloads?")) == []


def test_one_file_said_by_its_kind_is_the_one_of_that_kind_where_the_task_looks() -> None:
    listing = ["./", "./isos/", "./isos/debian-12.iso", "./isos/notes.txt"]
    listing += ["./old/", "./old/a.iso", "./old/b.iso"]
    said = read_task("what is the md5 of the .iso image in isos", listing)
    assert candidates_for("file", said)[0] == "isos/debian-12.iso"
    # two of that kind where it looks: neither is the one
    said = read_task("what is the md5 of the .iso image in old", listing)
    assert not {"old/a.iso", "old/b.iso"} & set(candidates_for("file", said))
    said = read_task("how big are the .iso images in isos", listing)
    assert "isos/debian-12.iso" not in candidates_for("file", said)


def test_what_happened_is_a_pattern_and_a_name_left_out_a_branch_or_user() -> None:
    assert "abort" in candidates_for("pattern", read_task("when was the sync last aborted?"))
    said = read_task("which branches are there besides develop")
    assert candidates_for("branch", said) == ["develop"]
    assert candidates_for("user", read_task("processes of users other than root")) == ["root"]
