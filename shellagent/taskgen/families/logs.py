"""Logs: count, filter, extract, rotate, compress and truncate them."""

from __future__ import annotations

import datetime as dt

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    age,
    all_of,
    exists,
    file_has,
    is_file,
    join,
    missing,
    mkdir,
    mode_is,
    no_token,
    number,
    path,
    q,
    reported,
    token,
    write,
)

LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
MONTHS = "January February March April May June July August September October November December"


def _days(d: Draw, k: int) -> list[dt.date]:
    start = dt.date(2023, 1, 1) + dt.timedelta(days=d.num(0, 600))
    return [start + dt.timedelta(days=i) for i in range(k)]


def _spoken_date(d: Draw, day: dt.date) -> str:
    month = MONTHS.split()[day.month - 1]
    return d.pick(
        (day.isoformat(), f"{month} {day.day}, {day.year}", f"{day.day} {month} {day.year}")
    )


def _app_log(d: Draw, days: list[dt.date], counts: dict[str, int]) -> list[str]:
    """Lines ``DATE TIME LEVEL message``; ``counts`` fixes how many lines of each level."""
    entries = []
    for level, n in counts.items():
        for _ in range(n):
            day = d.pick(days)
            seconds = d.num(0, 86399)
            entries.append((day, seconds, level, d.pick(vocab.LOG_EVENTS[level])))
    entries.sort(key=lambda e: (e[0], e[1]))
    lines = []
    for day, seconds, level, message in entries:
        clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        lines.append(f"{day.isoformat()} {clock} {level} {message}")
    return lines


def _log_place(d: Draw) -> tuple[str, str]:
    app = d.service()
    where = d.app_dir("log", app)
    return where, join(where, d.pick((f"{app}.log", "app.log", "server.log", "current.log")))


@family("log_count_level", "logs", "how many lines of a level a log has")
def log_count_level(d: Draw) -> Instance:
    where, log = _log_place(d)
    level = d.pick(("ERROR", "WARN"))
    counts = {lv: d.num(2, 25) for lv in LEVELS}
    counts[level] = d.num(3, 30)
    lines = _app_log(d, _days(d, d.num(1, 3)), counts)
    task = d.phrase(
        (
            "How many {level} lines are in {log}?",
            "Count the {level}-level entries in {log}. What's the number?",
            "how many times did {log} record a {level}?",
        ),
        level=level,
        log=log,
    )
    n = counts[level]
    use = d.recipe("log_count_level", file=log, level=level)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command,),
        check=number(n),
        answer=f"{log} has {{out}} {level} lines.",
        slots={"log": log, "level": level},
        wrong_answers=(f"{n + 1} {level} lines", f"{len(lines)} lines"),
        kind="question",
        recipes=(use,),
    )


@family("log_extract_level", "logs", "copy the lines of one level into a file")
def log_extract_level(d: Draw) -> Instance:
    where, log = _log_place(d)
    level = d.pick(("ERROR", "WARN"))
    counts = {lv: d.num(2, 15) for lv in LEVELS}
    lines = _app_log(d, _days(d, 2), counts)
    out = d.pick(
        (
            f"/tmp/{level.lower()}s.txt",
            f"~/{level.lower()}-lines.log",
            join(where, f"{level.lower()}-only.log"),
        )
    )
    task = d.phrase(
        (
            "Put every {level} line from {log} into {out}.",
            "Extract the {level} entries of {log} and save them in {out}, nothing else.",
            "I only care about {level}s: write the {level} lines of {log} to {out}.",
        ),
        level=level,
        log=log,
        out=out,
    )
    n = counts[level]
    use = d.recipe("log_extract_level", file=log, level=level, output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command, f"wc -l < {path(out)}"),
        check=all_of(
            is_file(out),
            f"[ \"$(grep -c ' {level} ' {path(out)})\" -eq {n} ]",
            f'[ "$(wc -l < {path(out)})" -eq {n} ]',
        ),
        answer=f"Saved {{out}} {level} lines to {out}.",
        slots={"log": log, "level": level, "out": out},
        recipes=(use,),
    )


