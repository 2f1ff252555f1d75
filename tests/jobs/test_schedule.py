"""Schedules: words, systemd OnCalendar, cron and the next run, from fields a model fills."""

from __future__ import annotations

from datetime import datetime

import pytest

from shellagent.errors import InputError
from shellagent.jobs import Schedule


@pytest.mark.parametrize(
    ("fields", "words", "calendar", "cron"),
    [
        (("hourly", "15"), "every hour at minute 15", "*-*-* *:15:00", "15 * * * *"),
        (("daily", "7:30"), "every day at 07:30", "*-*-* 07:30:00", "30 7 * * *"),
        (("weekly", "09:00", "Sunday"), "every Sunday at 09:00", "Sun *-*-* 09:00:00", "0 9 * * 0"),
        (("week", "18:05", "wed"), "every Wednesday at 18:05", "Wed *-*-* 18:05:00", "5 18 * * 3"),
        (
            ("monthly", "02:00", None, 15),
            "on day 15 of every month at 02:00",
            "*-*-15 02:00:00",
            "0 2 15 * *",
        ),
        (
            ("weekdays", "9"),
            "every weekday (Monday to Friday) at 09:00",
            "Mon..Fri *-*-* 09:00:00",
            "0 9 * * 1-5",
        ),
        (
            ("hour", "05", None, None, 2),
            "every 2 hours at minute 5 (from midnight)",
            "*-*-* 00/2:05:00",
            "5 */2 * * *",
        ),
    ],
)
def test_schedule_fields_become_words_oncalendar_and_cron(
    fields: tuple[object, ...], words: str, calendar: str, cron: str
) -> None:
    schedule = Schedule.parse(*fields)  # type: ignore[arg-type]
    assert (schedule.words(), schedule.on_calendar(), schedule.cron()) == (words, calendar, cron)


@pytest.mark.parametrize(
    ("fields", "after", "expected"),
    [
        (("daily", "09:00"), "2026-11-22 08:00", "2026-11-22 09:00"),
        (("daily", "09:00"), "2026-11-22 09:00", "2026-11-23 09:00"),
        (("weekly", "09:00", "mon"), "2026-11-22 10:00", "2026-11-23 09:00"),  # a Sunday
        (("weekly", "09:00", "sun"), "2026-11-22 10:00", "2026-11-29 09:00"),
        (("monthly", "03:00", None, 1), "2026-12-05 00:00", "2027-01-01 03:00"),
        (("hourly", "30"), "2026-11-22 10:45", "2026-11-22 11:30"),
        (("hour", "00", None, None, 6), "2026-11-22 10:45", "2026-11-22 12:00"),
        (("hour", "00", None, None, 6), "2026-11-22 23:10", "2026-11-23 00:00"),
        (("weekday", "09:00"), "2026-11-20 10:00", "2026-11-23 09:00"),  # a Friday
        (("weekday", "09:00"), "2026-11-23 08:00", "2026-11-23 09:00"),  # a Monday
    ],
)
def test_next_run_is_the_first_slot_strictly_after(
    fields: tuple[object, ...], after: str, expected: str
) -> None:
    schedule = Schedule.parse(*fields)  # type: ignore[arg-type]
    got = schedule.next_run(datetime.fromisoformat(after))
    assert got == datetime.fromisoformat(expected)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("fortnightly",), "unknown schedule"),
        (("daily", "25:00"), "out of range"),
        (("daily", "noon"), "HH:MM"),
        (("weekly", "09:00", "someday"), "unknown weekday"),
        (("monthly", "09:00", None, 31), "between 1 and 28"),
        (("hourly", "00", None, None, 5), "every 5 hours cannot be scheduled"),
        (("daily", "09:00", None, None, 2), "every 2 hours cannot be scheduled"),
    ],
)
def test_bad_schedule_fields_are_clear_errors(fields: tuple[object, ...], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Schedule.parse(*fields)  # type: ignore[arg-type]
