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
    reported,
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
    use = d.recipe("csv_sum_column", file=file, field="amount")
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=number(total),
        answer="The amounts add up to {out}.",
        slots={"file": file, "column": "amount"},
        wrong_answers=(f"{total - rows[0][3]}", f"{total + 1}"),
        kind="question",
        recipes=(use,),
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
    use = d.recipe("csv_filter_rows", file=file, field="city", value=city, out=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(
            use.command,
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
        recipes=(use,),
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
    use = d.recipe("csv_count_distinct", file=file, field="product")
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=number(len(products)),
        answer=f"{{out}} different products appear in {file}.",
        slots={"file": file, "column": "product"},
        wrong_answers=tuple(
            f"{n} products" for n in sorted({len(rows), len(products) + 1} - {len(products)})
        ),
        kind="question",
        recipes=(use,),
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
    use = d.recipe("csv_top_row", file=file, field="amount")
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=all_of(token(str(top[3])), has(top[0]), no_token(str(runner_up[3]))),
        answer="The biggest amount: {out}",
        slots={"file": file},
        wrong_answers=(",".join(map(str, runner_up)),),
        kind="question",
        recipes=(use,),
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
    use = d.recipe("json_get_field", file=file, field=which)
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(doc, indent=2))} > {path(file)}"),
        gold=(use.command,),
        check=token(value),
        answer=f"{which} in {file}: {{out}}",
        slots={"file": file, "field": which},
        wrong_answers=(f"{pool}", "1.0.0"),
        kind="question",
        recipes=(use,),
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
    use = d.recipe("json_filter", file=file, field="active", value="true", show="login")
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(records))} > {path(file)}"),
        gold=(use.command,),
        check=all_of(has(*active), lacks(*inactive)),
        answer="Active: {out|lines}.",
        slots={"file": file},
        wrong_answers=(", ".join(inactive), ", ".join(active + inactive)),
        kind="question",
        recipes=(use,),
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
    use = d.recipe("json_set_field", file=file, field=key, value=value)
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(doc, indent=2))} > {path(file)}"),
        gold=(
            use.command,
            f"jq -c . {path(file)}",
        ),
        check=all_of(
            f"jq -e {q(f'.{key} == {json.dumps(parsed)}')} {path(file)} >/dev/null",
            f"jq -e {q(f'.name == {json.dumps(app)}')} {path(file)} >/dev/null",
        ),
        answer=f"{file} is now: {{out}}",
        slots={"file": file, "field": key},
        recipes=(use,),
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
    use = d.recipe("json_count", file=file, field="status", value=status)
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(jobs))} > {path(file)}"),
        gold=(use.command,),
        check=number(n),
        answer=f"{{out}} entries have status {status}.",
        slots={"file": file, "status": status},
        wrong_answers=(f"{len(jobs)} entries", f"{n + 1} entries"),
        kind="question",
        recipes=(use,),
    )


def _dated_sales(d: Draw) -> tuple[str, str, list[tuple[str, str, str, int]]]:
    """``_sales`` with one row a day, at most ten: no row's line is the start of another's,
    so a row is matched as a fixed string."""
    where, file, rows = _sales(d)
    by_day = {r[0]: r for r in rows}
    return where, file, sorted(by_day.values())[:10]


def _line(row: tuple[str, str, str, int]) -> str:
    return ",".join(map(str, row))


@family("csv_show_matching_rows", "data", "the rows of a CSV whose column equals a value")
def csv_show_matching_rows(d: Draw) -> Instance:
    other: list[str] = []
    while not other:  # rows of another city too, or the check refuses nothing
        where, file, rows = _dated_sales(d)
        city = d.pick([r[2] for r in rows])
        said = city.lower() if d.chance(0.4) else city  # as a person types it
        matching = [_line(r) for r in rows if r[2] == city]
        other = [_line(r) for r in rows if r[2] != city]
    task = d.phrase(
        (
            "Which rows of {file} are for {city}? Show them.",
            "Show me the lines of {file} whose city is {city}.",
            "What did we sell in {city}? The rows of {file}, please.",
        ),
        file=file,
        city=said,
    )
    use = d.recipe("csv_show_matching_rows", file=file, field="city", value=said)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=reported(matching, other),
        answer=f"The {city} rows: {{out|lines}}",
        slots={"file": file, "column": "city", "value": said},
        wrong_answers=(", ".join(other), ", ".join(matching + other)),
        kind="question",
        recipes=(use,),
    )


