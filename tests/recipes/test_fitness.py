"""A recipe's shape against what a task names: a slot for each file and folder, an action
for an action, a kind-of-file slot for "the PDFs"; penalties only."""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest

from shellagent.agent.trying import UNTRIED, fit
from shellagent.recipes import Recipe, Slot
from shellagent.recipes.fitness import Shape, adjust
from shellagent.recipes.fitness import rerank as rerank_values
from shellagent.recipes.fitness import shape_of as shape_of_values
from shellagent.recipes.model import Kind
from shellagent.recipes.rank import Candidate
from shellagent.recipes.reading import read_task as reading_of
from shellagent.recipes.values import TaskValues, candidates_for, task_values
from shellagent.sandbox import CommandResult


def read_task(task: str, listing: list[str] | tuple[str, ...] = ()) -> TaskValues:
    """What ``task`` names, with ``listing`` as the working directory's."""
    return task_values(reading_of(task), listing)


def shape_of(task: str, values: TaskValues) -> Shape:
    assert values.reading.text == task
    return shape_of_values(values)


def rerank(
    ranked: list[Candidate], recipes: dict[str, Recipe], task: str, values: TaskValues
) -> list[Candidate]:
    assert values.reading.text == task
    return rerank_values(ranked, recipes, values)


def recipe(called: str, kind: Kind, template: str = "true", **slots: str) -> Recipe:
    """A recipe with ``slots`` given as name=type (a trailing ``?``: it has a default)."""
    made = {
        n: Slot(n, t.rstrip("?"), default="x" if t.endswith("?") else None)
        for n, t in slots.items()
    }
    return Recipe(called, called.replace("_", " "), kind, (called,), (template,), made)


HOST = recipe("host_name", "question", "hostname")
EMPTY = recipe("empty_files", "question", "find {dir} -empty", dir="dir?")
DELETE_EMPTY = recipe("delete_empty_files", "action", "find {dir} -empty -delete", dir="dir?")
DIR_ONLY = recipe("recently_modified", "question", "find {dir} -mtime -7", dir="dir?")
LOG_ERROR = recipe("log_last_error", "question", "grep ERROR {file} | tail -1", file="file")
COUNT_KIND = recipe(
    "count_by_extension", "question", "find {dir} -name '*.{ext}'", dir="dir?", ext="ext"
)
DUPES = recipe("duplicate_files_tree", "question", "find {dir} | md5sum", dir="dir?")
PORT_OWNER = recipe("port_owner", "question", "ss -ltnp 'sport = :{port}'", port="port")


def cand(name: str, score: float) -> Candidate:
    return Candidate(name, score, 0.0, 0.0)


@pytest.mark.parametrize(
    ("task", "kind"),
    [
        ("Which files in /srv are empty?", "question"),
        ("how many 404s are in the access log", "question"),
        ("Locate and delete all empty files in /tmp/junk.", "action"),
        ("Find the logs larger than 1MB and compress them", "action"),
        ("Please remove the old backups", "action"),
        ("I want to rename every .jpeg to .jpg", "action"),
        ("what's inside site.tar.gz? I don't want to unpack it", "question"),
        ("whats in site.tar.gz? dont extract it", "question"),
        ("What's in photos.zip in Downloads?", "question"),  # ".zip" ends no sentence
        ("The logs are big. Compress them into logs.tar.gz", "action"),
        ("check out the develop branch", "action"),
        ("I forgot which branch I left ~/site checked out on. Which one?", "question"),
        ("biggest files in /srv", ""),
    ],
)
def test_a_task_asks_a_question_or_for_an_action(task: str, kind: str) -> None:
    assert shape_of(task, read_task(task)).kind == kind


def test_penalties_only_and_none_for_a_recipe_whose_shape_fits() -> None:
    task = "Which error did ~/logs/app.log record last?"
    values = read_task(task)
    shape = shape_of(task, values)
    assert adjust(LOG_ERROR, shape, values) == 0.0
    for other in (HOST, EMPTY, DELETE_EMPTY, DIR_ONLY, COUNT_KIND, DUPES, PORT_OWNER):
        assert adjust(other, shape, values) <= 0.0


def test_a_file_the_task_names_needs_a_slot_to_go_in() -> None:
    # a folder slot does not take a file: ~/logs is only where the named log lies
    task = "Which error did ~/logs/app.log record last?"
    ranked = rerank(
        [cand("recently_modified", -0.2), cand("log_last_error", -0.4)],
        {r.name: r for r in (DIR_ONLY, LOG_ERROR)},
        task,
        read_task(task),
    )
    assert [c.name for c in ranked] == ["log_last_error", "recently_modified"]


