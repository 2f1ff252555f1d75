"""Where bash evaluates a variable's *value* as code, and whether that value is known.

Bash reads a value as an arithmetic expression in ``$(( ))``, ``$[ ]``, ``(( ))``, ``let``,
the C-style ``for``, the arithmetic operators of ``[[ ]]`` (``-eq`` ``-lt`` …), array
subscripts (``${a[N]}``, ``a[N]=``, ``read 'a[N]'``), the offset and length of ``${s:N:M}``
and any assignment to an integer (``declare -i``) variable; it reads a value as a variable
name in ``${!x}``, ``test -v "$x"`` and ``unset "$x"``, and as a prompt in ``${x@P}``. In
each, a value such as ``a[$(cmd)]`` runs ``cmd``. So a value evaluated there must be known
before the command runs and be harmless: a plain integer (arithmetic), a plain name
(indirection), text without ``$``, backticks or backslashes (prompt).

A value is known when the command line assigns it from static text or arithmetic, or when
it is carried from the earlier commands of the session (``Carried``: the host reads it from
the sandbox's state dump). A value read from a file, a command or a glob (``read v < f``,
``for f in *``) is not. ``scan`` walks one syntax tree and notes every such use and every
assignment; ``judge`` weighs them against the carried values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from shellagent.policy.decision import Decision
from shellagent.policy.words import WordReader

# bash keeps these itself and they always hold integers.
_BASH_INTEGERS = frozenset(
    {
        "RANDOM",
        "SRANDOM",
        "SECONDS",
        "LINENO",
        "BASHPID",
        "PPID",
        "UID",
        "EUID",
        "EPOCHSECONDS",
        "HISTCMD",
        "BASH_SUBSHELL",
        "PIPESTATUS",
    }
)
# bash sets these itself to text it read or made (the last argument, a match, a directory
# name, the running command): their values are never known before a command runs.
_BASH_TEXT = frozenset(
    {
        "_",
        "BASH_REMATCH",
        "BASH_COMMAND",
        "BASH_ARGV",
        "BASH_ARGV0",
        "BASH_SOURCE",
        "BASH_EXECUTION_STRING",
        "FUNCNAME",
        "DIRSTACK",
        "PWD",
        "OLDPWD",
        "OPTARG",
        "REPLY",
        "MAPFILE",
        "COMP_WORDBREAKS",
    }
)
_ARITH_TEST = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_IDENT = re.compile(r"(?<![A-Za-z0-9_#])[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = re.compile(r"\$(?:[0-9@*#?!$-]|\{[0-9@*]+\})")
_ASSIGNED_AFTER = re.compile(r"\s*(?:\[[^\]]*\])?\s*=(?!=)")
_PLAIN_INTEGER = re.compile(r"\s*[-+]?\s*(?:0[xX][0-9A-Fa-f]+|[0-9]+#[0-9A-Za-z@_]+|[0-9]+)\s*")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?|[0-9]+")
_NAMED_FD = re.compile(r"(?<![\w$])\{([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\}(?=[0-9]*[<>])")
_HEREDOC_ARITH = re.compile(r"\$\(\((.*?)\)\)|\$\[(.*?)\]", re.S)
# Builtins whose operands (or one option's value) are variable names they set.
NAME_SETTERS = frozenset({"read", "mapfile", "readarray", "getopts", "printf", "wait", "unset"})

INTEGER = "\0int"  # an assigned value known to be an integer (arithmetic's result)
Value = str | None  # None: only known when the command runs


@dataclass(frozen=True)
class Carried:
    """The variables a session's earlier commands left: each name's value (every element,
    for an array), and which ones are integers (``declare -i``)."""

    values: Mapping[str, tuple[str, ...]]
    integers: frozenset[str] = frozenset()
    associative: frozenset[str] = frozenset()  # declare -A: their subscripts are text
    readonly: frozenset[str] = frozenset()  # an assignment to one fails: the value stays


CarriedSource = Carried | Callable[[], "Carried | None"]


@dataclass(frozen=True)
class Use:
    """A variable whose value bash evaluates: ``how`` is arithmetic, name or prompt."""

    name: str
    how: str
    where: str
    shadowed: bool  # assigned earlier in the line on every path: the carried value is gone
    array: str = ""  # the array whose subscript this is (text, not arithmetic, if -A)


@dataclass
class Flow:
    """What one command line (all its scripts) evaluates, assigns and expands."""

    uses: list[Use] = field(default_factory=list)
    assigned: dict[str, list[Value]] = field(default_factory=dict)
    expanded: set[str] = field(default_factory=set)
    integers: set[str] = field(default_factory=set)
    associative: set[str] = field(default_factory=set)  # declare -A in the line
    loop_names: list[str] = field(default_factory=list)  # for/select NAME: set by the loop
    # name = value text of every assignment word: to a carried integer it is evaluated
    texts: list[tuple[str, str]] = field(default_factory=list)
    arith_assigned: list[str] = field(default_factory=list)  # (( NAME = … )), let NAME=…

    def assign(self, name: str, value: Value) -> None:
        self.assigned.setdefault(name, []).append(value)


@dataclass
class _Pending:
    name: str
    how: str
    where: str
    offset: int
    array: str = ""


class _Scan:
    """One walk over one tree (a line, or a ``bash -c`` script inside it)."""

    def __init__(self, source: bytes, words: WordReader, flow: Flow) -> None:
        self.source = source
        self.words = words
        self.flow = flow
        self.pending: list[_Pending] = []
        # (name, from offset, to offset): assigned on every path from here to there
        self.definite: list[tuple[str, int, int]] = []

    def finish(self) -> None:
        for p in self.pending:
            shadowed = any(n == p.name and a <= p.offset < b for n, a, b in self.definite)
            self.flow.uses.append(Use(p.name, p.how, p.where, shadowed, p.array))

    # -- helpers --

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def use(self, name: str, how: str, where: str, offset: int, array: str = "") -> None:
        self.pending.append(_Pending(name, how, _short(where), offset, array))

    def arithmetic(
        self, text: str, offset: int, where: str, *, definite: bool, end: int, array: str = ""
    ) -> None:
        """Every name in an arithmetic expression is evaluated, except the target of a
        plain ``=`` (it gets an integer)."""
        for m in _IDENT.finditer(text):
            name = m.group()
            if _ASSIGNED_AFTER.match(text, m.end()):
                self.flow.assign(name, INTEGER)
                self.flow.arith_assigned.append(name)
                if definite:
                    self.definite.append((name, offset + m.end(), end))
                subscript = re.match(r"\s*\[([^\]]*)\]", text[m.end() :])
                if subscript:
                    self.arithmetic(subscript.group(1), offset, where, definite=False, end=end)
                continue
            self.use(name, "arithmetic", where, offset + m.start(), array)
        for m in _POSITIONAL.finditer(text):
            self.use(m.group(), "arithmetic", where, offset + m.start(), array)

    def subscript_of(self, name_text: str, offset: int, where: str) -> None:
        """``a[N]`` as a name a builtin sets or tests: N is arithmetic."""
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]", name_text, re.S)
        if m and m.group(2) not in ("@", "*"):
            self.arithmetic(m.group(2), offset, where, definite=False, end=offset, array=m.group(1))

    # -- the walk --

    def walk(self, node: Node, definite: bool, scope_end: int) -> None:  # noqa: C901
        kind = node.type
        if kind == "program":
            for child in node.named_children:
                self.walk(child, True, scope_end)
            return
        if kind == "list":
            for i, child in enumerate(node.named_children):
                self.walk(child, definite and i == 0, scope_end)
            return
        if kind in ("subshell", "command_substitution", "process_substitution"):
            for child in node.named_children:
                self.walk(child, True, node.end_byte)
            return
        if kind == "pipeline":
            for child in node.named_children:
                self.walk(child, True, child.end_byte)
            return
        if kind in (
            "if_statement",
            "while_statement",
            "case_statement",
            "function_definition",
            "elif_clause",
            "else_clause",
            "case_item",
        ):
            for child in node.named_children:
                self.walk(child, False, scope_end)
            return
        if kind == "for_statement":
            self.for_loop(node)
            return
        if kind == "c_style_for_statement":
            body = node.child_by_field_name("body")
            header_end = body.start_byte if body is not None else node.end_byte
            header = self.source[node.start_byte : header_end].decode("utf-8", "replace")
            open_at, close_at = header.find("(("), header.rfind("))")
            if open_at >= 0 and close_at > open_at:
                self.arithmetic(
                    header[open_at + 2 : close_at],
                    node.start_byte + open_at + 2,
                    header,
                    definite=True,
                    end=node.end_byte,
                )
            if body is not None:
                self.walk(body, False, scope_end)
            return
        if kind == "compound_statement" and node.children and node.children[0].type == "((":
            text = self.text(node)
            self.arithmetic(text[2:-2], node.start_byte + 2, text, definite=definite, end=scope_end)
            return
        if kind == "arithmetic_expansion":
            text = self.text(node)
            inner = text[3:-2] if text.startswith("$((") else text[2:-1]
            self.arithmetic(inner, node.start_byte + 3, text, definite=False, end=scope_end)
            return
        if kind == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            if start is not None and any(q in self.text(start) for q in "'\"\\"):
                return  # a quoted delimiter: the body is literal text
        if kind == "heredoc_body":
            text = self.text(node)
            for m in _HEREDOC_ARITH.finditer(text):
                inner = m.group(1) if m.group(1) is not None else m.group(2)
                self.arithmetic(
                    inner, node.start_byte + m.start(), m.group(), definite=False, end=scope_end
                )
        if kind in ("redirected_statement", "command"):
            # {NAME}>file opens a descriptor and stores its number in NAME, for good
            for m in _NAMED_FD.finditer(self.text(node)):
                self.flow.assign(m.group(1), INTEGER)
                self.flow.arith_assigned.append(m.group(1))
                if m.group(2):
                    self.subscript_of(m.group(1) + m.group(2), node.start_byte, m.group())
        if kind == "test_command":
            self.test_command(node)
        elif kind == "expansion":
            self.expansion(node)
            return
        elif kind == "simple_expansion":
            self.flow.expanded.update(self.text(node).lstrip("$").split())
            return
        elif kind == "variable_assignment":
            self.assignment(node, definite, scope_end)
            return
        elif kind == "declaration_command":
            self.declaration(node)
        elif kind == "unset_command":
            self.name_operands("unset", node.named_children)
        elif kind == "command":
            self.command(node)
        for child in node.named_children:
            self.walk(child, definite, scope_end)

    def for_loop(self, node: Node) -> None:
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values = node.children_by_field_name("value")
        name = self.text(variable) if variable is not None else ""
        if name:
            self.flow.loop_names.append(name)
            if not values or node.children[0].type == "select":
                self.flow.assign(name, None)  # "$@", or what the user picks
            for v in values:
                word = self.words.read(v)
                self.flow.assign(name, word.text if word.static and not word.glob else None)
                self.walk(v, False, node.end_byte)
            if body is not None:
                self.definite.append((name, body.start_byte, body.end_byte))
        if body is not None:
            self.walk(body, False, node.end_byte)

    def test_command(self, node: Node) -> None:
        # [[ ]] evaluates -eq's operands as arithmetic; the test builtin ([ ]) does not
        keyword = bool(node.children) and node.children[0].type == "[["
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            if n.type == "binary_expression":
                ops = [c for c in n.children if c.type in ("test_operator", "=~")]
                op = self.text(ops[0]) if ops else ""
                if op in _ARITH_TEST and keyword:
                    for operand in n.named_children:
                        if operand.type != "test_operator":
                            self.arithmetic(
                                self.text(operand),
                                operand.start_byte,
                                self.text(n),
                                definite=False,
                                end=operand.start_byte,
                            )
                elif op == "=~":
                    self.flow.assign("BASH_REMATCH", None)
                stack.extend(n.named_children)
            elif n.type == "unary_expression":
                ops = [c for c in n.children if c.type == "test_operator"]
                if ops and self.text(ops[0]) == "-v":
                    for operand in n.named_children[1:]:
                        self.name_word(operand, self.text(n))
                stack.extend(n.named_children)
            elif n.type == "parenthesized_expression":
                stack.extend(n.named_children)

    def name_word(self, node: Node, where: str) -> None:
        """A word a builtin reads as a variable name (``test -v``, ``unset``, ``read``)."""
        word = self.words.read(node)
        if word.static:
            self.subscript_of(word.text, node.start_byte, where)
            return
        for name in _expanded_names(self.text(node)):
            self.use(name, "name", where, node.start_byte)

    def expansion(self, node: Node) -> None:
        children = node.children
        types = [c.type for c in children]
        names = [c for c in children if c.type == "variable_name"]
        subscripts = [c for c in children if c.type == "subscript"]
        target = names[0] if names else None
        if subscripts:
            sub = subscripts[0]
            target = sub.child_by_field_name("name") or next(
                (c for c in sub.children if c.type == "variable_name"), None
            )
            index = sub.child_by_field_name("index")
            if index is not None and self.text(index) not in ("@", "*"):
                self.arithmetic(
                    self.text(index), index.start_byte, self.text(node), definite=False,
                    end=index.start_byte, array=self.text(target) if target is not None else "",
                )  # fmt: skip
        name = self.text(target) if target is not None else ""
        if name:
            self.flow.expanded.add(name)
        where = self.text(node)
        listing = {"*", "@"} & set(types) or any(
            (i := sub.child_by_field_name("index")) is not None and self.text(i) in ("@", "*")
            for sub in subscripts
        )  # ${!prefix*}, ${!a[@]}: names and keys, nothing evaluated
        if "!" in types[:2] and name and not listing:
            self.use(name, "name", where, node.start_byte)
        if "@" in types:
            after = types.index("@") + 1
            if after < len(children) and self.text(children[after]) == "P" and name:
                self.use(name, "prompt", where, node.start_byte)
        if ":" in types:
            start = children[types.index(":") + 1].start_byte
            end = children[-1].start_byte if types[-1] == "}" else node.end_byte
            text = self.source[start:end].decode("utf-8", "replace").replace(":", " ")
            self.arithmetic(text, start, where, definite=False, end=start)
        for child in node.named_children:
            if child.type not in ("variable_name", "subscript"):
                self.walk(child, False, node.end_byte)

    def assignment(self, node: Node, definite: bool, scope_end: int) -> None:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None:
            return
        where = self.text(node)
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            name = self.text(base) if base is not None else self.text(name_node).split("[")[0]
            index = name_node.child_by_field_name("index")
            if index is not None:
                self.arithmetic(
                    self.text(index), index.start_byte, where, definite=False, end=scope_end,
                    array=name,
                )  # fmt: skip
        else:
            name = self.text(name_node)
        values: list[Value] = []
        if value is None:
            values.append("")
        elif value.type == "array":
            for element in value.named_children:
                text = self.text(element)
                keyed = re.match(r"\[(.*?)\]\+?=", text, re.S)  # ([N]=value …): N is arithmetic
                if keyed is None:
                    values.append(self._value(element))
                    continue
                self.arithmetic(
                    keyed.group(1), element.start_byte + 1, where, definite=False,
                    end=scope_end, array=name,
                )  # fmt: skip
                word = self.words.read(element)
                values.append(word.text[word.text.find("=") + 1 :] if word.static else None)
        else:
            values.append(self._value(value))
        for v in values:
            self.flow.assign(name, v)
        if value is not None:
            self.flow.texts.append((name, self.text(value)))
        if name in self.flow.integers and value is not None:
            self.arithmetic(
                self.text(value), value.start_byte, where, definite=False, end=scope_end
            )
        prefix = node.parent is not None and node.parent.type == "command"
        appends = any(c.type == "+=" for c in node.children)  # the old value stays in it
        # `local` outside a function fails and assigns nothing
        local = (
            node.parent is not None
            and node.parent.type == "declaration_command"
            and (node.parent.children[0].type == "local")
        )
        if definite and not prefix and not appends and not local:
            self.definite.append((name, node.end_byte, scope_end))
        if value is not None:
            self.walk(value, False, scope_end)

    def _value(self, node: Node) -> Value:
        word = self.words.read(node)
        if word.static:
            return word.text
        text = self.text(node).strip('"')
        if re.fullmatch(
            r"\$\(\(.*\)\)|\$\[.*\]|\$\{#[A-Za-z_][A-Za-z0-9_]*\}|\$[#?$!]", text, re.S
        ):
            return INTEGER
        return None

    def declaration(self, node: Node) -> None:
        flags = "".join(
            self.text(c)[1:] for c in node.named_children if self.text(c).startswith("-")
        )
        for flag, names in (("i", self.flow.integers), ("A", self.flow.associative)):
            if flag not in flags:
                continue
            for c in node.named_children:
                if c.type == "variable_name":
                    names.add(self.text(c))
                elif c.type == "variable_assignment":
                    n = c.child_by_field_name("name")
                    if n is not None:
                        names.add(self.text(n).split("[")[0])

    def command(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        program = self.text(name_node) if name_node is not None else ""
        args = [
            c
            for c in node.named_children
            if c.type not in ("command_name", "variable_assignment", "file_redirect")
            and c.type not in ("herestring_redirect", "heredoc_redirect", "comment")
        ]
        where = self.text(node)
        if program == "let":
            for a in args:
                word = self.words.read(a)
                self.arithmetic(
                    word.text if word.static else self.text(a), a.start_byte, where,
                    definite=False, end=a.start_byte,
                )  # fmt: skip
        elif program in ("test", "["):
            for i, a in enumerate(args[:-1]):
                if self.text(a) == "-v":
                    self.name_word(args[i + 1], where)
        elif program in NAME_SETTERS:
            self.name_operands(program, args)

    def name_operands(self, program: str, args: list[Node]) -> None:
        words = [self.words.read(a) for a in args]
        for index in name_positions(program, [w.text if w.static else "" for w in words]):
            node, word = args[index], words[index]
            self.name_word(node, f"{program} {self.text(node)}")
            if program == "unset":
                continue
            name = word.text.split("[")[0] if word.static else ""
            if name:
                self.flow.assign(name, INTEGER if program == "wait" else None)


def name_positions(program: str, words: list[str]) -> list[int]:
    """Which of a builtin's argument words are names of variables it sets (or unsets):
    ``read [-a] NAME…``, ``mapfile [-…] ARRAY``, ``getopts SPEC NAME``, ``printf -v NAME``,
    ``wait -p NAME``, ``unset NAME…``. A word only known at run time is given as ""."""
    found: list[int] = []
    value_flags = {
        "read": "adinNptu",
        "mapfile": "dnOscuC",
        "readarray": "dnOscuC",
        "printf": "v",
        "wait": "p",
        "unset": "",
        "getopts": "",
    }.get(program)
    if value_flags is None:
        return found
    named_flags = {"read": "a", "printf": "v", "wait": "p"}.get(program, "")
    operands: list[int] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            operands += range(i + 1, len(words))
            break
        if w.startswith("-") and len(w) > 1 and (not operands or program not in ("printf",)):
            for j, flag in enumerate(w[1:], start=1):
                if flag in value_flags:
                    if not w[j + 1 :] and i + 1 < len(words):
                        i += 1
                        if flag in named_flags:
                            found.append(i)
                    elif flag in named_flags:
                        found.append(i)
                    break
            i += 1
            continue
        operands.append(i)
        if program == "printf":
            break
        i += 1
    if program in ("read", "unset"):
        found += operands
    elif program in ("mapfile", "readarray"):
        found += operands[-1:]
    elif program == "getopts":
        found += operands[1:2]
    return found


def _expanded_names(text: str) -> list[str]:
    names = re.findall(r"\$\{?!?#?([A-Za-z_][A-Za-z0-9_]*)", text)
    names += [m.group() for m in _POSITIONAL.finditer(text)]
    return names or [text]


def scan(root: Node, source: bytes, words: WordReader, flow: Flow) -> None:
    s = _Scan(source, words, flow)
    s.walk(root, True, len(source))
    s.finish()


def plain_integer(value: str) -> bool:
    return value == "" or value == INTEGER or _PLAIN_INTEGER.fullmatch(value) is not None


def _harmless(how: str, value: str) -> bool:
    if value == INTEGER:
        return True
    if how == "arithmetic":
        return plain_integer(value)
    if how == "name":
        return value == "" or _PLAIN_NAME.fullmatch(value) is not None
    return not any(c in value for c in "$`\\")  # prompt


def _runs_code(value: str) -> bool:
    return "$(" in value or "`" in value


@dataclass(frozen=True)
class Finding:
    decision: Decision  # ASK or DENY
    reason: str
    where: str


def judge(flow: Flow, carried: Carried | None) -> list[Finding]:
    """What the line's evaluated values make of it: nothing, or why to ask or deny."""
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for use in flow.uses:
        if (use.name, use.where) in seen:
            continue
        if use.array and (
            use.array in flow.associative
            or (carried is not None and use.array in carried.associative)
        ):
            continue  # an associative array's subscript is text, not arithmetic
        seen.add((use.name, use.where))
        values: list[Value] = list(flow.assigned.get(use.name, []))
        from_carried: list[str] = []
        shadowed = use.shadowed and not (carried is not None and use.name in carried.readonly)
        if not shadowed and not use.name.startswith("$"):
            if carried is None:
                if use.name not in _BASH_INTEGERS:
                    values.append(None)
            else:
                from_carried = list(carried.values.get(use.name, ()))
                if use.name in _BASH_TEXT and use.name not in carried.values:
                    values.append(None)
        if use.name.startswith("$") and use.name not in ("$#", "$?", "$$", "$!"):
            values.append(None)  # positional parameters: the caller's words
        what = {
            "arithmetic": "as arithmetic",
            "name": "as a variable name",
            "prompt": "as a prompt (${x@P})",
        }[use.how]
        bad = [v for v in from_carried if not _harmless(use.how, v)]
        if any(_runs_code(v) for v in bad):
            value = next(v for v in bad if _runs_code(v))
            findings.append(
                Finding(
                    Decision.DENY,
                    f"bash evaluates {use.name} {what} in {use.where}, and the value carried "
                    f"from an earlier command, {_short(value)!r}, runs a command when evaluated",
                    use.where,
                )
            )
            continue
        if bad:
            findings.append(
                Finding(
                    Decision.ASK,
                    f"bash evaluates {use.name} {what} in {use.where}, and its carried value "
                    f"{_short(bad[0])!r} is not a plain "
                    + (
                        "integer"
                        if use.how == "arithmetic"
                        else "name"
                        if use.how == "name"
                        else "text"
                    ),
                    use.where,
                )
            )
            continue
        if any(v is None for v in values):
            findings.append(
                Finding(
                    Decision.ASK,
                    f"bash evaluates {use.name} {what} in {use.where}, and its value is only "
                    "known when it runs (a value like a[$(cmd)] runs cmd)",
                    use.where,
                )
            )
            continue
        static_bad = [v for v in values if v is not None and not _harmless(use.how, v)]
        if static_bad:
            findings.append(
                Finding(
                    Decision.ASK,
                    f"bash evaluates {use.name} {what} in {use.where}, and the value "
                    f"{_short(static_bad[0])!r} set here is not plain",
                    use.where,
                )
            )
    integers = set(flow.integers) | (set(carried.integers) if carried is not None else set())
    for name in sorted(integers):
        if None in flow.assigned.get(name, []):
            findings.append(
                Finding(
                    Decision.ASK,
                    f"{name} is an integer variable (declare -i): bash evaluates whatever is "
                    "read into it as arithmetic, and that is only known when it runs",
                    name,
                )
            )
    for name, text in flow.texts:
        if carried is not None and name in carried.integers and not plain_integer(text):
            findings.append(
                Finding(
                    Decision.ASK,
                    f"{name} is an integer variable carried from an earlier command: bash "
                    f"evaluates {_short(text)!r} assigned to it as arithmetic",
                    f"{name}={text}",
                )
            )
    return findings


def trivial(value: str) -> bool:
    """A carried value not worth showing beside a command: an integer or a short word."""
    return plain_integer(value) or re.fullmatch(r"[A-Za-z0-9_./:,+=@%-]{0,40}", value) is not None


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
