"""Text: extract, transform, count and edit lines with grep, sed, awk, cut, sort, uniq."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
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