def test_a_folder_found_in_the_listing_needs_a_slot_and_a_recipe_with_none_drops() -> None:
    task = "One file in Downloads is completely empty. What is it called?"
    values = read_task(task, ["./", "./Downloads/", "./Downloads/a.txt"])
    shape = shape_of(task, values)
    assert shape.dirs == ("Downloads",)
    ranked = rerank(
        [cand("host_name", -0.3), cand("empty_files", -0.45)],
        {r.name: r for r in (HOST, EMPTY)},
        task,
        values,
    )
    assert ranked[0].name == "empty_files"


def test_the_folder_holding_a_named_folder_is_not_a_second_target() -> None:
    task = "How many TODO comments are left in the webshop's src folder?"
    listing = ["./", "./webshop/", "./webshop/src/", "./webshop/src/a.py"]
    values = read_task(task, listing)
    assert set(values.dirs) == {"webshop", "webshop/src"}
    assert shape_of(task, values).dirs == ("webshop/src",)


def test_an_action_asked_for_is_not_answered_by_its_question_twin() -> None:
    task = "Locate and delete all empty files in '/tmp/cron-junk'."
    ranked = rerank(
        [cand("empty_files", 0.1), cand("delete_empty_files", -0.1)],
        {r.name: r for r in (EMPTY, DELETE_EMPTY)},
        task,
        read_task(task),
    )
    assert ranked[0].name == "delete_empty_files"


def test_a_kind_of_file_asked_about_wants_a_recipe_that_can_be_told_it() -> None:
    task = "How many PDFs are stored anywhere under ~/Documents?"
    assert shape_of(task, read_task(task)).kinds_of_file == ("pdf",)
    ranked = rerank(
        [cand("duplicate_files_tree", -0.3), cand("count_by_extension", -0.4)],
        {r.name: r for r in (DUPES, COUNT_KIND)},
        task,
        read_task(task),
    )
    assert ranked[0].name == "count_by_extension"


def test_a_required_value_the_task_never_says_costs_the_recipe() -> None:
    task = "Which port is the devserver listening on?"
    values = read_task(task)
    assert adjust(PORT_OWNER, shape_of(task, values), values) < 0.0
    said = "Port 5173 is taken. What's running there?"
    assert adjust(PORT_OWNER, shape_of(said, read_task(said)), read_task(said)) == 0.0


def test_a_file_name_not_found_here_may_be_the_name_to_look_for() -> None:
    find = recipe("find_by_name", "question", "find {dir} -name {name}", name="name", dir="dir?")
    task = "where is settings.py under ~/projects"
    values = read_task(task)
    assert adjust(find, shape_of(task, values), values) == 0.0


def test_a_plural_number_is_a_number() -> None:
    assert read_task("how many 503s are in the nginx access log").numbers == (503,)


def test_an_untried_rendering_is_not_worse_than_a_clean_run() -> None:
    ok = CommandResult(command="x", exit_code=0, output="42\n", timed_out=False, duration_s=0.1)
    failed = CommandResult(
        command="x", exit_code=1, output="x: not found\n", timed_out=False, duration_s=0.1
    )
    task = reading_of("how many files are in /srv")
    assert fit(task, "question", None) == UNTRIED[1]
    assert fit(task, "question", failed) < fit(task, "question", None)
    # a count asked for: a number beats a list
    listing = CommandResult(
        command="x", exit_code=0, output="a\nb\nc\n", timed_out=False, duration_s=0.1
    )
    assert fit(task, "question", ok) > fit(task, "question", listing)
    # an action that could not be tried is no answer to a question
    names = CommandResult(command="x", exit_code=0, output="a.txt\n", timed_out=False, duration_s=0)
    asked = reading_of("There's a zero-byte file in my Downloads; what's its name?")
    assert fit(asked, "question", names) > fit(asked, "action", None)
    assert fit(reading_of("delete the empty files in /srv"), "action", None) == UNTRIED[0]
    # the top few asked for: that many lines beat every one
    top = reading_of("what are the top 2 IP addresses in access.log?")
    two = CommandResult(
        command="x", exit_code=0, output="3 a\n2 b\n", timed_out=False, duration_s=0
    )
    assert fit(top, "question", two) > fit(top, "question", listing)