def _access_log(d: Draw, hits: dict[str, int], statuses: dict[str, int] | None = None) -> list[str]:
    day = _days(d, 1)[0]
    stamp = day.strftime("%d/%b/%Y")
    entries = [ip for ip, n in hits.items() for _ in range(n)]
    entries = d.shuffled(entries)
    codes: list[str] = []
    for code, n in (statuses or {}).items():
        codes += [code] * n
    codes += ["200"] * (len(entries) - len(codes))
    codes = d.shuffled(codes)
    lines = []
    for i, (ip, code) in enumerate(zip(entries, codes, strict=True)):
        seconds = 3600 * 8 + i * d.num(1, 40)
        clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        verb = d.pick(("GET", "GET", "GET", "POST"))
        lines.append(
            f'{ip} - - [{stamp}:{clock} +0000] "{verb} {d.pick(vocab.URL_PATHS)} HTTP/1.1" '
            f"{code} {d.num(120, 48000)}"
        )
    return lines


def _ips(d: Draw, k: int) -> list[str]:
    net = d.pick(("10.0", "192.168", "172.16"))
    seen: set[str] = set()
    while len(seen) < k:
        seen.add(f"{net}.{d.num(0, 9)}.{d.num(2, 250)}")
    return sorted(seen)


def _web_log(d: Draw) -> tuple[str, str]:
    site = d.service()
    where = d.pick(("/var/log/nginx", f"/var/log/{site}", f"/srv/{site}/logs"))
    return where, join(where, d.pick(("access.log", f"{site}-access.log")))


@family("log_top_ip", "logs", "the client address with the most requests")
def log_top_ip(d: Draw) -> Instance:
    where, log = _web_log(d)
    ips = _ips(d, d.num(3, 6))
    counts = sorted(d.sample(range(1, 12), len(ips) - 1), reverse=True)
    hits = dict(zip(ips[1:], counts, strict=True))
    hits[ips[0]] = counts[0] + d.num(2, 6)
    task = d.phrase(
        (
            "Which IP address made the most requests in {log}?",
            "Who hits the server hardest? Give me the top client IP from {log}.",
            "Find the busiest client address in the access log {log}.",
        ),
        log=log,
    )
    use = d.recipe("log_top_ip", file=log)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *_access_log(d, hits))),
        gold=(use.command,),
        check=all_of(token(ips[0]), no_token(*ips[1:])),
        answer="Requests and address of the busiest client: {out}.",
        slots={"log": log},
        wrong_answers=(ips[1], " ".join(ips)),
        kind="question",
        recipes=(use,),
    )


@family("log_status_count", "logs", "how many requests got a given status code")
def log_status_count(d: Draw) -> Instance:
    where, log = _web_log(d)
    code, other = d.sample(("404", "500", "403", "502", "301"), 2)
    ips = _ips(d, 4)
    hits = {ip: d.num(4, 12) for ip in ips}
    total = sum(hits.values())
    n = d.num(1, min(12, total // 2))
    m = d.num(1, total - n - 1)
    if m == n:
        m += 1
    task = d.phrase(
        (
            "How many requests in {log} returned {code}?",
            "Count the {code} responses in {log}.",
            "How often did the server answer with status {code}, according to {log}?",
        ),
        log=log,
        code=code,
    )
    use = d.recipe("log_status_count", file=log, code=code)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *_access_log(d, hits, {code: n, other: m}))),
        gold=(use.command,),
        check=number(n),
        answer=f"{{out}} requests returned {code}.",
        slots={"log": log, "status": code},
        wrong_answers=(f"{m} requests", f"{total} requests", f"{n + 1} requests"),
        kind="question",
        recipes=(use,),
    )


@family("log_rotate", "logs", "rotate a log by hand")
def log_rotate(d: Draw) -> Instance:
    where, log = _log_place(d)
    lines = _app_log(d, _days(d, 1), {"INFO": d.num(3, 8), "WARN": d.num(1, 3)})
    previous = d.chance(0.5)
    compress = d.chance(0.5)
    setup = [mkdir(where), write(log, *lines)]
    if previous:
        setup.append(write(log + ".1", "older rotation"))
    steps = []
    if previous:
        steps.append(f"the old {log}.1 becomes {log}.2,")
    task = d.phrase(
        (
            "Rotate {log} by hand: {prev}the current contents go to {log}.1{gz} and {log} "
            "starts out empty.",
            "Rotate the log {log} ({prev}current log to {log}.1{gz}, then a fresh empty {log}).",
        ),
        log=log,
        prev=" ".join(steps) + (" " if steps else ""),
        gz=" (gzip-compressed)" if compress else "",
    )
    first = lines[0]
    read = f"zcat {path(log + '.1.gz')}" if compress else f"cat {path(log + '.1')}"
    check = [is_file(log), f"[ ! -s {path(log)} ]", f"{read} | grep -qF -- {q(first)}"]
    if compress:
        check.append(missing(log + ".1"))
    if previous:
        check.append(file_has(log + ".2", "older rotation"))
    use = d.recipe("log_rotate_gzip" if compress else "log_rotate", file=log)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(where)}"),
        check=all_of(*check),
        answer=f"Rotated {log}; {where} now has: {{out|lines}}.",
        slots={"log": log, "dir": where},
        recipes=(use,),
    )


