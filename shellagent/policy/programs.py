"""What the policy knows about a command line: its options, operands and effects.

A program with a spec (``specs``) is read exactly, option by option (``options.read``);
``args_of`` turns that reading into the ``Args`` rules match on, and ``effects`` into paths
written and read and traits, running the script readers (sed, awk, dc, ``set``/``shopt``).
A program without a spec is read generically — short clusters split, ``--opt=value``, and a
small table of options that take a value — so that deny and ask rules still see its
operands and writes; such a program is never allowed (the engine requires a spec).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shellagent.policy.options import Reading
from shellagent.policy.scripts import (
    awk_program,
    dc_program,
    mawk_w,
    sed_script,
    set_words,
    shopt_words,
)
from shellagent.policy.words import Word
from shellagent.policy.wrappers import SHELLS

# For programs without a spec: options that consume the next word (so it is not taken for a
# path or a subcommand). Long options written --opt=value need no entry.
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(opts.split())
    for name, opts in {
        "git": "-C -c --git-dir --work-tree --namespace --config-env --super-prefix",
        "cp": "-t -S --target-directory --suffix",
        "mv": "-t -S --target-directory --suffix",
        "install": "-t -m -o -g -S --mode --owner --group --target-directory",
        "ln": "-t -S --target-directory --suffix",
        "sed": "-e -f -l --expression --file --line-length",
        "grep": "-e -f -m -A -B -C --regexp --file --max-count --after-context "
        "--before-context --context --label --include --exclude --exclude-dir",
        "rg": "-e -f -g -m -A -B -C -t -T -E -j -M --regexp --file --glob --iglob --type "
        "--type-not --max-count --context --pre --pre-glob --encoding --threads",
        "head": "-n -c --lines --bytes",
        "tail": "-n -c -s --lines --bytes --pid",
        "sort": "-o -k -t -S -T --output --key --field-separator --buffer-size",
        "tar": "-f -C -T -X -b --file --directory --files-from --exclude-from --exclude",
        "cut": "-d -f -b -c",
        "awk": "-f -v -F",
        "gawk": "-f -v -F",
        "chmod": "--reference",
        "chown": "--reference",
        "truncate": "-s -r --size",
        "curl": "-o -d -H -X -u -A -e -T -F -x -w -K --output --data --header --request "
        "--user --user-agent --config --upload-file --form --proxy --write-out",
        "wget": "-O -P -o -a -e -U -t -T --output-document --directory-prefix --output-file",
        "xz": "-T",
        "zstd": "-o -T",
        "gzip": "-S",
        "split": "-b -l -n -a",
        "journalctl": "-u -n -p -S -U -b -t --unit --lines --priority --since --until",
        "du": "-d --max-depth --exclude -B",
        "df": "-t -x -B --type --output",
        "ps": "-o -p -u -C -O --sort --pid --user",
        "ls": "-I -w -T --ignore --hide",
        "diff": "-U -C -x -X -I -L --label",
        "date": "-d -r --date --reference",
        "stat": "-c --format --printf",
        "file": "-m -e -F",
        "uniq": "-f -s -w",
        "wc": "--files0-from",
        "tee": "",
        "jq": "--arg --argjson --slurpfile --rawfile",
        "find": "",
        "ssh": "-i -p -l -o -F -J -L -R -D -W -b -c -e -m -O -Q -S",
        "scp": "-i -P -l -o -F -J -c -S",
        "rsync": "-e --exclude --include --rsh",
    }.items()
}

# mv removes its sources and writes its target: every operand counts as written.
WRITES_ALL = frozenset(
    [
        "rm",
        "rmdir",
        "touch",
        "mkdir",
        "truncate",
        "shred",
        "unlink",
        "tee",
        "mkfifo",
        "mknod",
        "srm",
        "wipe",
        "mv",
    ]
)
WRITES_AFTER_FIRST = frozenset(["chmod", "chown", "chgrp", "chattr", "setfacl"])
WRITES_LAST = frozenset(["cp", "install", "ln", "rsync", "scp"])
INTERPRETERS = (
    frozenset(
        [
            "python",
            "python2",
            "python3",
            "perl",
            "ruby",
            "node",
            "nodejs",
            "php",
            "lua",
            "luajit",
            "tclsh",
            "Rscript",
            "deno",
            "bun",
            "osascript",
            "pwsh",
        ]
    )
    | SHELLS
)
FETCHERS = frozenset(
    [
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "aria2c",
        "http",
        "https",
        "httpie",
        "fetch",
        "lwp-request",
    ]
)
NETWORK = FETCHERS | frozenset(["ssh", "scp", "sftp", "rsync", "telnet", "ftp", "mosh", "sshpass"])
NETWORK_SUBCOMMANDS = {
    "git": frozenset(["clone", "fetch", "pull", "push", "ls-remote", "submodule"]),
    "pip": frozenset(["install", "download"]),
    "pip3": frozenset(["install", "download"]),
    "npm": frozenset(["install", "i", "add", "publish", "ci"]),
    "docker": frozenset(["pull", "push", "login", "run"]),
}


@dataclass(frozen=True)
class Args:
    """An argv read as options, subcommand and operands."""

    flags: frozenset[str]
    global_flags: frozenset[str]  # options written before the subcommand
    positionals: tuple[Word, ...]
    words: tuple[str, ...]  # every argument as bash passes it
    values: dict[str, str] = field(default_factory=dict)  # option -> value (last wins)
    subcommand: str = ""
    reading: Reading | None = None  # present when a spec read the argv


def args_of(program: str, argv: tuple[Word, ...], reading: Reading | None) -> Args:
    """The facts rules match on: from the spec's reading, or a generic one without a spec."""
    if reading is None:
        return read_args(program, argv)
    flags: set[str] = set()
    values: dict[str, str] = {}
    for seen in reading.seen:
        flags.update(seen.forms or (seen.option,))
        if seen.values:
            for form in seen.forms or (seen.option,):
                values[form] = seen.values[0].text
    global_flags = {f for seen in reading.global_seen for f in seen.forms or (seen.option,)}
    first = next((w.text for w in reading.operands if w.static), "")
    return Args(
        flags=frozenset(flags),
        global_flags=frozenset(global_flags),
        positionals=tuple(reading.operands),
        words=tuple(w.text for w in argv[1:]),
        values=values,
        subcommand=reading.subcommands[0] if reading.subcommands else first,
        reading=reading,
    )