@pytest.mark.parametrize(
    ("task", "numbers"),
    [
        ("Which Python file in the dataproc project is the longest?", (1,)),
        ("What's the single biggest file anywhere in my home folder?", (1,)),
        ("which folder under /srv is the heaviest", (1,)),
        ("Which files in Downloads are the largest?", ()),
        ("what are the biggest files in /srv", ()),
        ("list the largest files in /srv", ()),
        ("Which five files in Downloads are the largest?", (5,)),
        ("which file in /srv is empty", ()),
        # said as a statement too
        ("Identify the most recent backup file in /backups and copy it to /tmp", (1,)),
        ("Find the artifact with the largest file size and copy it to /tmp", (1,)),
        ("show the most common words in notes.txt", ()),
    ],
)
def test_one_thing_asked_with_a_superlative_is_a_count_of_one(
    task: str, numbers: tuple[int, ...]
) -> None:
    assert read_task(task).numbers == numbers


WORD_COUNT = recipe("word_count", "question", "wc -w < {file}", file="file")
COUNT_WORD = recipe(
    "count_occurrences", "question", "grep -o -- {text} {file} | wc -l", text="text", file="file"
)


@pytest.mark.parametrize(
    ("task", "texts"),
    [
        ("Count how many times the word 'timeout' appears in /var/log/x/error.log", ("timeout",)),
        ("The 'data-ingest' service logs to /var/log/x.log. Count its lines.", ()),
        ("Move the .csv files into a new subdirectory named 'processed'", ()),
        ("Delete the files ending in '_copy.txt' from /srv/up", ()),
        ("Find files with the extension '.debug' in /srv and delete them", ()),
        ("Which notes mention 'dentist'?", ("dentist",)),
    ],
)
def test_a_quoted_word_to_look_for_is_read_but_not_a_name_or_a_path(
    task: str, texts: tuple[str, ...]
) -> None:
    assert shape_of(task, read_task(task)).texts == texts


def test_a_word_to_look_for_wants_a_slot_that_takes_text() -> None:
    task = "Count how many times the word 'timeout' appears in /var/log/x/error.log."
    ranked = rerank(
        [cand("word_count", -0.6), cand("count_occurrences", -0.75)],
        {r.name: r for r in (WORD_COUNT, COUNT_WORD)},
        task,
        read_task(task),
    )
    assert ranked[0].name == "count_occurrences"


def test_a_file_of_one_format_is_not_read_by_a_recipe_for_another() -> None:
    log_sum = Recipe(
        "log_bytes_served",
        "the total bytes sent according to an access log",
        "question",
        (),
        ("awk '{s += $10} END {print s}' {file}",),
        {"file": Slot("file", "file", default="/var/log/nginx/access.log")},
    )
    csv_sum = Recipe(
        "csv_sum_column",
        "the sum of a CSV column",
        "question",
        (),
        ("awk -F, -v c={column} 'NR > 1 {s += $c} END {print s}' {file}",),
        {"file": Slot("file", "file"), "column": Slot("column", "column", default="2")},
    )
    plain = recipe("sum_numbers", "question", "paste -sd+ {file} | bc", file="file")
    task = "What's the total of ~/Documents/expenses.csv?"
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.formats == ("csv",)
    assert adjust(log_sum, shape, values) < 0.0
    assert adjust(csv_sum, shape, values) == 0.0
    assert adjust(plain, shape, values) == 0.0  # a recipe that does not say: no judgement
    logs = "What's the total of /var/log/nginx/access.log?"
    assert adjust(csv_sum, shape_of(logs, read_task(logs)), read_task(logs)) < 0.0


def test_an_action_that_does_another_act_than_asked_drops() -> None:
    rename = recipe(
        "move_old", "action", "find {dir} -mtime +{days} -exec mv {} x \\;", dir="dir", days="days"
    )
    purge = recipe(
        "delete_old_files", "action", "find {dir} -mtime +{days} -delete", dir="dir", days="days"
    )
    task = "The x service keeps files in /var/cache/x. Remove all files older than 30 days."
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.act == "delete"
    assert adjust(rename, shape, values) < adjust(purge, shape, values) == 0.0


def test_a_size_or_age_the_task_says_wants_a_recipe_that_can_be_told_it() -> None:
    whole = recipe(
        "archive_create", "action", "tar -czf {archive} {dir}", dir="dir", archive="archive"
    )
    bigger = recipe(
        "find_larger_than_then_archive",
        "action",
        "find {dir} -size +{size} -print0 | tar -czf {archive} --null -T -",
        dir="dir",
        size="size",
        archive="archive",
    )
    task = "Compress all files in /data/r larger than 100MB into one archive named 'big.tar.gz'."
    values = read_task(task)
    shape = shape_of(task, values)
    assert adjust(whole, shape, values) < adjust(bigger, shape, values) == 0.0
    plain = "Compress /data/r into one archive named 'all.tar.gz'."
    assert adjust(whole, shape_of(plain, read_task(plain)), read_task(plain)) == 0.0