@family("log_compress_old", "logs", "gzip the logs not touched for N days")
def log_compress_old(d: Draw) -> Instance:
    where = d.app_dir("log")
    days = d.pick((3, 7, 14, 30))
    names = [f"{s}.log" for s in d.stems(d.num(4, 7), vocab.CODE_STEMS)]
    n_old = d.num(1, len(names) - 1)
    old, recent = names[:n_old], names[n_old:]
    setup = [mkdir(where)]
    for n in old:
        setup += [f"echo line > {path(join(where, n))}", age(join(where, n), days + d.num(2, 30))]
    for n in recent:
        setup += [f"echo line > {path(join(where, n))}", age(join(where, n), d.num(0, days - 2))]
    task = d.phrase(
        (
            "Gzip the .log files in {dir} that haven't changed in {days} days. Leave the recent "
            "ones uncompressed.",
            "Compress every log in {dir} older than {days} days with gzip; current logs stay as "
            "they are.",
        ),
        dir=where,
        days=days,
    )
    use = d.recipe("log_compress_old", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(f"{exists(join(where, n + '.gz'))} && {missing(join(where, n))}" for n in old),
            *(f"{exists(join(where, n))} && {missing(join(where, n + '.gz'))}" for n in recent),
        ),
        answer=f"Compressed the old logs; {where} now holds: {{out|lines}}.",
        slots={"dir": where, "days": str(days)},
        recipes=(use,),
    )


@family("log_lines_on_date", "logs", "the lines of a log from one day, into a file")
def log_lines_on_date(d: Draw) -> Instance:
    where, log = _log_place(d)
    days = _days(d, d.num(2, 4))
    lines = _app_log(d, days, {lv: d.num(2, 9) for lv in LEVELS[:3]})
    day = d.pick([x for x in days if any(line.startswith(x.isoformat()) for line in lines)])
    n = sum(1 for line in lines if line.startswith(day.isoformat()))
    out = d.pick((f"/tmp/{day.isoformat()}.log", f"~/{day.strftime('%b%d').lower()}.log"))
    task = d.phrase(
        (
            "Save the lines of {log} from {date} into {out}.",
            "I need everything {log} logged on {date}, in a file {out}.",
            "Copy the {date} entries of {log} to {out}.",
        ),
        log=log,
        date=_spoken_date(d, day),
        out=out,
    )
    use = d.recipe("log_lines_on_date", file=log, date=day.isoformat(), output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command, f"wc -l < {path(out)}"),
        check=all_of(
            is_file(out),
            f'[ "$(wc -l < {path(out)})" -eq {n} ]',
            f"! grep -qv '^{day.isoformat()}' {path(out)}",
        ),
        answer=f"Wrote {{out}} lines from {day.isoformat()} to {out}.",
        slots={"log": log, "date": day.isoformat(), "out": out},
        recipes=(use,),
    )


@family("log_truncate", "logs", "empty a log in place")
def log_truncate(d: Draw) -> Instance:
    where, log = _log_place(d)
    mode = d.pick(("640", "644", "600"))
    lines = _app_log(d, _days(d, 1), {"INFO": d.num(5, 20), "DEBUG": d.num(5, 20)})
    task = d.phrase(
        (
            "{log} has grown huge. Empty it without deleting it: the service keeps it open, so "
            "it must stay the same file with the same permissions.",
            "Truncate {log} to zero bytes in place (don't remove or recreate the file).",
        ),
        log=log,
    )
    use = d.recipe("log_truncate", file=log)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines), f"chmod {mode} {path(log)}"),
        gold=(use.command, f"stat -c '%s bytes, mode %a: %n' {path(log)}"),
        check=all_of(is_file(log), f"[ ! -s {path(log)} ]", mode_is(log, mode)),
        answer="Emptied it in place: {out}.",
        slots={"log": log},
        recipes=(use,),
    )


