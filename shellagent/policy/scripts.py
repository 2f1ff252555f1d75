"""Readers for programs whose arguments are code: sed and awk scripts, dc, shell options.

Each reader says which side effects the text has; anything it cannot read is treated as
having all of them, so the command is asked about rather than allowed.

- sed: ``e`` and ``s///e`` run commands (``sed-exec``); ``w``, ``W`` and ``s///w`` write
  files (``sed-write``); ``r``/``R`` name files read.
- awk (mawk, gawk, busybox): ``system()``, ``cmd | getline``, ``print | cmd``, ``|&``,
  ``print > file`` and gawk's ``@load``/``@include`` (``awk-side-effects``); mawk's
  ``-W`` may only be one of its harmless words (``-W exec FILE`` reads a script file).
- dc: ``!`` runs a shell command; ``?`` runs a line of input; ``a`` with ``x`` can build one.
- ``set``/``shopt``/``bash -o/-O``: options that change how later lines parse or run
  (``set -k``, ``set -T``, ``shopt -s extdebug``, ``expand_aliases`` …) are ``changes-state``.
"""

from __future__ import annotations

import re

SED_ALL = frozenset({"sed-exec", "sed-write"})
AWK_EFFECTS = frozenset({"awk-side-effects"})

_SED_ADDRESS = re.compile(
    r"\s*(?:[0-9]+(?:~[0-9]+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(?P<d>.)(?:(?!(?P=d)).)*(?P=d))"
)


def sed_script(script: str) -> tuple[set[str], list[str]]:
    """Traits of a sed script (``sed-exec``, ``sed-write``) and the files it reads."""
    traits: set[str] = set()
    reads: list[str] = []
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;{}!,":
            i += 1
        m = _SED_ADDRESS.match(script, i)
        if m and m.end() > i:
            i = m.end()
            continue
        if i >= n:
            break
        cmd = script[i]
        i += 1
        if cmd in "ewW":
            traits.add("sed-exec" if cmd == "e" else "sed-write")
            i = _line_end(script, i)
        elif cmd in "rR":
            end = _line_end(script, i)
            reads.append(script[i:end].strip())
            i = end
        elif cmd in "aic:btTv#":
            i = _line_end(script, i)
        elif cmd == "s":
            if i >= n:
                return set(SED_ALL), reads
            i = _skip_delimited(script, i)
            flags_start = i
            while i < n and script[i] not in ";\n}":
                i += 1
            flags = script[flags_start:i].split("w", 1)[0]  # after w comes a file name
            if "e" in flags:
                traits.add("sed-exec")
            if "w" in script[flags_start:i]:
                traits.add("sed-write")
        elif cmd == "y":
            if i >= n:
                return set(SED_ALL), reads
            i = _skip_delimited(script, i)
        elif cmd in "pPdDnNgGhHxz=lFqQ":
            continue
        else:
            return set(SED_ALL), reads
    return traits, reads


def _skip_delimited(script: str, i: int) -> int:
    """Past the two delimited parts of ``s/a/b/`` or ``y/a/b/``; ``i`` is at the delimiter."""
    delim, n = script[i], len(script)
    i += 1
    for _ in range(2):
        while i < n and script[i] != delim:
            i += 2 if script[i] == "\\" else 1
        i += 1
    return i


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    semicolon = script.find(";", i)
    ends = [e for e in (end, semicolon) if e != -1]
    return min(ends) if ends else len(script)


_AWK_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\\\n]+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+)
  | (?P<op>\|&|\|\||&&|>>|>=|<=|==|!=|\+\+|--|[-+*/%^!<>|=~?:;,(){}\[\]$@])
    """,
    re.VERBOSE,
)
_AWK_REGEX = re.compile(r"/(?:[^/\\\n\[]|\\.|\[(?:\\.|[^\]\\\n])*\])*/")
# After these a '/' divides; elsewhere it starts a regular expression.
_AWK_OPERAND_END = frozenset({")", "]", "$", "++", "--", "(number)", "(string)", "(regex)"})
_AWK_KEYWORDS = frozenset({"print", "printf", "return", "in", "case", "getline"})
_AWK_STATEMENT_END = frozenset({";", "{", "}", "\n"})


def awk_program(text: str) -> frozenset[str]:
    """``awk-side-effects`` if the program can run commands or write files; else nothing."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        prev = tokens[-1] if tokens else ""
        operand_before = prev in _AWK_OPERAND_END or (
            re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", prev) is not None and prev not in _AWK_KEYWORDS
        )
        if text[i] == "/" and not operand_before:
            m = _AWK_REGEX.match(text, i)
            if not m:
                return AWK_EFFECTS
            tokens.append("(regex)")
            i = m.end()
            continue
        m = _AWK_TOKEN.match(text, i)
        if not m:
            return AWK_EFFECTS  # an unterminated string, a stray character: cannot tell
        if m.lastgroup == "space":
            if "\n" in m.group() and not m.group().rstrip(" \t").endswith("\\"):
                tokens.append("\n")
        elif m.lastgroup == "string":
            tokens.append("(string)")
        elif m.lastgroup == "number":
            tokens.append("(number)")
        else:
            tokens.append(m.group())
        i = m.end()
    return _awk_tokens_effects(tokens)