def _short_is_number(text: str) -> bool:
    return re.fullmatch(r"-[0-9]+", text) is not None


def read_args(program: str, argv: tuple[Word, ...]) -> Args:
    takes_value = VALUE_OPTIONS.get(program, frozenset())
    flags: set[str] = set()
    global_flags: set[str] = set()
    values: dict[str, str] = {}
    positionals: list[Word] = []
    subcommand = ""
    ended = False
    i = 1
    single_dash_words = program in ("find", "dd")
    while i < len(argv):
        w = argv[i]
        t = w.text
        i += 1
        if ended or not w.static or not t.startswith("-") or t == "-" or single_dash_words:
            positionals.append(w)
            if not subcommand and w.static and not ended:
                subcommand = t
            continue
        if t == "--":
            ended = True
            continue
        found: list[str] = []
        if t.startswith("--"):
            key, eq, value = t.partition("=")
            found.append(key)
            if eq:
                values[key] = value
            elif key in takes_value and i < len(argv):
                values[key] = argv[i].text
                i += 1
        elif _short_is_number(t):
            found.append(t)
        else:
            for j, ch in enumerate(t[1:], start=1):
                opt = "-" + ch
                found.append(opt)
                if opt in takes_value:
                    rest = t[j + 1 :]
                    if rest:
                        values[opt] = rest
                    elif i < len(argv):
                        values[opt] = argv[i].text
                        i += 1
                    break
        flags.update(found)
        if not subcommand:
            global_flags.update(found)
    return Args(
        flags=frozenset(flags),
        global_flags=frozenset(global_flags),
        positionals=tuple(positionals),
        words=tuple(w.text for w in argv[1:]),
        values=values,
        subcommand=subcommand,
    )


