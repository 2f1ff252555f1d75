"""See through programs that run other programs: ``sudo rm`` is judged as ``rm``.

``unwrap`` peels ``env``, ``sudo``, ``doas``, ``timeout``, ``nice``, ``nohup``, ``xargs``,
``command``, ``exec``, ``busybox``, ``stdbuf``, ``time`` … off an argv, collecting what they
add (privilege, environment assignments, arguments read from stdin). Programs that take a
*script* (``bash -c``, ``sh -c``, ``eval``, ``watch``, ``su -c``, ``env -S``) hand it back in
``scripts`` for the engine to parse recursively; ``find -exec`` hands back an inner argv.
When a wrapper's options cannot be read, unwrapping stops with a ``problem``: never allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shellagent.policy.words import Word

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "rbash"})
PRIVILEGE = frozenset({"sudo", "doas", "pkexec", "su", "run0", "sudoedit", "runuser"})

# wrapper -> (options taking a value, options without one). "*" accepts any flag.
_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "sudo": (
        frozenset(
            [
                "-u",
                "-g",
                "-h",
                "-p",
                "-C",
                "-D",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--close-from",
                "--chdir",
                "--role",
                "--type",
                "--other-user",
                "--command-timeout",
                "--chroot",
            ]
        ),
        frozenset(
            [
                "-E",
                "-H",
                "-n",
                "-k",
                "-K",
                "-S",
                "-b",
                "-A",
                "-P",
                "-i",
                "-s",
                "-B",
                "-N",
                "--preserve-env",
                "--set-home",
                "--non-interactive",
                "--reset-timestamp",
                "--stdin",
                "--background",
                "--askpass",
                "--login",
                "--shell",
                "--preserve-groups",
                "--bell",
                "--no-update",
            ]
        ),
    ),
    "doas": (frozenset(["-u", "-C"]), frozenset(["-n", "-s", "-L"])),
    "pkexec": (frozenset(["--user"]), frozenset(["--disable-internal-agent", "--keep-cwd"])),
    "run0": (
        frozenset(
            [
                "-u",
                "-g",
                "-D",
                "--user",
                "--group",
                "--chdir",
                "--unit",
                "--property",
                "--description",
                "--setenv",
                "--nice",
                "--slice",
            ]
        ),
        frozenset(["--no-ask-password"]),
    ),
    "runuser": (frozenset(["-u", "-g", "-G", "--user", "--group", "--supp-group"]), frozenset()),
    "timeout": (
        frozenset(["-s", "-k", "--signal", "--kill-after"]),
        frozenset(["--foreground", "--preserve-status", "-v", "--verbose"]),
    ),
    "nice": (frozenset(["-n", "--adjustment"]), frozenset()),
    "ionice": (frozenset(["-c", "-n", "--class", "--classdata"]), frozenset(["-t", "--ignore"])),
    "nohup": (frozenset(), frozenset()),
    "setsid": (frozenset(), frozenset(["-c", "-f", "-w", "--ctty", "--fork", "--wait"])),
    "stdbuf": (frozenset(["-i", "-o", "-e", "--input", "--output", "--error"]), frozenset()),
    "time": (
        frozenset(["-f", "-o", "--format", "--output"]),
        frozenset(["-p", "-a", "-v", "-q", "--portability", "--append", "--verbose", "--quiet"]),
    ),
    "command": (frozenset(), frozenset(["-p"])),
    "builtin": (frozenset(), frozenset()),
    "exec": (frozenset(["-a"]), frozenset(["-c", "-l"])),
    "xargs": (
        frozenset(
            [
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--eof",
                "--replace",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ]
        ),
        frozenset(
            [
                "-0",
                "-r",
                "-t",
                "-p",
                "-x",
                "-e",
                "-i",
                "-l",
                "--null",
                "--no-run-if-empty",
                "--verbose",
                "--interactive",
                "--exit",
                "--open-tty",
            ]
        ),
    ),
    "env": (
        frozenset(["-u", "-C", "-S", "--unset", "--chdir", "--split-string"]),
        frozenset(["-i", "-0", "-v", "-", "--ignore-environment", "--null", "--debug"]),
    ),
    "watch": (
        frozenset(["-n", "-d", "-q", "--interval", "--differences", "--equexit"]),
        frozenset(
            [
                "-t",
                "-b",
                "-e",
                "-g",
                "-c",
                "-x",
                "-p",
                "-w",
                "-r",
                "--no-title",
                "--beep",
                "--errexit",
                "--chgexit",
                "--color",
                "--exec",
                "--precise",
                "--no-wrap",
                "--no-rerun",
            ]
        ),
    ),
}


# wrapper -> its options whose value is a file it writes
_WRITES = {"time": ("-o", "--output")}


@dataclass
class Unwrapped:
    argv: list[Word]
    wrappers: list[str] = field(default_factory=list)
    privilege: bool = False
    stdin_args: bool = False  # xargs appends words read from stdin
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    scripts: list[tuple[str, Word]] = field(default_factory=list)  # (context, script text)
    inner: list[tuple[str, list[Word]]] = field(default_factory=list)  # find -exec argvs
    writes: list[Word] = field(default_factory=list)  # files a wrapper writes (time -o)
    problem: str = ""


def program_name(word: Word) -> str:
    return word.text.rsplit("/", 1)[-1] if word.static else ""


def _options(name: str, argv: list[Word], start: int) -> tuple[int, dict[str, Word], str]:
    """Skip the options of wrapper ``name``; return the index of its first operand."""
    with_value, flags = _OPTIONS[name]
    seen: dict[str, Word] = {}
    i = start
    while i < len(argv):
        w = argv[i]
        if not w.static:
            return i, seen, f"cannot tell whether {w.text} is an option of {name}"
        t = w.text
        if t == "--":
            return i + 1, seen, ""
        if not t.startswith("-") or t == "-" and name != "env":
            return i, seen, ""
        if name == "nice" and t[1:].lstrip("-").isdigit():
            i += 1
            continue
        key, _, attached = t.partition("=")
        if key in with_value:
            if attached:
                seen[key] = Word(attached)
                i += 1
                continue
            if i + 1 >= len(argv):
                return i + 1, seen, f"option {key} of {name} lacks its value"
            seen[key] = argv[i + 1]
            i += 2
            continue
        if key in flags:
            seen[key] = Word("")
            i += 1
            continue
        if not t.startswith("--") and len(t) > 2:
            # A short cluster: -iu NAME, -n10, -oL.
            ok = True
            for j, ch in enumerate(t[1:], start=1):
                opt = "-" + ch
                if opt in with_value:
                    rest = t[j + 1 :]
                    if rest:
                        seen[opt] = Word(rest)
                        i += 1
                    else:
                        if i + 1 >= len(argv):
                            return i + 1, seen, f"option {opt} of {name} lacks its value"
                        seen[opt] = argv[i + 1]
                        i += 2
                    break
                if opt not in flags:
                    ok = False
                    break
                seen[opt] = Word("")
            else:
                i += 1
            if ok:
                continue
        return i, seen, f"unknown option {t} of {name}"
    return i, seen, ""


def unwrap(argv: list[Word]) -> Unwrapped:
    result = Unwrapped(argv=list(argv))
    for _ in range(16):
        argv = result.argv
        if not argv:
            return result
        name = program_name(argv[0])
        if (
            name == "busybox"
            and len(argv) > 1
            and argv[1].static
            and not argv[1].text.startswith("-")
        ):
            result.wrappers.append(name)
            result.argv = argv[1:]
            continue
        if name in SHELLS or name == "eval" or name == "su":
            _scripts(name, argv, result)
            return result
        if name == "find":
            _find_exec(argv, result)
            return result
        if name not in _OPTIONS:
            return result
        if name == "command" and any(w.text in ("-v", "-V") for w in argv[1:3]):
            return result  # `command -v x` looks a name up; it runs nothing
        start, seen, problem = _options(name, argv, 1)
        if problem:
            result.problem = problem
            return result
        for key in _WRITES.get(name, ()):
            if key in seen:
                result.writes.append(seen[key])
        if name == "env" and ("-C" in seen or "--chdir" in seen):
            result.problem = "env -C runs the command in another directory, where its paths differ"
            return result
        if name == "env":
            for key in ("-S", "--split-string"):
                if key in seen:
                    result.scripts.append(("env -S", seen[key]))
            while start < len(argv) and argv[start].static and _is_assignment(argv[start].text):
                key, _, value = argv[start].text.partition("=")
                result.assignments.append((key, Word(value)))
                start += 1
        if name == "timeout":
            start += 1  # the duration
        if name == "watch":
            rest = argv[start:]
            if "-x" in seen or "--exec" in seen:
                result.wrappers.append(name)
                result.argv = rest
                continue
            result.wrappers.append(name)
            result.scripts.append(("watch", _join(rest)))
            result.argv = argv[:1]
            return result
        if name in PRIVILEGE:
            result.privilege = True
        if start >= len(argv):
            if name == "xargs":
                result.wrappers.append(name)
                result.stdin_args = True
                result.argv = [Word("echo")]
            return result  # the wrapper alone: judged as itself
        result.wrappers.append(name)
        if name == "xargs":
            result.stdin_args = True
        result.argv = argv[start:]
    result.problem = "too many nested wrappers"
    return result


def _is_assignment(text: str) -> bool:
    name, eq, _ = text.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def _join(words: list[Word]) -> Word:
    if all(w.static for w in words):
        return Word(" ".join(w.text for w in words))
    return Word(" ".join(w.text for w in words), static=False)


def _scripts(name: str, argv: list[Word], result: Unwrapped) -> None:
    """``bash -c SCRIPT``, ``su -c SCRIPT``, ``eval WORDS``: the script is parsed again."""
    if name == "eval":
        result.scripts.append(("eval", _join(argv[1:])))
        return
    for i, w in enumerate(argv[1:], start=1):
        if not w.static:
            return
        t = w.text
        if t == "--" or not t.startswith(("-", "+")):
            return
        if (
            name == "su"
            and t in ("-c", "--command")
            or (name != "su" and not t.startswith("--") and "c" in t[1:])
        ):
            if i + 1 < len(argv):
                result.scripts.append((f"{name} -c", argv[i + 1]))
            else:
                result.problem = f"{name} -c without a script"
            return
        if name == "su" and t.startswith("--command="):
            result.scripts.append((f"{name} -c", Word(t.split("=", 1)[1])))
            return


def _find_exec(argv: list[Word], result: Unwrapped) -> None:
    i = 1
    while i < len(argv):
        if argv[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            action = argv[i].text
            j = i + 1
            while j < len(argv) and argv[j].text not in (";", "+"):
                j += 1
            inner = argv[i + 1 : j]
            if inner:
                result.inner.append((f"find {action}", inner))
            else:
                result.problem = f"find {action} without a command"
            i = j
        i += 1