def test_what_the_request_quotes_to_look_for_fills_a_text_slot_before_a_service_name() -> None:
    task = (
        "The 'data-ingest' service logs errors to '/var/log/x/error.log'. Count how many "
        "times the word 'timeout' appears in the log file."
    )
    values = read_task(task)
    assert values.texts == ("timeout",)
    assert candidates_for("text", values)[0] == "timeout"


def test_every_ending_says_what_a_command_doing_it_looks_like() -> None:
    from shellagent.recipes.compose import ENDINGS
    from shellagent.recipes.fitness import DOES

    assert set(ENDINGS) <= set(DOES)


def test_a_field_of_the_file_the_task_says_wants_a_recipe_that_takes_one() -> None:
    get = recipe("json_get_field", "question", "jq -r .{field} {file}", file="file", field="key")
    check = recipe("json_validate", "question", "jq empty {file}", file="file")
    task = "What version is the webshop at, according to its package.json?"
    values = replace(read_task(task), fields=("name", "version", "scripts.test"))
    shape = shape_of(task, values)
    assert shape.fields == ("version",)
    assert adjust(get, shape, values) == 0.0
    assert adjust(check, shape, values) < 0.0
    # the file's fields unread, or none of them said: no judgement
    assert adjust(check, shape_of(task, read_task(task)), read_task(task)) == 0.0
    other = replace(read_task(task), fields=("name", "scripts.test"))
    assert adjust(check, shape_of(task, other), other) == 0.0


WITHIN = recipe(
    "files_modified_within",
    "question",
    "find {dir} -type f -mtime -{days}",
    dir="dir?",
    days="days",
)
OLDER = recipe(
    "files_older_than", "question", "find {dir} -type f -mtime +{days}", dir="dir?", days="days"
)


@pytest.mark.parametrize(
    ("task", "first"),
    [
        ("How many files haven't been modified in the last 30 days?", "files_older_than"),
        ("which files are older than 30 days", "files_older_than"),
        ("which files were changed in the last 30 days", "files_modified_within"),
        ("which files in /srv are not older than 3 days", "files_modified_within"),
    ],
)
def test_an_age_said_one_way_is_not_answered_by_a_recipe_for_the_other(
    task: str, first: str
) -> None:
    ranked = rerank(
        [cand("files_modified_within", -0.2), cand("files_older_than", -0.2)],
        {r.name: r for r in (WITHIN, OLDER)},
        task,
        read_task(task),
    )
    assert ranked[0].name == first
    # an age said with no direction ("files 3 days old") judges neither
    plain = "files that are 3 days old"
    values = read_task(plain)
    assert adjust(WITHIN, shape_of(plain, values), values) == 0.0
    assert adjust(OLDER, shape_of(plain, values), values) == 0.0


def test_a_word_said_unquoted_is_searched_in_any_case_and_a_quoted_text_as_quoted() -> None:
    minds_case = recipe("files_with", "question", "grep -rlF -e {pattern} {dir}", dir="dir?")
    any_case = recipe("files_with_any", "question", "grep -rliF -e {pattern} {dir}", dir="dir?")
    said = "which files in ~/Documents contain the word invoice?"
    values = read_task(said)
    shape = shape_of(said, values)
    assert shape.any_case is True
    assert adjust(any_case, shape, values) > adjust(minds_case, shape, values)
    quoted = "which files under /var/log contain 'ERROR'?"
    values = read_task(quoted)
    shape = shape_of(quoted, values)
    assert shape.any_case is False
    assert adjust(minds_case, shape, values) > adjust(any_case, shape, values)
    # a search of lines, not of files, is left to its words
    lines = recipe("lines_with", "question", "grep -F -e {pattern} {file}", file="file")
    lines_any = recipe("lines_with_any", "question", "grep -iF -e {pattern} {file}", file="file")
    values = read_task(said)
    shape = shape_of(said, values)
    assert adjust(lines, shape, values) == adjust(lines_any, shape, values)


