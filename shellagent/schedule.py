"""Schedules in a form a small model can fill in, turned into systemd and cron expressions.

A schedule is ``every`` (hour, day, weekday, week, month) plus ``at`` (HH:MM, minutes only
for hourly), ``step`` (every N hours, N dividing 24), ``on`` (a weekday for weekly) and
``day`` (1–28 for monthly); ``weekday`` is every day from Monday to Friday. From it come the
words shown to the user, a systemd ``OnCalendar`` expression, the cron line and the next
run time, all computed here, so neither a model nor a recipe ever writes calendar syntax.

The units and weekdays listed here are the only ones: the schedule action's grammar
(``agent/actions.py``), the job file's format (``shellagent.jobs.store``) and the reading
of a recurring request (``shellagent.recipes.recurrence``) take them from this module. It
sits in layer 0 so that the recipes (layer 1), the agent (2) and the jobs (3) share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, get_args

from shellagent.errors import InputError

Unit = Literal["hour", "day", "weekday", "week", "month"]
EVERY: tuple[Unit, ...] = get_args(Unit)
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ALIASES = {
    "hourly": "hour",
    "daily": "day",
    "weekdays": "weekday",
    "weekly": "week",
    "monthly": "month",
}
# every N hours: N divides the day, so the runs fall at the same hours every day (systemd's
# ``00/N`` and cron's ``*/N`` both restart at midnight)
HOUR_STEPS = (1, 2, 3, 4, 6, 8, 12)


@dataclass(frozen=True)
class Schedule:
    every: Unit
    at: str = "09:00"
    on: str = "mon"
    day: int = 1
    step: int = 1

    @classmethod
    def parse(
        cls,
        every: str,
        at: str | None = None,
        on: str | None = None,
        day: int | None = None,
        step: int | None = None,
    ) -> Schedule:
        """Validate loosely written fields (``weekly``, ``Monday``, ``9:00``)."""
        key = every.strip().lower()
        unit = next((u for u in EVERY if u == ALIASES.get(key, key)), None)
        if unit is None:
            raise InputError(f"unknown schedule {every!r}", hint=f"use one of: {', '.join(EVERY)}")
        hour, minute = 9, 0
        if at:
            match = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?", at.strip())
            if not match:
                raise InputError(f"time {at!r} is not HH:MM")
            hour, minute = int(match.group(1)), int(match.group(2) or 0)
            if unit == "hour" and not match.group(2):  # "at 15" hourly = minute 15
                hour, minute = 0, hour
            if hour > 23 or minute > 59:
                raise InputError(f"time {at!r} is out of range")
        weekday = (on or "mon").strip().lower()[:3]
        if weekday not in WEEKDAYS:
            raise InputError(f"unknown weekday {on!r}")
        month_day = day or 1
        if not 1 <= month_day <= 28:
            raise InputError(f"day {day} must be between 1 and 28 (every month has it)")
        hours = step or 1
        if hours not in HOUR_STEPS or (hours > 1 and unit != "hour"):
            raise InputError(
                f"every {hours} hours cannot be scheduled",
                hint=f"hours between runs: one of {', '.join(map(str, HOUR_STEPS))}",
            )
        return cls(unit, f"{hour:02d}:{minute:02d}", weekday, month_day, hours)

    @property
    def _hm(self) -> tuple[int, int]:
        hour, minute = self.at.split(":")
        return int(hour), int(minute)

    def words(self) -> str:
        hour, minute = self._hm
        if self.every == "hour":
            if self.step > 1:
                return f"every {self.step} hours at minute {minute} (from midnight)"
            return f"every hour at minute {minute}"
        if self.every == "day":
            return f"every day at {self.at}"
        if self.every == "weekday":
            return f"every weekday (Monday to Friday) at {self.at}"
        if self.every == "week":
            return f"every {WEEKDAY_NAMES[WEEKDAYS.index(self.on)]} at {self.at}"
        return f"on day {self.day} of every month at {self.at}"

    def on_calendar(self) -> str:
        hour, minute = self._hm
        if self.every == "hour":
            hours = f"00/{self.step}" if self.step > 1 else "*"
            return f"*-*-* {hours}:{minute:02d}:00"
        if self.every == "day":
            return f"*-*-* {hour:02d}:{minute:02d}:00"
        if self.every == "weekday":
            return f"Mon..Fri *-*-* {hour:02d}:{minute:02d}:00"
        if self.every == "week":
            return f"{self.on.capitalize()} *-*-* {hour:02d}:{minute:02d}:00"
        return f"*-*-{self.day:02d} {hour:02d}:{minute:02d}:00"

    def cron(self) -> str:
        hour, minute = self._hm
        if self.every == "hour":
            return f"{minute} {f'*/{self.step}' if self.step > 1 else '*'} * * *"
        if self.every == "day":
            return f"{minute} {hour} * * *"
        if self.every == "weekday":
            return f"{minute} {hour} * * 1-5"
        if self.every == "week":
            return f"{minute} {hour} * * {(WEEKDAYS.index(self.on) + 1) % 7}"
        return f"{minute} {hour} {self.day} * *"

    def next_run(self, after: datetime) -> datetime:
        """The first run strictly after ``after`` (local time, naive or aware alike)."""
        hour, minute = self._hm
        if self.every == "hour":
            candidate = after.replace(minute=minute, second=0, microsecond=0)
            if candidate <= after:
                candidate += timedelta(hours=1)
            while candidate.hour % self.step:
                candidate += timedelta(hours=1)
            return candidate
        candidate = after.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if self.every in ("day", "weekday"):
            if candidate <= after:
                candidate += timedelta(days=1)
            while self.every == "weekday" and candidate.weekday() > 4:
                candidate += timedelta(days=1)
            return candidate
        if self.every == "week":
            ahead = (WEEKDAYS.index(self.on) - candidate.weekday()) % 7
            candidate += timedelta(days=ahead)
            return candidate if candidate > after else candidate + timedelta(days=7)
        candidate = candidate.replace(day=self.day)
        if candidate > after:
            return candidate
        year, month = (after.year + 1, 1) if after.month == 12 else (after.year, after.month + 1)
        return candidate.replace(year=year, month=month)