@dataclass(frozen=True)
class Effects:
    writes: tuple[str, ...]
    reads: tuple[str, ...]
    traits: frozenset[str]
    dynamic_writes: tuple[str, ...] = ()  # paths only known at run time
    sentences: tuple[str, ...] = ()  # what the command changes, for reasons


def effects(program: str, args: Args) -> Effects:
    if args.reading is not None:
        return _spec_effects(program, args, args.reading)
    return _generic_effects(program, args)


def _spec_effects(program: str, args: Args, r: Reading) -> Effects:
    traits = set(r.traits)
    reads = list(r.reads)
    sentences = list(r.effects)
    spec = r.spec
    reader = spec.model.script if spec is not None else ""
    if reader == "sed":
        for script in r.scripts:
            found, files = sed_script(script)
            traits |= found
            reads += files
    elif reader == "awk":
        for script in r.scripts:
            traits |= awk_program(script)
            # getline < "FILE" reads it: every string that looks like a path counts
            reads += [m for m in re.findall(r'"([^"\\\n]*/[^"\\\n]*)"', script)]
        for seen in r.seen:
            if seen.option == "-W" and not all(mawk_w(v.text) for v in seen.values):
                traits.add("script-file")
                sentences.append("mawk -W other than version, dump, usage … (exec reads a file)")
    elif reader == "dc":
        for script in r.scripts:
            traits |= dc_program(script)
        from_file = "script-file" in traits or any("script-file" in seen.effects for seen in r.seen)
        if (not r.scripts and not from_file) or any(w.text == "-" for w in r.operands):
            # no -e, -f or file operand: dc reads its program from standard input
            traits |= {"executes", "code-from-stdin"}
            sentences.append("dc reads its program from standard input, where ! runs commands")
    elif reader in ("set", "shopt", "shell"):
        if reader == "set":
            changes = set_words(list(args.words))
        elif reader == "shopt":
            changes = shopt_words([*sorted(args.flags), *(w.text for w in args.positionals)])
        else:  # bash -o NAME / -O NAME: the set and shopt options of a nested shell
            changes = []
            for seen in r.seen:
                for value in seen.values:
                    if seen.option == "-o":
                        changes += set_words(["-o", value.text])
                    elif seen.option == "-O":
                        changes += shopt_words(["-s", value.text])
        if changes:
            traits.add("changes-state")
            sentences.extend(changes)
    if program in INTERPRETERS and _code_from_stdin(program, args):
        traits.add("code-from-stdin")
    if program in FETCHERS:
        traits.add("fetch")
    if args.subcommand in NETWORK_SUBCOMMANDS.get(program, ()):
        traits.add("network")
    return Effects(
        writes=tuple(r.writes),
        reads=tuple(reads),
        traits=frozenset(traits),
        dynamic_writes=tuple(r.dynamic_writes),
        sentences=tuple(dict.fromkeys(sentences)),
    )