@pytest.mark.parametrize(
    ("task", "first"),
    [
        ("how many entries of ~/logs/sync.log contain an error?", "count_any"),
        ("count the lines of /srv/app/worker.log that say refused", "count_any"),
        ("how many lines of /srv/app/worker.log contain 'refused'?", "count"),
    ],
)
def test_case_twins_share_their_words_and_the_case_asked_decides(task: str, first: str) -> None:
    count = recipe("count", "question", "grep -c -F -e {pattern} {file}", file="file")
    count_any = recipe("count_any", "question", "grep -c -i -F -e {pattern} {file}", file="file")
    other = recipe("other", "question", "wc -l {file}", file="file")
    recipes = {r.name: r for r in (count, count_any, other)}
    # the words favour the case-minding twin far above its twin (they rarely say "any case")
    ranked = [cand("count", 0.6), cand("other", -0.2), cand("count_any", -0.6)]
    values = read_task(task)
    order = [c.name for c in rerank(ranked, recipes, task, values)]
    assert order[0] == first
    assert order.index("count_any") < order.index("other") or first == "count"
    # a recipe with no twin keeps its words' score
    assert [c.score for c in rerank(ranked, recipes, task, values) if c.name == "other"] == [
        -0.2 + adjust(other, shape_of(task, values), values)
    ]


def test_a_case_twin_the_ranker_left_out_is_put_beside_its_twin() -> None:
    files = recipe("files_with", "question", "grep -rlF -e {pattern} {dir}", dir="dir")
    files_any = recipe("files_with_any", "question", "grep -rliF -e {pattern} {dir}", dir="dir")
    other = recipe("other", "question", "ls {dir}", dir="dir")
    recipes = {r.name: r for r in (files, files_any, other)}
    task = "which notes in /srv/notes mention the dentist?"  # unquoted, lower case: any case
    ranked = [cand("files_with", 0.3), cand("other", -0.2)]
    order = [c.name for c in rerank(ranked, recipes, task, read_task(task))]
    assert order[0] == "files_with_any" and set(order) == set(recipes)


def test_a_recipe_that_neither_takes_nor_reads_the_file_named_drops() -> None:
    sudoers = recipe("sudo_users", "question", "getent group sudo wheel")
    names = recipe("server_names", "question", "grep server_name /etc/nginx/nginx.conf")
    records = recipe("records_where", "question", "jq . {file}", file="file")
    task = "who is the admin in ~/data/staff.json?"
    values = read_task(task)
    shape = shape_of(task, values)
    assert adjust(records, shape, values) == 0
    assert adjust(sudoers, shape, values) < adjust(records, shape, values) - 0.5
    # a recipe that reads the file named by itself is not ignoring it
    task = "which server names are set in /etc/nginx/nginx.conf?"
    values = read_task(task)
    shape = shape_of(task, values)
    assert adjust(names, shape, values) > adjust(sudoers, shape, values)


def test_a_pattern_of_names_the_task_quotes_wants_a_recipe_that_takes_one() -> None:
    every_dupe = recipe("remove_duplicate_files", "action", "find {dir} -delete", dir="dir?")
    by_name = recipe(
        "delete_by_glob", "action", "find {dir} -name {glob} -delete", dir="dir?", glob="glob"
    )
    exact = recipe(
        "delete_by_name", "action", "find {dir} -name {name} -delete", dir="dir?", name="name"
    )
    by_ext = recipe(
        "delete_by_extension", "action", "find {dir} -name '*.{ext}' -delete", dir="dir?", ext="ext"
    )
    task = "Old exports in /srv/out have names starting with 'export_'; get rid of them."
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.globs == ("export_*",)
    assert adjust(by_name, shape, values) == 0.0
    # a file's exact name is no pattern, and neither is every .csv for "*_old.csv"
    assert adjust(every_dupe, shape, values) < 0 and adjust(exact, shape, values) < 0
    assert adjust(by_ext, shape, values) < 0
    dotted = "Remove the files of /srv/out whose names end in '.part'."
    assert adjust(by_ext, shape_of(dotted, read_task(dotted)), read_task(dotted)) == 0.0


@pytest.mark.parametrize(
    ("task", "coarse"),
    [
        ("Delete whatever in /srv/spool was not touched in the last 24 hours.", True),
        ("Remove the files in /srv/spool older than 18 hours.", True),
        ("Remove the files in /srv/spool older than 3 days.", False),
        ("Which files in /srv/spool changed in the last 24 hours?", False),  # -mtime -1 is right
    ],
)
def test_older_than_a_day_or_so_wants_minutes_not_find_days(task: str, coarse: bool) -> None:
    in_days = recipe("delete_older_than_days", "action", "find {dir} -mtime +{days}", dir="dir?")
    in_days = replace(in_days, slots={**in_days.slots, "days": Slot("days", "days")})
    in_minutes = recipe("delete_older_than_minutes", "action", "find {dir} -mmin +{minutes}")
    in_minutes = replace(
        in_minutes, slots={"dir": Slot("dir", "dir"), "minutes": Slot("minutes", "minutes")}
    )
    values = read_task(task)
    shape = shape_of(task, values)
    assert (adjust(in_days, shape, values) < adjust(in_minutes, shape, values)) is coarse


