"""CSV and JSON: sums, filters, counts and edits with awk, cut, sort and jq."""

from __future__ import annotations

import json

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    has,
    is_file,
    join,
    lacks,
    mkdir,
    no_token,
    number,
    path,
    q,
    token,
    write,
)


def _sales(d: Draw) -> tuple[str, str, list[tuple[str, str, str, int]]]:
    """A sales CSV: (dir, file, rows of (date, product, city, amount))."""
    where, _ = d.some_dir()
    file = join(where, d.pick(("sales.csv", "orders.csv", "expenses.csv", "export.csv")))
    products = d.sample(vocab.PRODUCTS, d.num(3, 6))
    cities = d.sample(vocab.CITIES, d.num(2, 4))
    rows = []
    for _ in range(d.num(5, 14)):
        day = f"2024-{d.num(1, 12):02d}-{d.num(1, 28):02d}"
        rows.append((day, d.pick(products), d.pick(cities), d.num(3, 900)))
    rows.sort()
    return where, file, rows


def _csv_lines(rows: list[tuple[str, str, str, int]]) -> list[str]:
    return ["date,product,city,amount"] + [f"{a},{b},{c},{n}" for a, b, c, n in rows]


@family("csv_sum_column", "data", "the total of a CSV column")
def csv_sum_column(d: Draw) -> Instance:
    where, file, rows = _sales(d)
    total = sum(r[3] for r in rows)
    task = d.phrase(
        (
            "What's the total of the amount column in {file}?",
            "Add up the amounts in {file}. What do they come to?",
            "sum the 'amount' field of {file} for me",
        ),
        file=file,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(f"awk -F, 'NR > 1 {{ s += $4 }} END {{ print s }}' {path(file)}",),
        check=number(total),
        answer="The amounts add up to {out}.",
        slots={"file": file, "column": "amount"},
        wrong_answers=(f"{total - rows[0][3]}", f"{total + 1}"),
        kind="question",
    )


@family("csv_filter_rows", "data", "the rows of a CSV matching a value, into a file")
def csv_filter_rows(d: Draw) -> Instance:
    where, file, rows = _sales(d)
    city = d.pick([r[2] for r in rows])
    matching = [r for r in rows if r[2] == city]
    out = join(where, f"{city.lower()}.csv")
    task = d.phrase(
        (
            "Write the rows of {file} whose city is {city} to {out}, keeping the header line.",
            "Make {out} with only the {city} records from {file} (header first).",
        ),
        file=file,
        city=city,
        out=out,
    )
    header = "date,product,city,amount"
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(
            f"{{ head -1 {path(file)}; awk -F, '$3 == \"{city}\"' {path(file)}; }} > {path(out)}",
            f"wc -l < {path(out)}",
        ),
        check=all_of(
            is_file(out),
            f'[ "$(head -1 {path(out)})" = {q(header)} ]',
            f"[ \"$(tail -n +2 {path(out)} | grep -c ',{city},')\" -eq {len(matching)} ]",
            f'[ "$(wc -l < {path(out)})" -eq {len(matching) + 1} ]',
        ),
        answer=f"{out} has {{out}} lines: the header and the {city} rows.",
        slots={"file": file, "out": out, "value": city},
    )


@family("csv_count_distinct", "data", "how many distinct values a CSV column has")
def csv_count_distinct(d: Draw) -> Instance:
    where, file, rows = _sales(d)
    products = {r[1] for r in rows}
    task = d.phrase(
        (
            "How many different products appear in {file}?",
            "Count the distinct values of the product column in {file}.",
        ),
        file=file,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(f"tail -n +2 {path(file)} | cut -d, -f2 | sort -u | wc -l",),
        check=number(len(products)),
        answer=f"{{out}} different products appear in {file}.",
        slots={"file": file, "column": "product"},
        wrong_answers=tuple(
            f"{n} products" for n in sorted({len(rows), len(products) + 1} - {len(products)})
        ),
        kind="question",
    )


@family("csv_top_row", "data", "the row with the highest value")
def csv_top_row(d: Draw) -> Instance:
    where, file, rows = _sales(d)
    amounts = d.sample(range(3, 900), len(rows))
    rows = [(a, b, c, n) for (a, b, c, _), n in zip(rows, amounts, strict=True)]
    top = max(rows, key=lambda r: r[3])
    task = d.phrase(
        (
            "Which line of {file} has the biggest amount? Show me that record.",
            "Find the largest single amount in {file} and tell me which product and date it was.",
        ),
        file=file,
    )
    runner_up = sorted(rows, key=lambda r: -r[3])[1]
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(f"tail -n +2 {path(file)} | sort -t, -k4 -rn | head -1",),
        check=all_of(token(str(top[3])), has(top[0]), no_token(str(runner_up[3]))),
        answer="The biggest amount: {out}",
        slots={"file": file},
        wrong_answers=(",".join(map(str, runner_up)),),
        kind="question",
    )


def _json_file(d: Draw) -> tuple[str, str]:
    app = d.service()
    where = d.pick((f"~/projects/{app}", f"/srv/{app}", f"/opt/{app}"))
    return where, app