def _generic_effects(program: str, args: Args) -> Effects:
    pos = [w.text for w in args.positionals]
    writes: list[str] = []
    traits: set[str] = set()
    if program in WRITES_ALL:
        target = _target(args)
        writes = pos + ([target] if target else [])
    elif program in WRITES_AFTER_FIRST:
        writes = pos if "--reference" in args.values else pos[1:]
    elif program in WRITES_LAST:
        target = _target(args)
        if target:
            writes = [target]
        elif len(pos) >= 2:
            writes = [pos[-1]]
        elif program == "ln" and pos:
            writes = ["."]
    elif program == "sed":
        writes, traits = _sed(args)
    elif program == "dd":
        writes = [t[3:] for t in pos if t.startswith("of=")]
    elif program == "sort" and ("-o" in args.values or "--output" in args.values):
        writes = [args.values.get("-o") or args.values["--output"]]
    elif program == "uniq" and len(pos) >= 2:
        writes = [pos[1]]
    elif program == "tar":
        writes = _tar(args)
    elif program == "curl":
        out = args.values.get("-o") or args.values.get("--output")
        writes = [out] if out and out != "-" else (["."] if "-O" in args.flags else [])
    elif program == "wget":
        out = args.values.get("-O") or args.values.get("--output-document")
        prefix = args.values.get("-P") or args.values.get("--directory-prefix")
        writes = [] if out == "-" else [out or prefix or "."]
    elif program in ("awk", "gawk", "mawk"):
        traits |= _awk(args)
    elif program == "git" and args.subcommand in NETWORK_SUBCOMMANDS["git"]:
        traits.add("network")
    if program in NETWORK or args.subcommand in NETWORK_SUBCOMMANDS.get(program, ()):
        traits.add("network")
    if program in FETCHERS:
        traits.add("fetch")
    if program in INTERPRETERS and _code_from_stdin(program, args):
        traits.add("code-from-stdin")
    reads = [] if program in WRITES_ALL else [p for p in pos if p not in writes]
    return Effects(writes=tuple(writes), reads=tuple(reads), traits=frozenset(traits))


def _code_from_stdin(program: str, args: Args) -> bool:
    if program in SHELLS and ("-s" in args.flags or "-c" in args.flags):
        return "-s" in args.flags
    if program.startswith("python") and ("-c" in args.flags or "-m" in args.flags):
        return False
    if program in ("perl", "ruby", "node", "nodejs", "php") and (
        args.flags & {"-e", "-E", "-r", "--eval", "-p", "--print"}
    ):
        return False
    return not args.positionals or args.positionals[0].text == "-"


def _tar(args: Args) -> list[str]:
    first = args.words[0] if args.words else ""
    old_style = first and not first.startswith("-")
    modes = set(first) if old_style else {f[1:] for f in args.flags if len(f) == 2}
    if "--extract" in args.flags or "--get" in args.flags:
        modes.add("x")
    if "--create" in args.flags or "--append" in args.flags:
        modes.add("c")
    archive = args.values.get("-f") or args.values.get("--file")
    if old_style and "f" in first and len(args.positionals) > 1:
        archive = args.positionals[1].text
    to_stdout = "-O" in args.flags or any(
        len(f) > 4 and "--to-stdout".startswith(f) for f in args.flags
    )
    if "x" in modes:
        if to_stdout:
            return []  # -O: extracted files go to standard output, nothing is written
        return [args.values.get("-C") or args.values.get("--directory") or "."]
    if modes & {"c", "r", "u", "A"} and archive and archive != "-":
        return [archive]
    return []


def _sed(args: Args) -> tuple[list[str], set[str]]:
    scripts = [v for k, v in args.values.items() if k in ("-e", "--expression")]
    files = [w.text for w in args.positionals]
    from_file = "-f" in args.values or any(k.startswith("--f") for k in args.values)
    traits: set[str] = {"script-file"} if from_file else set()
    if not scripts and not traits and files:
        scripts, files = [files[0]], files[1:]
    for script in scripts:
        traits |= sed_script(script)[0]
    in_place = any(f == "-i" or f.startswith("--i") for f in args.flags)
    return (files if in_place else []), traits


def _target(args: Args) -> str:
    """The value of ``-t DIR`` / ``--target-directory=DIR`` (or any prefix of it)."""
    for key, value in args.values.items():
        if key == "-t" or (len(key) > 3 and "--target-directory".startswith(key)):
            return value
    return ""


def _awk(args: Args) -> set[str]:
    if args.flags - {"-F", "-v"} or not args.positionals:
        return {"awk-side-effects"}  # -f, -W, -E, --file … : without a spec, never judged
    return set(awk_program(args.positionals[0].text))
