"""Reading a recurring request: whole requests split into what to do and when (and the
requests that say no recurrence). The terms' own examples run with the lexicon's
(tests/recipes/test_lexicon.py)."""

from __future__ import annotations

import pytest

from shellagent.recipes.lexicon import lexicon as words
from shellagent.recipes.recurrence import lexicon, names_cron_file, split_recurrence


def test_every_term_is_a_lexicon_entry_with_examples() -> None:
    for name, term in lexicon().items():
        assert term.entry is words()[f"recurrence.{name}"] and term.entry.match


@pytest.mark.parametrize(
    ("request_text", "what", "when"),
    [
        ("back up Documents weekly", "back up Documents", "every Monday at 09:00"),
        (
            "every day at 18:00 copy todo.txt to ~/Backups",
            "copy todo.txt to ~/Backups",
            "every day at 18:00",
        ),
        ("back up ~/Documents every Sunday", "back up ~/Documents", "every Sunday at 09:00"),
        (
            "at 6pm every Friday, empty ~/Downloads/tmp",
            "empty ~/Downloads/tmp",
            "every Friday at 18:00",
        ),
        (
            "nightly, copy notes.txt to ~/Backups",
            "copy notes.txt to ~/Backups",
            "every day at 23:00",
        ),
        ("archive ~/logs each month", "archive ~/logs", "on day 1 of every month at 09:00"),
        (
            "copy notes.txt to ~/Backups every 2 hours",
            "copy notes.txt to ~/Backups",
            "every 2 hours at minute 0 (from midnight)",
        ),
        (
            "on weekdays at 9 back up ~/work",
            "back up ~/work",
            "every weekday (Monday to Friday) at 09:00",
        ),
        ("back up ~/Documents hourly", "back up ~/Documents", "every hour at minute 0"),
        (
            "copy x.log to ~/b every hour at minute 15",
            "copy x.log to ~/b",
            "every hour at minute 15",
        ),
        (
            "every morning, list the files in ~/Downloads",
            "list the files in ~/Downloads",
            "every day at 08:00",
        ),
        ("every evening at 7 sync ~/notes to ~/usb", "sync ~/notes to ~/usb", "every day at 19:00"),
        ("set up a weekly backup of ~/Documents", "back up ~/Documents", "every Monday at 09:00"),
        (
            "Please back up ~/Documents into ~/Backups every Sunday at 3am.",
            "Please back up ~/Documents into ~/Backups.",
            "every Sunday at 03:00",
        ),
        (
            "back up ~/Documents on the 15th of every month",
            "back up ~/Documents",
            "on day 15 of every month at 09:00",
        ),
        ("Can you empty ~/tmp every night?", "Can you empty ~/tmp?", "every day at 23:00"),
        ("Sundays at 3am, back up ~/Documents", "back up ~/Documents", "every Sunday at 03:00"),
        (
            "My notes live in ~/notes. Copy them to ~/Backups once a week.",
            "My notes live in ~/notes. Copy them to ~/Backups.",
            "every Monday at 09:00",
        ),
        (
            "set up a job that deletes the files in ~/tmp every day at noon",
            "deletes the files in ~/tmp",
            "every day at 12:00",
        ),
    ],
)
def test_a_recurring_request_splits_into_what_and_when(
    request_text: str, what: str, when: str
) -> None:
    found = split_recurrence(request_text)
    assert found is not None
    assert found[1].schedule is not None
    assert (found[0], found[1].schedule.words()) == (what, when)


@pytest.mark.parametrize(
    "text",
    [
        "what did I change last week",
        "the weekly report file is too big, delete it",
        "Delete the weekly report file",
        "find files older than a month in ~/Downloads",
        "The billing service writes daily reports to /srv/bill. Gzip the ones from May.",
        "The logs in /var/log/app are rotated daily. Delete the ones older than 30 days.",
        "Merge last week's logs into one file called weekly_summary.txt",
        "copy the files that change daily to ~/x",
        "Which script in ~/dotfiles/crontab.txt runs at midnight?",
        "how many requests came in for every day in access.log",
        "make a folder for each month in ~/photos",
        "on which days did we commit, and how much each day?",
        "check that the backup is made every day",
        "show me the monthly totals in expenses.csv",
        "open the file named 'weekly'",
        "add a line to /etc/cron.d/shop that runs backup.sh every day at 07:05",
        "put backup.sh into ~/dotfiles/crontab.txt to run every night",
        "list the daily archives in /backups",
    ],
)
def test_a_request_that_says_no_recurrence_is_not_split(text: str) -> None:
    assert split_recurrence(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "back up my photos every other day",
        "every 15 minutes copy x to y",
        "copy x to y twice a day",
    ],
)
def test_a_recurrence_no_job_can_keep_is_read_with_the_reason(text: str) -> None:
    found = split_recurrence(text)
    assert found is not None
    assert found[1].schedule is None and "cannot be kept by a job" in found[1].problem


def test_a_cron_file_is_named_only_by_a_cron_file() -> None:
    assert names_cron_file("add it to /etc/cron.d/backup")
    assert not names_cron_file("add a cron job that backs up ~/Documents every night")