def test_lines_extracted_and_saved_are_answered_by_a_question_saved_there_too() -> None:
    matching = recipe("show_matching_lines", "question", "grep -e {pattern} {file}")
    matching = replace(
        matching, slots={"file": Slot("file", "file"), "pattern": Slot("pattern", "pattern")}
    )
    on_date = recipe("log_lines_on_date", "question", "grep '^{date}' {file}")
    on_date = replace(on_date, slots={"file": Slot("file", "file"), "date": Slot("date", "date")})
    task = (
        "Pull every line mentioning 'refused' out of /srv/app/app.log and save them to /tmp/r.txt."
    )
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.kind == ""  # it changes no file but the one it saves
    assert adjust(matching, shape, values) == 0.0
    # a date slot takes a quoted date, not the word to look for
    assert adjust(on_date, shape, values) < 0
    dated = "Pull the lines of '2024-05-02' out of /srv/app/app.log and save them to /tmp/r.txt."
    assert adjust(on_date, shape_of(dated, read_task(dated)), read_task(dated)) == 0.0
    deleting = "Delete the lines mentioning 'refused' from /srv/app/app.log and save it to /tmp/r."
    assert shape_of(deleting, read_task(deleting)).kind == "action"


def test_a_request_that_only_saves_what_it_finds_is_not_done_by_moving_files() -> None:
    mover = recipe(
        "files_larger_than", "action", "find {dir} -size +{size} -exec mv -t {dest} {} +"
    )
    mover = replace(
        mover,
        slots={n: Slot(n, t) for n, t in (("dir", "dir"), ("size", "size"), ("dest", "dir"))},
    )
    lister = recipe("find_larger_than", "question", "find {dir} -type f -size +{size}")
    lister = replace(lister, slots={"dir": Slot("dir", "dir"), "size": Slot("size", "size")})
    task = "Find every file over 50MB in /srv/media and save their paths to /tmp/big.txt."
    values = read_task(task)
    shape = shape_of(task, values)
    assert adjust(mover, shape, values) < adjust(lister, shape, values) == 0.0
    moving = "Move every file over 50MB in /srv/media to /srv/big, then save a list to /tmp/b.txt."
    said = read_task(moving)
    assert not shape_of(moving, said).saving_only
    assert adjust(mover, shape_of(moving, said), said) > adjust(
        lister, shape_of(moving, said), said
    )


def test_a_quoted_word_fits_a_choice_only_when_it_is_one_of_its_choices() -> None:
    level = recipe("log_count_level", "question", "grep -c -w {level} {file}")
    level = replace(
        level,
        slots={
            "file": Slot("file", "file"),
            "level": Slot("level", "choice", choices=("ERROR", "WARN")),
        },
    )
    said = "How many lines of /srv/app.log say 'completed'?"
    assert adjust(level, shape_of(said, read_task(said)), read_task(said)) < 0
    chosen = "How many lines of /srv/app.log say 'WARN'?"
    assert adjust(level, shape_of(chosen, read_task(chosen)), read_task(chosen)) == 0.0


GZIP_EACH_OF_EXT = recipe(
    "gzip_by_ext", "action", "find {dir} -name '*.{ext}' -exec gzip -- {} +", dir="dir?", ext="ext"
)
GZIP_EACH_LARGER = recipe(
    "find_larger_than_then_gzip",
    "action",
    "find {dir} -type f -size +{size} -exec gzip -- {} +",
    dir="dir?",
    size="size",
)


def test_an_action_that_cannot_be_told_the_limit_said_drops_below_one_that_can() -> None:
    # it would compress every file of the folder where the task says which: a gap the
    # words alone leave (0.4 here) is not enough to keep it first
    task = "Compress the logs in /srv/pulse bigger than 50MB into individual '.gz' files."
    values = read_task(task)
    ranked = [cand("gzip_by_ext", -0.2), cand("find_larger_than_then_gzip", -0.6)]
    recipes = {"gzip_by_ext": GZIP_EACH_OF_EXT, "find_larger_than_then_gzip": GZIP_EACH_LARGER}
    assert rerank(ranked, recipes, task, values)[0].name == "find_larger_than_then_gzip"
    # a question that cannot be told it costs less: it only shows too much
    listing = recipe("list_logs", "question", "find {dir} -name '*.log'", dir="dir?")
    asked = "Which logs in /srv/pulse are bigger than 50MB?"
    shown = read_task(asked)
    acted = adjust(GZIP_EACH_OF_EXT, shape_of(task, values), values)
    assert acted < adjust(listing, shape_of(asked, shown), shown) < 0.0