@family("log_error_day", "logs", "the day with the most errors")
def log_error_day(d: Draw) -> Instance:
    where, log = _log_place(d)
    days = _days(d, d.num(3, 5))
    per_day = sorted(d.sample(range(1, 9), len(days) - 1), reverse=True)
    worst = d.pick(days)
    others = [x for x in days if x != worst]
    errors = {worst: per_day[0] + d.num(2, 4), **dict(zip(others, per_day, strict=True))}
    lines: list[str] = []
    for day, n in errors.items():
        lines += _app_log(d, [day], {"ERROR": n, "INFO": d.num(2, 6)})
    lines.sort()
    task = d.phrase(
        (
            "On which day did {log} record the most errors?",
            "Which date had the most ERROR lines in {log}?",
            "Looking at {log}, what was the worst day for errors?",
        ),
        log=log,
    )
    use = d.recipe("log_error_day", file=log)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command,),
        check=all_of(token(worst.isoformat()), no_token(*(x.isoformat() for x in others))),
        answer="Most errors (count, date): {out}.",
        slots={"log": log},
        wrong_answers=(others[0].isoformat(), " ".join(x.isoformat() for x in days)),
        kind="question",
        recipes=(use,),
    )


@family("log_last_error", "logs", "show the latest error line")
def log_last_error(d: Draw) -> Instance:
    where, log = _log_place(d)
    lines = _app_log(d, _days(d, 2), {"INFO": d.num(4, 12), "ERROR": d.num(2, 5), "WARN": 3})
    errors = [line for line in lines if " ERROR " in line]
    stamps = [line[:19] for line in errors]
    task = d.phrase(
        (
            "Show me the most recent ERROR line in {log}.",
            "What was the last error {log} logged?",
            "Print the latest error entry from {log}.",
        ),
        log=log,
    )
    use = d.recipe("log_last_error", file=log)
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command,),
        check=reported([stamps[-1]], stamps[:-1]),
        answer="The last error: {out}",
        slots={"log": log},
        wrong_answers=(errors[0], "\n".join(errors)),
        kind="question",
        recipes=(use,),
    )


@family(
    "log_count_distinct_messages",
    "logs",
    "how many different messages of a level a log has, timestamps left out",
)
def log_count_distinct_messages(d: Draw) -> Instance:
    where, log = _log_place(d)
    level = d.pick(("ERROR", "WARN"))
    counts = {lv: d.num(2, 10) for lv in LEVELS}
    counts[level] = d.num(6, 20)  # more lines than messages: repeats to leave out
    lines = _app_log(d, _days(d, d.num(1, 3)), counts)
    if d.pick((False, True)):  # "[2024-03-05 10:00:01] ERROR: message" as well
        lines = [f"[{day} {clock}] {lv}: {rest}" for day, clock, lv, rest in _fields(lines)]
    distinct = len({rest for _, _, lv, rest in _fields(lines) if lv == level})
    task = d.phrase(
        (
            "How many different {level} messages are there in {log}? Count each text once.",
            "Leaving the timestamps aside, how many distinct {level} messages did {log} record?",
            "Count the unique {level} messages in {log}, repeats only once.",
        ),
        level=level,
        log=log,
    )
    use = d.recipe("log_count_distinct_messages", log=log, level=level)
    said = counts[level]
    return Instance(
        task=task,
        setup=(mkdir(where), write(log, *lines)),
        gold=(use.command,),
        check=number(distinct),
        answer=f"{log} has {{out}} different {level} messages.",
        slots={"log": log, "level": level},
        wrong_answers=tuple(f"{n} messages" for n in sorted({said, distinct + 1} - {distinct})),
        kind="question",
        recipes=(use,),
    )


def _fields(lines: list[str]) -> list[tuple[str, str, str, str]]:
    """(day, clock, level, message) of each line ``_app_log`` or its bracketed form wrote."""
    fields = []
    for line in lines:
        day, clock, level, rest = line.split(" ", 3)
        fields.append((day.lstrip("["), clock.rstrip("]"), level.rstrip(":"), rest))
    return fields
