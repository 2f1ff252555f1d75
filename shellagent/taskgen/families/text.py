"""Text: extract, transform, count and edit lines with grep, sed, awk, cut, sort, uniq."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    age,
    all_of,
    file_is,
    join,
    mkdir,
    no_token,
    number,
    path,
    q,
    reported,
    token,
    write,
)


def _text_file(d: Draw) -> tuple[str, str]:
    where, _ = d.some_dir()
    name = d.pick(("notes.txt", "journal.txt", "ideas.md", "draft.txt", "words.txt", "log.txt"))
    return where, join(where, name)


def _sentences(d: Draw, k: int, avoid: tuple[str, ...] = ()) -> list[str]:
    pool = [w for w in vocab.WORDS if w not in avoid]
    lines: list[str] = []
    while len(lines) < k:
        line = " ".join(d.sample(pool, d.num(3, 6)))
        if line not in lines:
            lines.append(line)
    return lines


def _with_word(d: Draw, k_with: int, k_without: int) -> tuple[str, list[str], list[str]]:
    word = d.pick(vocab.WORDS)
    plain = _sentences(d, k_with + k_without, avoid=(word,))
    marked = []
    for line in plain[:k_with]:
        words = line.split()
        words.insert(d.num(0, len(words)), word)
        marked.append(" ".join(words))
    return word, marked, plain[k_with:]


@family("replace_in_file", "text", "replace a string everywhere in a file")
def replace_in_file(d: Draw) -> Instance:
    app = d.service()
    conf = join(d.app_dir("config", app), d.pick(("app.conf", f"{app}.ini", "settings.conf")))
    old_host, new_host = (f"{w}.internal" for w in d.sample(vocab.WORDS, 2))
    n = d.num(2, 5)
    keys = d.sample(("primary", "replica", "cache", "queue", "search", "metrics", "auth"), n)
    lines = [f"{k}_host = {old_host}" for k in keys]
    lines += [f"timeout = {d.num(5, 60)}", f"name = {app}", f"workers = {d.num(2, 16)}"]
    lines = d.shuffled(lines)
    task = d.phrase(
        (
            "In {conf}, change every occurrence of {old} to {new}.",
            "We moved servers: replace {old} with {new} throughout {conf}.",
            "Swap {old} for {new} everywhere in {conf}.",
        ),
        conf=conf,
        old=old_host,
        new=new_host,
    )
    use = d.recipe("replace_in_file", file=conf, old=old_host, new=new_host)
    return Instance(
        task=task,
        setup=(mkdir(conf.rsplit("/", 1)[0]), write(conf, *lines)),
        gold=(
            use.command,
            f"grep -n {q(new_host)} {path(conf)}",
        ),
        check=all_of(
            f"! grep -qF {q(old_host)} {path(conf)}",
            f'[ "$(grep -cF {q(new_host)} {path(conf)})" -eq {n} ]',
            f'[ "$(wc -l < {path(conf)})" -eq {len(lines)} ]',
            f"grep -qx {q(f'name = {app}')} {path(conf)}",
        ),
        answer=f"Replaced {old_host} with {new_host}; these lines now use it: {{out|lines}}.",
        slots={"conf": conf, "old": old_host, "new": new_host},
        recipes=(use,),
    )


@family("extract_column", "text", "one column of a delimited file into another file")
def extract_column(d: Draw) -> Instance:
    where, _ = d.some_dir()
    people = d.people(d.num(4, 9))
    if d.chance(0.5):
        src = join(where, "contacts.csv")
        header = "name,email,city"
        rows = [f"{full},{login}@example.org,{d.pick(vocab.CITIES)}" for login, full in people]
        column, number_, sep, wanted = "email", 2, ",", [f"{lg}@example.org" for lg, _ in people]
    else:
        src = join(where, "accounts.txt")
        header = "login:uid:shell"
        rows = [f"{login}:{2000 + i}:/bin/bash" for i, (login, _) in enumerate(people)]
        column, number_, sep, wanted = "login", 1, ":", [lg for lg, _ in people]
    out = d.pick((f"/tmp/{column}s.txt", join(where, f"{column}-list.txt")))
    task = d.phrase(
        (
            "Write the {column} column of {src} to {out}, one per line, without the header.",
            "From {src}, take just the {column} field of every record (skip the header line) "
            "and save it as {out}.",
        ),
        column=column,
        src=src,
        out=out,
    )
    use = d.recipe("extract_column", file=src, column=number_, sep=sep, output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(src, header, *rows)),
        gold=(
            use.command,
            f"wc -l < {path(out)}",
        ),
        check=file_is(out, *wanted),
        answer=f"Wrote {{out}} values of the {column} column to {out}.",
        slots={"src": src, "out": out, "column": column},
        recipes=(use,),
    )


@family("unique_sorted", "text", "the distinct lines of a file, sorted")
def unique_sorted(d: Draw) -> Instance:
    where, _ = d.some_dir()
    src = join(where, d.pick(("tags.txt", "visitors.txt", "hosts.txt", "words.txt")))
    words = d.sample(vocab.WORDS + vocab.SERVICES, d.num(4, 9))
    lines = d.shuffled(words + d.sample(words, d.num(2, len(words))) * d.num(1, 2))
    out = join(where, d.pick(("unique.txt", "distinct.txt", "sorted-unique.txt")))
    task = d.phrase(
        (
            "{src} has repeated lines. Write each distinct line once, sorted alphabetically, to "
            "{out}.",
            "Deduplicate {src} into {out}: every line once, in alphabetical order.",
        ),
        src=src,
        out=out,
    )
    use = d.recipe("unique_sorted", file=src, output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(src, *lines)),
        gold=(use.command, f"wc -l < {path(out)}"),
        check=file_is(out, *sorted(set(words))),
        answer=f"{out} has the {{out}} distinct lines, sorted.",
        slots={"src": src, "out": out},
        recipes=(use,),
    )


@family("count_matching_lines", "text", "how many lines mention a word")
def count_matching_lines(d: Draw) -> Instance:
    where, file = _text_file(d)
    word, marked, plain = _with_word(d, d.num(2, 9), d.num(3, 9))
    lines = d.shuffled(marked + plain)
    task = d.phrase(
        (
            "How many lines of {file} mention {word}?",
            "In {file}, count the lines containing the word {word}.",
            "how many lines in {file} have '{word}' in them?",
        ),
        file=file,
        word=word,
    )
    n = len(marked)
    use = d.recipe("count_matching_lines", file=file, pattern=word)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command,),
        check=number(n),
        answer=f"{{out}} lines of {file} mention {word}.",
        slots={"file": file, "word": word},
        wrong_answers=(f"{n + 1} lines", f"{len(lines)} lines"),
        kind="question",
        recipes=(use,),
    )


@family("line_count", "text", "how many lines a file has")
def line_count(d: Draw) -> Instance:
    where, file = _text_file(d)
    n = d.num(3, 40)
    lines = _sentences(d, n)
    task = d.phrase(
        (
            "How many lines does {file} have?",
            "What's the line count of {file}?",
            "count the lines in {file} for me",
        ),
        file=file,
    )
    use = d.recipe("line_count", file=file)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command,),
        check=number(n),
        answer="Line count: {out}.",
        slots={"file": file},
        wrong_answers=(f"{n - 1} lines", f"{n + 1} lines"),
        kind="question",
        recipes=(use,),
    )


def _config(d: Draw) -> tuple[str, str, list[tuple[str, str]]]:
    app = d.service()
    where = d.app_dir("config", app)
    conf = join(where, d.pick((f"{app}.conf", "server.ini", "app.cfg")))
    others = [
        ("host", f"{d.pick(vocab.WORDS)}.lan"),
        ("data_dir", f"/var/lib/{app}"),
        ("max_clients", str(d.num(10, 500))),
        ("log_level", d.pick(("debug", "info", "warning"))),
        ("cache_size", f"{d.num(16, 512)}M"),
    ]
    pairs = [("port", str(d.num(1025, 9999))), *d.sample(others, d.num(3, 5))]
    return where, conf, d.shuffled(pairs)


@family("config_value", "text", "what a key is set to in a config file")
def config_value(d: Draw) -> Instance:
    where, conf, pairs = _config(d)
    key, value = d.pick(pairs)
    stale = {"port": str(int(value) + 1) if value.isdigit() else value, "host": "old.lan"}.get(
        key, value + "0"
    )
    lines = ["[main]", f"# {key} = {stale}"] + [f"{k} = {v}" for k, v in pairs]
    task = d.phrase(
        (
            "What is {key} set to in {conf}?",
            "Which value does {conf} give {key}?",
            "Look up the {key} setting in {conf}.",
        ),
        key=key,
        conf=conf,
    )
    use = d.recipe("config_value", file=conf, key=key)
    return Instance(
        task=task,
        setup=(mkdir(where), write(conf, *lines)),
        gold=(use.command,),
        check=all_of(token(value), no_token(stale)),
        answer=f"In {conf}: {{out}}",
        slots={"conf": conf, "key": key},
        wrong_answers=(stale, f"{key} = {stale}"),
        kind="question",
        recipes=(use,),
    )


@family("config_set_value", "text", "change one setting in a config file")
def config_set_value(d: Draw) -> Instance:
    where, conf, pairs = _config(d)
    env_style = d.chance(0.5)
    key, old = d.pick([p for p in pairs if p[1].isdigit()] or pairs[:1])
    new = str(int(old) * 2) if old.isdigit() else old + "-new"
    if env_style:
        conf = conf.rsplit(".", 1)[0] + ".env.conf"
        lines = [f"{k.upper()}={v}" for k, v in pairs]
        name = key.upper()
    else:
        lines = [f"{k} = {v}" for k, v in pairs]
        name = key
    task = d.phrase(
        (
            "Set {name} to {new} in {conf}.",
            "Change the {name} setting in {conf} from {old} to {new}.",
            "{conf}: {name} should be {new} now.",
        ),
        name=name,
        new=new,
        old=old,
        conf=conf,
    )
    active = f"grep -E '^\\s*{name}\\s*=' {path(conf)}"
    use = d.recipe("config_set_value", file=conf, key=name, value=new)
    return Instance(
        task=task,
        setup=(mkdir(where), write(conf, *lines)),
        gold=(use.command, active),
        check=all_of(
            f'[ "$({active} | wc -l)" -eq 1 ]',
            f"{active} | grep -Eq {q('=[[:space:]]*' + new + '[[:space:]]*$')}",
            f'[ "$(wc -l < {path(conf)})" -eq {len(lines)} ]',
        ),
        answer="Now set: {out}.",
        slots={"conf": conf, "key": name, "value": new},
        recipes=(use,),
    )


@family("head_tail_save", "text", "the first or last N lines of a file into another")
def head_tail_save(d: Draw) -> Instance:
    where, file = _text_file(d)
    lines = _sentences(d, d.num(8, 25))
    n = d.num(2, 6)
    first = d.chance(0.5)
    which = "first" if first else "last"
    out = join(where, f"{which}-{n}.txt")
    task = d.phrase(
        (
            "Save the {which} {n} lines of {file} into {out}.",
            "Copy just the {which} {n} lines from {file} to {out}.",
        ),
        which=which,
        n=n,
        file=file,
        out=out,
    )
    use = d.recipe("head_save" if first else "tail_save", file=file, count=n, output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command, f"cat {path(out)}"),
        check=file_is(out, *(lines[:n] if first else lines[-n:])),
        answer=f"{out} now holds: {{out|lines}}",
        slots={"file": file, "out": out, "count": str(n)},
        recipes=(use,),
    )


@family("strip_comments", "text", "a config without its comment and blank lines")
def strip_comments(d: Draw) -> Instance:
    where, conf, pairs = _config(d)
    active = [f"{k} = {v}" for k, v in pairs]
    lines: list[str] = []
    for line in active:
        if d.chance(0.6):
            lines.append(d.pick(("# tuned for production", "  # see the manual", "#", "")))
        lines.append(line)
    lines += ["", "# end of file"]
    out = d.pick(("/tmp/clean.conf", join(where, "active.conf")))
    task = d.phrase(
        (
            "Write {conf} without its comment lines and blank lines to {out}.",
            "I only want the active settings of {conf}: copy it to {out} minus comments and "
            "empty lines.",
        ),
        conf=conf,
        out=out,
    )
    use = d.recipe("strip_comments", file=conf, output=out)
    return Instance(
        task=task,
        setup=(mkdir(where), write(conf, *lines)),
        gold=(use.command, f"cat {path(out)}"),
        check=file_is(out, *active),
        answer=f"Active settings written to {out}: {{out|lines}}",
        slots={"conf": conf, "out": out},
        recipes=(use,),
    )


@family("show_matching_lines", "text", "show the lines that mention a word")
def show_matching_lines(d: Draw) -> Instance:
    where, file = _text_file(d)
    word, marked, plain = _with_word(d, d.num(1, 4), d.num(3, 8))
    lines = d.shuffled(marked + plain)
    task = d.phrase(
        (
            "Show me the lines in {file} that mention {word}.",
            "Which lines of {file} contain '{word}'?",
            "grep {file} for {word} and show me what matches",
        ),
        file=file,
        word=word,
    )
    use = d.recipe("show_matching_lines", file=file, pattern=word)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command,),
        check=reported(marked, plain),
        answer="The matching lines: {out|lines}",
        slots={"file": file, "word": word},
        wrong_answers=(plain[0], "\n".join(lines)),
        kind="question",
        recipes=(use,),
    )


def _folder_with_word(d: Draw) -> tuple[str, str, str, list[str], list[int]]:
    """A folder of text files, one of them in a subfolder, some mentioning a word on one
    or more lines and the others not: (dir, spoken dir, word, setup, how many lines of
    each file mention it). At least one file mentions it twice, so counting files and
    counting lines give different answers."""
    where, spoken = d.some_dir()
    word = d.pick(vocab.WORDS)
    names = [
        f"{stem}.{d.pick(('txt', 'log', 'md'))}" for stem in d.stems(d.num(4, 7), vocab.DOC_STEMS)
    ]
    sub = join(where, d.pick([w for w in vocab.WORDS if w != word]))
    files = [join(sub if i == 1 else where, n) for i, n in enumerate(names)]
    hits = [d.pick((0, 1, 2, 3, 4)) for _ in files]
    hits[0] = max(hits[0], 2)
    hits[-1] = 0
    setup = [mkdir(where, sub)]
    for f, k in zip(files, hits, strict=True):
        word_, marked, plain = _with_word(d, k, d.num(1, 4))
        marked = [line.replace(word_, word) for line in marked]
        plain = [line for line in plain if word not in line.split()]
        setup.append(write(f, *d.shuffled(marked + plain)))
    return where, spoken, word, setup, hits


@family("count_matching_lines_in_folder", "text", "how many lines mention a word across a folder")
def count_matching_lines_in_folder(d: Draw) -> Instance:
    where, spoken, word, setup, hits = _folder_with_word(d)
    task = d.phrase(
        (
            "Across every file in {dir}, how many lines contain {word}?",
            "One total, please: lines mentioning {word} in all the files under {dir}.",
            "How many {word} lines do the files of {dir} hold altogether, subfolders too?",
            "Count the lines that say {word} in {dir}, summed over all its files.",
        ),
        dir=spoken,
        word=word,
    )
    total = sum(hits)
    files = sum(1 for k in hits if k)
    use = d.recipe("count_matching_lines_in_folder", dir=where, pattern=word)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(total),
        answer=f"{{out}} lines in the files of {where} mention {word}.",
        slots={"dir": where, "word": word},
        wrong_answers=tuple(f"{n} lines" for n in sorted({files, total + 1} - {total})),
        kind="question",
        recipes=(use,),
    )


@family("count_files_containing", "text", "how many files of a folder mention a word")
def count_files_containing(d: Draw) -> Instance:
    where, spoken, word, setup, hits = _folder_with_word(d)
    task = d.phrase(
        (
            "How many of the files in {dir} mention {word} at least once?",
            "In {dir} and below, count the files that have {word} somewhere in them.",
            "How many files under {dir} contain the word {word}? Files, not lines.",
            "Tell me the number of files in {dir} where {word} appears.",
        ),
        dir=spoken,
        word=word,
    )
    files = sum(1 for k in hits if k)
    use = d.recipe("count_files_containing", dir=where, pattern=word)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(files),
        answer=f"{{out}} files in {where} mention {word}.",
        slots={"dir": where, "word": word},
        wrong_answers=tuple(f"{n} files" for n in sorted({sum(hits), len(hits)} - {files})),
        kind="question",
        recipes=(use,),
    )


@family("head_of_each_file", "text", "the first lines of every file of a folder")
def head_of_each_file(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    count = d.pick((1, 1, 2))
    names = sorted(f"{stem}.txt" for stem in d.stems(d.num(3, 4), vocab.DOC_STEMS))
    # short lines, none in two files: what the answer must hold and what it must not
    # stay apart, and the answer stays short
    sizes = [count + d.num(1, 3) for _ in names]
    pool: list[str] = []
    while len(pool) < sum(sizes):
        line = " ".join(d.sample(vocab.WORDS, 3))
        if not any(line in other or other in line for other in pool):
            pool.append(line)
    lines = [pool[sum(sizes[:i]) : sum(sizes[: i + 1])] for i in range(len(names))]
    heads = [line for each in lines for line in each[:count]]
    rest = [line for each in lines for line in each[count:]]
    said = "first line" if count == 1 else f"first {count} lines"
    task = d.phrase(
        (
            "Show me the {said} of each file in {dir}.",
            "Give the {said} of every file in {dir}, one file after another.",
            "Print the {said} of all the files sitting in {dir}.",
            "For each file directly in {dir}, give its {said}.",
        ),
        dir=spoken,
        said=said,
    )
    use = d.recipe("head_of_each_file", dir=where, count=count)
    setup = [mkdir(where)]
    setup += [write(join(where, n), *each) for n, each in zip(names, lines, strict=True)]
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported(heads, rest),
        answer=f"The {said} of each file in {where}: {{out|lines}}",
        slots={"dir": where, "count": str(count)},
        wrong_answers=("\n".join(rest), "\n".join(heads + rest)),
        kind="question",
        recipes=(use,),
    )


def _dated_names(d: Draw) -> tuple[str, str, list[str], list[str]]:
    """A folder of files with a date in their names, one undated, the oldest date
    modified last (so the dates are read from the names, not the clock): (dir, spoken
    dir, setup, the distinct dates oldest first)."""
    where, spoken = d.some_dir()
    prefix = d.pick(("backup", "report", "export", "dump", "snapshot", d.service()))
    days = d.sample(range(1, 28), d.num(3, 5))
    months = [d.num(1, 12) for _ in days]
    years = [d.pick((2023, 2024, 2025)) for _ in days]
    dates = sorted(
        {f"{y}-{m:02d}-{day:02d}" for y, m, day in zip(years, months, days, strict=True)}
    )
    ext = d.pick(("tar.gz", "csv", "log", "sql"))
    setup = [mkdir(where)]
    for i, when in enumerate(dates):
        named = join(where, f"{prefix}_{when}.{ext}")
        setup += [write(named, when), age(named, 0, i + 1)]
    setup.append(write(join(where, f"{d.pick(vocab.DOC_STEMS)}.txt"), "no date here"))
    return where, spoken, setup, dates


def _dates_in_order(dates: list[str]) -> str:
    """The answer or the last output names ``dates`` in this order (each once, nothing
    else that looks like a date)."""
    want = " ".join(dates)
    seen = "grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' \"$1\" | awk '!s[$0]++' | paste -sd' '"
    return f'_seen() {{ [ "$({seen})" = {q(want)} ]; }}; _seen "$ANSWER" || _seen "$LAST_OUTPUT"'


@family("dates_in_names", "text", "the dates written in a folder's file names, oldest first")
def dates_in_names(d: Draw) -> Instance:
    where, spoken, setup, dates = _dated_names(d)
    task = d.phrase(
        (
            "Which dates appear in the names of the files in {dir}? Earliest first.",
            "Read the YYYY-MM-DD stamps off the file names in {dir}, oldest to newest.",
            "List the dates the files in {dir} have in their names, in chronological order.",
        ),
        dir=spoken,
    )
    use = d.recipe("dates_in_names", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=_dates_in_order(dates),
        answer="The dates in the names, oldest first: {out|lines}",
        slots={"dir": where},
        wrong_answers=(" ".join(reversed(dates)), " ".join(dates[1:])),
        kind="question",
        recipes=(use,),
    )


@family(
    "dates_in_names_newest_first",
    "text",
    "the dates written in a folder's file names, newest first",
)
def dates_in_names_newest_first(d: Draw) -> Instance:
    where, spoken, setup, dates = _dated_names(d)
    task = d.phrase(
        (
            "Which dates appear in the names of the files in {dir}? Latest first.",
            "Read the YYYY-MM-DD stamps off the file names in {dir}, newest at the top.",
            "List the dates the files in {dir} carry in their names, most recent first.",
        ),
        dir=spoken,
    )
    use = d.recipe("dates_in_names_newest_first", dir=where)
    newest = list(reversed(dates))
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=_dates_in_order(newest),
        answer="The dates in the names, newest first: {out|lines}",
        slots={"dir": where},
        wrong_answers=(" ".join(dates), " ".join(newest[1:])),
        kind="question",
        recipes=(use,),
    )