def _awk_tokens_effects(tokens: list[str]) -> frozenset[str]:
    printing = False
    depth = 0
    for index, tok in enumerate(tokens):
        prev = tokens[index - 1] if index else ""
        if tok in ("system", "@", "|&"):
            return AWK_EFFECTS
        if tok == "getline" and prev == "|":
            return AWK_EFFECTS
        if tok in ("print", "printf"):
            printing, depth = True, 0
        elif printing:
            if tok in ("(", "["):
                depth += 1
            elif tok in (")", "]"):
                depth -= 1
            elif tok in _AWK_STATEMENT_END and depth <= 0:
                printing = False
            elif tok in (">", ">>", "|") and depth <= 0:
                return AWK_EFFECTS
    return frozenset()


# mawk's -W words that change nothing (mawk accepts unique abbreviations of each).
_MAWK_W = ("version", "dump", "help", "usage", "interactive", "posix_space", "sprintf", "random")


def mawk_w(value: str) -> bool:
    """Whether ``-W value`` is one of mawk's harmless words (an abbreviation of exec is not)."""
    word = value.split("=", 1)[0]
    if not word:
        return False
    matches = [w for w in (*_MAWK_W, "exec") if w.startswith(word)]
    return bool(matches) and "exec" not in matches


def dc_program(text: str) -> frozenset[str]:
    """dc's ``!`` runs a shell command. ``?`` reads a line of standard input and runs it
    as dc code (so it may hold a ``!``), and ``a`` turns a number into a one-character
    string that ``x`` runs, so a ``!`` can be built without being written: each of these
    counts as running a command. Every other dc command stays inside dc."""
    if "!" in text or "?" in text or ("a" in text and "x" in text):
        return frozenset({"executes"})
    return frozenset()


_SET_SAFE_LETTERS = frozenset("behmnuvxBCP")
_SET_SAFE_NAMES = frozenset(
    {
        "braceexpand",
        "emacs",
        "errexit",
        "hashall",
        "ignoreeof",
        "monitor",
        "noclobber",
        "noexec",
        "nolog",
        "notify",
        "nounset",
        "physical",
        "pipefail",
        "verbose",
        "vi",
        "xtrace",
    }
)
_SET_UNSAFE_OFF = frozenset({"braceexpand"})
_SHOPT_UNSAFE_OFF = frozenset({"interactive_comments", "globskipdots"})
_SHOPT_SAFE_ON = frozenset(
    {
        "autocd",
        "cdspell",
        "checkhash",
        "checkjobs",
        "checkwinsize",
        "cmdhist",
        "complete_fullquote",
        "dirspell",
        "direxpand",
        "execfail",
        "force_fignore",
        "globasciiranges",
        "gnu_errfmt",
        "histappend",
        "histreedit",
        "histverify",
        "hostcomplete",
        "huponexit",
        "inherit_errexit",
        "lithist",
        "mailwarn",
        "no_empty_cmd_completion",
        "shift_verbose",
    }
)


def set_words(words: list[str]) -> list[str]:
    """What ``set WORDS`` changes in how later lines parse or run (sentences), if anything."""
    problems: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if w in ("--", "-") or not w.startswith(("-", "+")):
            break  # the rest are positional parameters
        if w.startswith("+"):
            # turning options off; only brace expansion changes what later words name
            if w == "+o" or w.startswith("+o"):
                name = w[2:] or (words[i] if i < len(words) else "")
                i += 0 if w[2:] else 1
                if name in _SET_UNSAFE_OFF:
                    problems.append(f"set +o {name} changes how later commands' words expand")
            elif "B" in w:
                problems.append("set +B changes how later commands' words expand")
            continue
        for j, ch in enumerate(w[1:], start=1):
            if ch == "o":
                name = w[j + 1 :] or (words[i] if i < len(words) else "")
                if w[j + 1 :] == "" and i < len(words):
                    i += 1
                if name and name not in _SET_SAFE_NAMES:
                    problems.append(f"set -o {name} changes how later commands run")
                break
            if ch not in _SET_SAFE_LETTERS:
                problems.append(f"set -{ch} changes how later commands parse or run")
    return problems


def shopt_words(words: list[str]) -> list[str]:
    """What ``shopt WORDS`` changes in how later lines parse or run, if anything."""
    flags = {w for w in words if w.startswith("-")}
    names = [w for w in words if not w.startswith("-")]
    if "-o" in flags:
        if "-s" in flags:
            return _set_o(names)
        return [
            f"shopt -uo {n} changes how later words expand" for n in names if n in _SET_UNSAFE_OFF
        ]
    if "-s" in flags:
        return [
            f"shopt -s {n} changes how later commands parse or run"
            for n in names
            if n not in _SHOPT_SAFE_ON
        ]
    if "-u" in flags:
        return [
            f"shopt -u {n} changes how later commands parse"
            if n == "interactive_comments"
            else f"shopt -u {n}: a later glob such as .* also names . and .."
            for n in names
            if n in _SHOPT_UNSAFE_OFF
        ]
    return []


def _set_o(names: list[str]) -> list[str]:
    problems: list[str] = []
    for name in names:
        problems.extend(set_words(["-o", name]))
    return problems