def test_an_archive_the_task_names_is_not_made_by_compressing_each_file_in_place() -> None:
    in_place = recipe(
        "log_compress_old",
        "action",
        "find {dir} -name '*.log' -mtime +{days} -exec gzip -- {} +",
        dir="dir?",
        days="days?",
    )
    packed = recipe(
        "older_than_days_then_archive",
        "action",
        "find {dir} -type f -mtime +{days} -print0 | tar -czf {archive} --null -T -",
        dir="dir",
        days="days",
        archive="archive",
    )
    task = "Pack the log files in /srv/audit older than 60 days into one archive named 'aged.tgz'."
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.packs
    ranked = [cand("log_compress_old", 0.0), cand("older_than_days_then_archive", -0.65)]
    recipes = {"log_compress_old": in_place, "older_than_days_then_archive": packed}
    assert rerank(ranked, recipes, task, values)[0].name == "older_than_days_then_archive"
    gzip_each = "Gzip each log file in /srv/audit older than 60 days."
    assert not shape_of(gzip_each, read_task(gzip_each)).packs


def test_unpacking_archives_is_not_compressing_files() -> None:
    unpack = recipe(
        "extract_all_tarballs",
        "action",
        "find {dir} -name '*.tar.gz' -o -name '*.tar' | while read -r a; do tar -xf \"$a\"; done",
        dir="dir?",
    )
    task = "Compress every '.tar' file in /srv/dumps into '.tar.gz' format."
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.act == "gzip"
    assert adjust(unpack, shape, values) < adjust(GZIP_EACH_OF_EXT, shape, values) == 0.0


def test_an_action_that_cannot_be_told_the_pattern_quoted_costs_more_than_a_question() -> None:
    # deleting every duplicate where the task says "the ones ending in '_copy.txt'" removes
    # files it never named; a question that shows too many changes nothing
    every_dupe = recipe("remove_duplicate_files", "action", "find {dir} -delete", dir="dir?")
    shown = recipe("duplicate_files", "question", "find {dir} | md5sum", dir="dir?")
    act = "Remove the files in /srv/up whose names end in '_copy.txt'."
    ask = "Which files in /srv/up have names ending in '_copy.txt'?"
    acted, asked = read_task(act), read_task(ask)
    assert (
        adjust(every_dupe, shape_of(act, acted), acted)
        < adjust(shown, shape_of(ask, asked), asked)
        < 0.0
    )


def test_a_count_that_ignores_the_quoted_text_fits_worse_than_one_that_ignores_the_kind() -> None:
    # counting every .dat file answers another question; counting every file that says
    # 'ERROR' answers a wider one, often the same where the folder holds only .dat files
    by_kind = recipe(
        "count_by_extension", "question", "find {dir} -name '*.{ext}' | wc -l", dir="dir", ext="ext"
    )
    by_text = recipe(
        "count_files_containing",
        "question",
        "grep -rlF -e {pattern} {dir} | wc -l",
        dir="dir",
        pattern="pattern",
    )
    task = "The /srv/feed folder holds '.dat' files. How many of them contain the string 'ERROR'?"
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.texts == ("ERROR",) and shape.kinds_of_file == ("dat",)
    assert adjust(by_kind, shape, values) < adjust(by_text, shape, values) < 0.0


def test_deleting_by_days_what_is_older_than_a_day_costs_more_than_listing_it() -> None:
    # "-mtime +1" passes over the files one to two days old: a delete would leave files the
    # task wants gone, a list would only miss them
    purge = recipe(
        "delete_older_than_days",
        "action",
        "find {dir} -mtime +{days} -delete",
        dir="dir",
        days="days",
    )
    listing = recipe(
        "older_than_days", "question", "find {dir} -mtime +{days}", dir="dir", days="days"
    )
    act = "Remove the files in /srv/spool not modified in the last 24 hours."
    ask = "Which files in /srv/spool were not modified in the last 24 hours?"
    acted, asked = read_task(act), read_task(ask)
    assert shape_of(act, acted).under_two_days and shape_of(ask, asked).under_two_days
    assert (
        adjust(purge, shape_of(act, acted), acted)
        < adjust(listing, shape_of(ask, asked), asked)
        < 0.0
    )