@family("json_get_field", "data", "read a (nested) field from a JSON file")
def json_get_field(d: Draw) -> Instance:
    where, app = _json_file(d)
    version = f"{d.num(0, 9)}.{d.num(0, 30)}.{d.num(0, 20)}"
    port = d.num(1025, 9999)
    host = f"{d.pick(vocab.WORDS)}.lan"
    pool = d.num(2, 40)
    doc = {
        "name": app,
        "version": version,
        "database": {"host": host, "port": port, "pool": pool},
        "features": d.sample(vocab.WORDS, 3),
    }
    which = d.pick(("version", "database.host", "database.port"))
    value = {"version": version, "database.host": host, "database.port": str(port)}[which]
    file = join(where, d.pick(("config.json", "package.json", "settings.json")))
    spoken = {
        "version": "version",
        "database.host": "database host",
        "database.port": "database port",
    }
    task = d.phrase(
        (
            "What {what} is set in {file}?",
            "Read the {what} from {file}.",
            "which {what} does {file} specify?",
        ),
        what=spoken[which],
        file=file,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(doc, indent=2))} > {path(file)}"),
        gold=(f"jq -r .{which} {path(file)}",),
        check=token(value),
        answer=f"{which} in {file}: {{out}}",
        slots={"file": file, "field": which},
        wrong_answers=(f"{pool}", "1.0.0"),
        kind="question",
    )


@family("json_filter", "data", "names of the JSON records that match a condition")
def json_filter(d: Draw) -> Instance:
    where, _ = _json_file(d)
    people = d.people(d.num(4, 7))
    k = d.num(1, len(people) - 1)
    flags = d.shuffled([True] * k + [False] * (len(people) - k))
    records = [
        {"login": lg, "name": full, "active": flag, "uid": 3000 + i}
        for i, ((lg, full), flag) in enumerate(zip(people, flags, strict=True))
    ]
    file = join(where, "users.json")
    active = [lg for (lg, _), flag in zip(people, flags, strict=True) if flag]
    inactive = [lg for (lg, _), flag in zip(people, flags, strict=True) if not flag]
    task = d.phrase(
        (
            "Which users in {file} are active? Give me their logins.",
            "List the logins of the active accounts in {file}.",
        ),
        file=file,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(records))} > {path(file)}"),
        gold=(f"jq -r '.[] | select(.active) | .login' {path(file)}",),
        check=all_of(has(*active), lacks(*inactive)),
        answer="Active: {out|lines}.",
        slots={"file": file},
        wrong_answers=(", ".join(inactive), ", ".join(active + inactive)),
        kind="question",
    )


@family("json_set_field", "data", "change a value in a JSON file")
def json_set_field(d: Draw) -> Instance:
    where, app = _json_file(d)
    doc = {"name": app, "debug": True, "workers": d.num(2, 8), "log_level": "debug"}
    key, value, literal = d.pick(
        (
            ("debug", "false", False),
            ("workers", str(d.num(9, 32)), None),
            ("log_level", '"warning"', "warning"),
        )
    )
    parsed = int(value) if literal is None else literal
    file = join(where, "config.json")
    task = d.phrase(
        (
            "Set {key} to {shown} in {file}, keeping it valid JSON.",
            "In {file}, change the {key} field to {shown}.",
        ),
        key=key,
        shown=value.strip('"'),
        file=file,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(doc, indent=2))} > {path(file)}"),
        gold=(
            f"jq '.{key} = {value}' {path(file)} > /tmp/config.json && mv /tmp/config.json "
            f"{path(file)}",
            f"jq -c . {path(file)}",
        ),
        check=all_of(
            f"jq -e {q(f'.{key} == {json.dumps(parsed)}')} {path(file)} >/dev/null",
            f"jq -e {q(f'.name == {json.dumps(app)}')} {path(file)} >/dev/null",
        ),
        answer=f"{file} is now: {{out}}",
        slots={"file": file, "field": key},
    )


@family("json_count", "data", "count the JSON records with a given status")
def json_count(d: Draw) -> Instance:
    where, app = _json_file(d)
    statuses = ("ok", "failed", "pending")
    status = d.pick(statuses)
    n = d.num(1, 8)
    others = [d.pick([s for s in statuses if s != status]) for _ in range(d.num(2, 8))]
    jobs = [{"id": i + 1, "status": s} for i, s in enumerate(d.shuffled([status] * n + others))]
    file = join(where, d.pick(("jobs.json", "runs.json", "tasks.json")))
    task = d.phrase(
        (
            "How many entries in {file} have status {status}?",
            "Count the {status} jobs listed in {file}.",
        ),
        file=file,
        status=status,
    )
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(jobs))} > {path(file)}"),
        gold=(f"jq '[.[] | select(.status == \"{status}\")] | length' {path(file)}",),
        check=number(n),
        answer=f"{{out}} entries have status {status}.",
        slots={"file": file, "status": status},
        wrong_answers=(f"{len(jobs)} entries", f"{n + 1} entries"),
        kind="question",
    )