@family("csv_count_matching", "data", "how many rows of a CSV have a value in a column")
def csv_count_matching(d: Draw) -> Instance:
    where, file, rows = _sales(d)
    product = d.pick([r[1] for r in rows])
    n = sum(1 for r in rows if r[1] == product)
    task = d.phrase(
        (
            "How many rows of {file} are for the product {product}?",
            "Count the {product} lines in {file}.",
            "In {file}, how many records have {product} as their product?",
        ),
        file=file,
        product=product,
    )
    wrong = sorted({len(rows), n + 1, n - 1} - {n, 0})
    use = d.recipe("csv_count_matching", file=file, field="product", value=product)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=number(n),
        answer=f"{{out}} rows of {file} are for {product}.",
        slots={"file": file, "column": "product", "value": product},
        wrong_answers=tuple(f"{w} rows" for w in wrong),
        kind="question",
        recipes=(use,),
    )


@family("csv_rows_below", "data", "the rows of a CSV whose amount is under a number")
def csv_rows_below(d: Draw) -> Instance:
    amounts: list[int] = []
    while len(amounts) < 3:  # a limit with rows on both sides of it
        where, file, rows = _dated_sales(d)
        amounts = sorted({r[3] for r in rows})
    limit = d.pick(amounts[1:-1])  # a value some rows have: "under" leaves them out
    below = [_line(r) for r in rows if r[3] < limit]
    rest = [_line(r) for r in rows if r[3] >= limit]
    task = d.phrase(
        (
            "Which rows of {file} have an amount under {limit}?",
            "Show me the entries of {file} where the amount is less than {limit}.",
            "List the small sales in {file}: amount below {limit}.",
        ),
        file=file,
        limit=limit,
    )
    use = d.recipe("csv_rows_below", file=file, field="amount", number=limit)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *_csv_lines(rows))),
        gold=(use.command,),
        check=reported(below, rest),
        answer=f"Rows with an amount under {limit}: {{out|lines}}",
        slots={"file": file, "column": "amount", "number": str(limit)},
        wrong_answers=(", ".join(rest), ", ".join(below + rest)),
        kind="question",
        recipes=(use,),
    )


@family("json_records_where", "data", "the JSON records whose field equals a value")
def json_records_where(d: Draw) -> Instance:
    where, _ = _json_file(d)
    roles = ("admin", "editor", "viewer")
    role, given = "", [""]
    while not (role in given and any(g != role for g in given)):  # both kinds of account
        people = d.people(d.num(4, 6))
        role = d.pick(roles)
        given = [role] * d.num(1, 2) + [d.pick([r for r in roles if r != role]) for _ in people]
        given = d.shuffled(given[: len(people)])
    accounts = [(lg, full, g) for (lg, full), g in zip(people, given, strict=True)]
    records = [{"login": lg, "name": full, "role": g} for lg, full, g in accounts]
    file = join(where, d.pick(("users.json", "accounts.json", "team.json")))
    wanted = [lg for lg, _, g in accounts if g == role]
    others = [lg for lg, _, g in accounts if g != role]
    task = d.phrase(
        (
            "Which users in {file} have the role {role}?",
            "Show me the {role} accounts listed in {file}.",
            "Who in {file} has the {role} role? Give me their records.",
        ),
        file=file,
        role=role,
    )
    use = d.recipe("json_records_where", file=file, field="role", value=role)
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(records))} > {path(file)}"),
        gold=(use.command,),
        check=reported(wanted, others),
        answer=f"The {role} records: {{out|lines}}",
        slots={"file": file, "field": "role", "value": role},
        wrong_answers=(", ".join(others), ", ".join(wanted + others)),
        kind="question",
        recipes=(use,),
    )


@family("json_records_above", "data", "the JSON records whose number is over a limit")
def json_records_above(d: Draw) -> Instance:
    where, _ = _json_file(d)
    ids = [f"ord-{n}" for n in d.sample(range(1000, 9999), d.num(5, 8))]
    totals = d.sample(range(5, 900), len(ids))
    limit = d.pick(sorted(totals)[1:-1])  # one order sits at the limit: "over" leaves it out
    records = [
        {"id": i, "total": t, "items": d.num(1, 9)} for i, t in zip(ids, totals, strict=True)
    ]
    file = join(where, d.pick(("orders.json", "invoices.json", "sales.json")))
    over = [i for i, t in zip(ids, totals, strict=True) if t > limit]
    rest = [i for i, t in zip(ids, totals, strict=True) if t <= limit]
    task = d.phrase(
        (
            "Which orders in {file} have a total over {limit}?",
            "Show the records of {file} whose total is more than {limit}.",
            "List the entries in {file} with a total above {limit}.",
        ),
        file=file,
        limit=limit,
    )
    use = d.recipe("json_records_above", file=file, field="total", number=limit)
    return Instance(
        task=task,
        setup=(mkdir(where), f"echo {q(json.dumps(records))} > {path(file)}"),
        gold=(use.command,),
        check=reported(over, rest),
        answer=f"Over {limit}: {{out|lines}}",
        slots={"file": file, "field": "total", "number": str(limit)},
        wrong_answers=(", ".join(rest), ", ".join(over + rest)),
        kind="question",
        recipes=(use,),
    )