def test_a_recipe_that_runs_the_named_file_is_kept_only_when_running_is_asked() -> None:
    from shellagent.recipes.fitness import runs_unasked

    run_script = recipe("run_script", "action", "{script}", script="file")
    chmod = recipe("make_executable", "action", "chmod +x -- {file}", file="file")
    asked = "run ~/bin/cleanup.sh for me"
    unasked = "grant /usr/local/bin/backup.sh execute permissions for the owner"
    assert not runs_unasked(run_script, reading_of(asked))
    assert runs_unasked(run_script, reading_of(unasked))
    assert not runs_unasked(chmod, reading_of(unasked))


def test_a_size_asked_beside_each_file_wants_a_recipe_that_prints_sizes() -> None:
    # the largest file's path alone, as a pick of a selection prints it, answers half
    path_only = recipe(
        "files_under_largest",
        "question",
        "find {dir} -type f -printf '%s\\t%p\\0' | sort -z -rn | head -z -n 1 | cut -z -f2-",
        dir="dir?",
    )
    with_size = recipe(
        "largest_file_with_size",
        "question",
        "find {dir} -maxdepth 1 -type f -printf '%s\\t%f\\n' | sort -rn | head -n 1",
        dir="dir?",
    )
    listed = recipe("list_by_size", "question", "ls -lhS {dir}", dir="dir?")
    task = (
        "Identify the largest file in /srv/db and write its name and size in bytes to /tmp/x.txt."
    )
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.sizes and not values.reading.names_only
    assert adjust(with_size, shape, values) == 0.0 and adjust(listed, shape, values) == 0.0
    assert adjust(path_only, shape, values) < 0
    # the size as a limit asks for no size printed
    limit = "Which files in /srv/db are larger than 10MB?"
    assert not shape_of(limit, read_task(limit)).sizes


@pytest.mark.parametrize(
    ("task", "asked", "other"),
    [
        ("One file under /srv/inbox is empty. Which one?", "files", "folders"),
        ("which directories below /srv/inbox hold nothing at all", "folders", "files"),
    ],
)
def test_files_are_not_answered_with_folders_nor_folders_with_files(
    task: str, asked: str, other: str
) -> None:
    selects = {
        "files": recipe("empty_files", "question", "find {dir} -type f -empty", dir="dir?"),
        "folders": recipe("empty_dirs", "question", "find {dir} -type d -empty", dir="dir?"),
    }
    values = read_task(task)
    shape = shape_of(task, values)
    assert shape.objects == asked
    assert adjust(selects[asked], shape, values) > adjust(selects[other], shape, values)
    both = "the files and folders under /srv/inbox that are empty"
    either = shape_of(both, read_task(both))
    assert adjust(selects["files"], either, read_task(both)) == adjust(
        selects["folders"], either, read_task(both)
    )


@functools.cache
def _shipped(name: str) -> Recipe:
    from shellagent.recipes import DATA_DIR, load

    return load([DATA_DIR]).recipes[name]


@pytest.mark.parametrize(
    ("task", "selection", "unsaid"),
    [
        # nothing said of a size, emptiness or an age: those selections fit by chance
        ("Count the log files in /srv/data, subfolders included.", "find_smaller_than", True),
        ("Count the log files in /srv/data, subfolders included.", "empty_files", True),
        ("how many files are in /srv/data and below", "recently_modified", True),
        ("which files in /srv/www can anyone read", "find_world_writable", False),
        ("list the files in /srv/data, subfolders too", "hidden_files", True),
        # said by a word or a value: the narrowing is asked
        ("count the files in /srv/data smaller than 2k", "find_smaller_than", False),
        ("how many tiny files are in /srv/data", "find_smaller_than", False),
        ("how many files in /srv/data are empty", "empty_files", False),
        ("count the files in /srv/data changed recently", "recently_modified", False),
        ("count the files in /srv/data edited in the last 3 days", "recently_modified", False),
        ("which files in /srv/bin are executable", "find_executables", False),
        ("list the hidden files in /srv/data", "hidden_files", False),
        # selections that narrow by nothing, or by what a slot is told
        ("Count the log files in /srv/data, subfolders included.", "files_under", False),
        ("count the .log files in /srv/data", "list_by_extension", False),
    ],
)
def test_a_selection_that_narrows_by_something_unsaid_is_told_apart(
    task: str, selection: str, unsaid: bool
) -> None:
    from shellagent.recipes.fitness import narrows_unsaid

    assert narrows_unsaid(_shipped(selection), read_task(task)) is unsaid
