"""Split a bash command into every simple command it would run, using tree-sitter-bash.

The walk visits the whole syntax tree, so commands hidden in lists, pipelines, subshells,
``$( )``, backticks, ``<( )``/``>( )``, heredoc bodies, function bodies, loops and tests are
all found. Each becomes a ``RawCommand`` with evaluated words, assignment prefixes and
redirections; ``parent`` links a command found inside another command's words (its output
feeds that command). Syntax trouble is reported in ``Parsed.errors``: the engine never
allows a command bash would parse differently from what it shows.

tree-sitter-bash leaves some text that bash still expands as plain leaves: the pattern of
``${v#$(cmd)}``, a here-document body holding backticks, ``$(( '$(cmd)' ))`` and more. So
the line is also read by ``shellagent.substitutions``, a lexer of bash's quoting, and every
substitution it finds that the walk did not judge is parsed on its own and walked like
any other (its commands feed the command it sits in); one that cannot be read that way
(``Parsed.unread``) makes the line asked about. ``Parsed.judged`` lists every substitution
of the line the walk judged, as the sandbox's driver checks them (``substitutions``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from shellagent import substitutions
from shellagent.policy.values import Flow, scan
from shellagent.policy.words import Word, WordReader

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)

_SUBSTITUTION_CONTEXT = {"command_substitution": "$( )", "process_substitution": "<( )"}
_JUDGED_KIND = {
    "command_substitution": substitutions.COMMAND,
    "process_substitution": substitutions.COMMAND,
    "arithmetic_expansion": substitutions.ARITHMETIC,
}
_OPENER_CONTEXT = {b"$(": "$( )", b"<(": "<( )", b">(": ">( )"}


@dataclass(frozen=True)
class Redirect:
    """``op`` as written (``>``, ``>>``, ``&>``, ``<``, ``<<<`` …) and its target word."""

    op: str
    target: Word
    fd: str = ""

    @property
    def writes_file(self) -> bool:
        if "<" in self.op and ">" not in self.op:
            return False
        if self.op in (">&", "<&") and (self.target.text.isdigit() or self.target.text == "-"):
            return False  # duplicates or closes a descriptor
        return ">" in self.op


@dataclass(frozen=True)
class RawCommand:
    """One simple command (or declaration, assignment, function definition) as written."""

    kind: str  # command | assign | declare | unset | function | redirect
    words: tuple[Word, ...]
    assignments: tuple[tuple[str, Word], ...]
    redirects: tuple[Redirect, ...]
    source: str
    context: str = ""  # where it was found: "$( )", "<( )", "bash -c", "function f" …
    parent: int | None = None  # index of the command whose words contain this one
    pipeline: int | None = None
    stage: int = 0


@dataclass
class Parsed:
    commands: list[RawCommand] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)  # names defined by this command
    flow: Flow = field(default_factory=Flow)  # values bash evaluates as code (evaluation.py)
    # (byte offset in the line, kind) of every $( ), backtick, <( ), $(( )) the walk judged
    judged: set[tuple[int, str]] = field(default_factory=set)
    # expansions bash would run that could not be read (the line is asked about)
    unread: list[str] = field(default_factory=list)
    # (start, end, command index): where each command of the line sits, for re-reads
    spans: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class _Ctx:
    context: str = ""
    parent: int | None = None
    pipeline: int | None = None
    stage: int = 0


class BashParser:
    """Parses one command line at a time; ``parse`` may be re-entered for ``bash -c``."""

    def __init__(self, home: str) -> None:
        self.words = WordReader(home)
        self._pipelines = 0
        self._origin: Callable[[int], int] | None = None  # see ``_read``

    def parse(
        self,
        source: str,
        into: Parsed | None = None,
        *,
        context: str = "",
        parent: int | None = None,
    ) -> Parsed:
        """The commands of ``source``. A line (``into`` None) is also checked for
        substitutions the walk did not see; a script given to a shell (``into``: the line's
        ``Parsed``) is not: its text is not the line's, and the driver never sees it."""
        parsed = into if into is not None else Parsed()
        encoded = source.encode("utf-8", "surrogateescape")
        found = substitutions.scan(encoded)
        if "\x00" in source:
            parsed.errors.append("contains a NUL byte, which bash drops")
        line = into is None
        origin = _origin(found.joins) if line else None
        self._read(_without(encoded, found.joins), parsed, _Ctx(context, parent), origin)
        if line:
            self._reread(encoded, found, parsed)
        return parsed

    def _read(
        self, text: bytes, out: Parsed, ctx: _Ctx, origin: Callable[[int], int] | None
    ) -> None:
        """Parse ``text`` and walk it into ``out``; ``origin`` maps its byte offsets to the
        line's (None: not the line's text, nothing is recorded as judged)."""
        root = _PARSER.parse(text).root_node
        if root.has_error:
            out.errors.append(_describe_error(root, text))
        _check_tokens(root, out)
        saved, self._origin = self._origin, origin
        try:
            self._walk(root, out, ctx)
        finally:
            self._origin = saved
        scan(root, text, self.words, out.flow)

    def _reread(self, line: bytes, found: substitutions.Scan, out: Parsed) -> None:
        """Walk every substitution the lexer found in ``line`` that the walk did not judge,
        parsed on its own (its commands feed the command it sits in); note the ones that
        cannot be read so, and a line the lexer could not follow, in ``out.unread``."""
        for start, end, kind, heredoc in found.tokens:
            if (start, kind) in out.judged:
                continue
            shown = line[start : start + 3].decode("utf-8", "replace")
            text = _alone(line, start, end, kind)
            if text is None:
                out.unread.append(
                    f"bash would expand {shown}… at byte {start}, which the policy cannot read"
                )
                continue
            context = "heredoc" if heredoc else _OPENER_CONTEXT.get(line[start : start + 2], "")
            errors = len(out.errors)
            self._read(text, out, _Ctx(context or "`…`", self._innermost(out, start)), _same)
            if len(out.errors) > errors:
                out.unread.append(f"bash would expand {shown}… at byte {start}: {out.errors[-1]}")
            else:
                out.judged.add((start, kind))
        if found.unsure:
            out.unread.append(f"where its quoting ends is not clear: {found.unsure}")

    @staticmethod
    def _innermost(out: Parsed, offset: int) -> int | None:
        inside = [(end - start, i) for start, end, i in out.spans if start <= offset < end]
        return min(inside)[1] if inside else None

    def _judged(self, node: Node, out: Parsed) -> None:
        if self._origin is not None:
            out.judged.add((self._origin(node.start_byte), _JUDGED_KIND[node.type]))

    def _span(self, node: Node, out: Parsed, index: int) -> None:
        if self._origin is not None:
            start, end = self._origin(node.start_byte), self._origin(node.end_byte)
            out.spans.append((start, end, index))

    def _walk(self, node: Node, out: Parsed, ctx: _Ctx) -> None:
        kind = node.type
        if kind == "command":
            self._command(node, out, ctx, [])
        elif kind == "redirected_statement":
            self._redirected(node, out, ctx)
        elif kind == "pipeline":
            self._pipelines += 1
            pid = self._pipelines
            for stage, child in enumerate(c for c in node.named_children if c.type != "comment"):
                self._walk(child, out, _Ctx(ctx.context, ctx.parent, pid, stage))
        elif kind == "function_definition":
            name_node = node.child_by_field_name("name")
            name = _text(name_node) if name_node is not None else "?"
            out.functions.append(name)
            self._add(out, "function", (Word(name),), (), (), node, ctx)
            body = node.child_by_field_name("body")
            if body is not None:
                self._walk(body, out, _Ctx(f"function {name}", ctx.parent))
        elif kind == "declaration_command":
            words = (Word(_text(node.children[0])),)
            self._simple_like(node, out, ctx, "declare", words)
        elif kind == "unset_command":
            self._simple_like(node, out, ctx, "unset", (Word("unset"),))
        elif kind in ("variable_assignment", "variable_assignments"):
            self._simple_like(node, out, ctx, "assign", ())
        else:
            if kind in _JUDGED_KIND:
                self._judged(node, out)
            for child in node.named_children:
                self._walk(child, out, ctx)

    def _simple_like(
        self, node: Node, out: Parsed, ctx: _Ctx, kind: str, head: tuple[Word, ...]
    ) -> None:
        assignments: list[tuple[str, Word]] = []
        words = list(head)
        nodes = (
            node.named_children
            if kind != "assign" or node.type != "variable_assignment"
            else [node]
        )
        for child in nodes:
            if child.type == "variable_assignment":
                assignments.append(self._assignment(child))
            elif child.type == "variable_assignments":
                assignments.extend(self._assignment(c) for c in child.named_children)
            elif kind != "assign":
                words.append(self.words.read(child))
        index = self._add(out, kind, tuple(words), tuple(assignments), (), node, ctx)
        self._substitutions(node, out, index)

    def _redirected(self, node: Node, out: Parsed, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        redirect_nodes = node.children_by_field_name("redirect")
        redirects = [r for n in redirect_nodes if (r := self._redirect(n)) is not None]
        heredoc_pipeline = next(
            (c for n in redirect_nodes for c in n.named_children if c.type == "pipeline"), None
        )
        body_ctx = ctx
        if heredoc_pipeline is not None:
            # `cat <<EOF | bash`: the pipeline hangs off the heredoc; the body is stage 0.
            self._pipelines += 1
            body_ctx = _Ctx(ctx.context, ctx.parent, self._pipelines, 0)
        if body is not None and body.type == "command":
            index = self._command(body, out, body_ctx, redirects)
            self._span(node, out, index)  # its here-documents feed it
        else:
            index = self._add(out, "redirect", (), (), tuple(redirects), node, body_ctx)
            if body is not None:
                self._walk(body, out, ctx)
        for n in redirect_nodes:
            for child in n.named_children:
                if child.type == "pipeline" and body_ctx.pipeline is not None:
                    stages = [c for c in child.named_children if c.type != "comment"]
                    for stage, c in enumerate(stages, start=1):
                        self._walk(c, out, _Ctx(ctx.context, ctx.parent, body_ctx.pipeline, stage))
                elif child.type in ("heredoc_body", "heredoc_redirect", "redirected_statement"):
                    self._walk(child, out, _Ctx("heredoc", index))
                else:
                    self._substitutions(child, out, index)

    def _command(self, node: Node, out: Parsed, ctx: _Ctx, redirects: list[Redirect]) -> int:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        inner_redirects = list(redirects)
        for child in node.named_children:
            if child.type == "variable_assignment":
                assignments.append(self._assignment(child))
            elif child.type == "command_name":
                words.append(
                    self.words.read(child.named_children[0])
                    if child.named_children
                    else Word(_text(child))
                )
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                r = self._redirect(child)
                if r is not None:
                    inner_redirects.append(r)
            elif child.type != "comment":
                words.append(self.words.read(child))
        index = self._add(
            out, "command", tuple(words), tuple(assignments), tuple(inner_redirects), node, ctx
        )
        self._substitutions(node, out, index)
        return index

    def _assignment(self, node: Node) -> tuple[str, Word]:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name_text = _text(name) if name is not None else _text(node).split("=", 1)[0]
        if value is None:
            return name_text, Word("")
        return name_text.rstrip("+"), self.words.read(value)

    def _redirect(self, node: Node) -> Redirect | None:
        op = "".join(_text(c) for c in node.children if not c.is_named)
        fd = next((_text(c) for c in node.named_children if c.type == "file_descriptor"), "")
        if node.type == "heredoc_redirect":
            return None  # input only; its body is walked for substitutions
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        if not targets:
            return None
        return Redirect(op=op, target=self.words.read(targets[-1]), fd=fd)

    def _substitutions(self, node: Node, out: Parsed, parent: int) -> None:
        """Walk every $( ), backtick and <( ) inside ``node``; their commands feed ``parent``."""
        for child in node.named_children:
            if child.type in _JUDGED_KIND:
                self._judged(child, out)
            if child.type in _SUBSTITUTION_CONTEXT:
                context = _SUBSTITUTION_CONTEXT[child.type]
                if _text(child).startswith("`"):
                    context = "`…`"
                elif _text(child).startswith(">("):
                    context = ">( )"
                for inner in child.named_children:
                    self._walk(inner, out, _Ctx(context, parent))
            elif child.type in ("heredoc_body", "heredoc_redirect"):
                self._walk(child, out, _Ctx("heredoc", parent))
            else:
                self._substitutions(child, out, parent)

    def _add(
        self,
        out: Parsed,
        kind: str,
        words: tuple[Word, ...],
        assignments: tuple[tuple[str, Word], ...],
        redirects: tuple[Redirect, ...],
        node: Node,
        ctx: _Ctx,
    ) -> int:
        out.commands.append(
            RawCommand(
                kind=kind,
                words=words,
                assignments=assignments,
                redirects=redirects,
                source=_text(node),
                context=ctx.context,
                parent=ctx.parent,
                pipeline=ctx.pipeline,
                stage=ctx.stage,
            )
        )
        self._span(node, out, len(out.commands) - 1)
        return len(out.commands) - 1


def _without(text: bytes, joins: list[int]) -> bytes:
    """``text`` without the backslash-newline pairs at ``joins`` (bash removes them before it
    splits words; tree-sitter-bash would split a word there)."""
    if not joins:
        return text
    parts, last = [], 0
    for at in joins:
        parts.append(text[last:at])
        last = at + 2
    parts.append(text[last:])
    return b"".join(parts)


def _origin(joins: list[int]) -> Callable[[int], int]:
    """Maps an offset in the line without its joins (``_without``) to one in the line."""
    if not joins:
        return _same
    joined = [at - 2 * n for n, at in enumerate(joins)]
    return lambda offset: offset + 2 * bisect_right(joined, offset)


def _same(offset: int) -> int:
    return offset


def _alone(line: bytes, start: int, end: int, kind: str) -> bytes | None:
    """The substitution at ``start`` as text to parse on its own, at the same offsets
    (spaces before it): the commands of ``$( )``, ``<( )`` or backticks, the arithmetic of
    ``$(( ))`` or ``$[ ]`` as ``(( ))``. None when that cannot be done faithfully: unclosed,
    a ``${ cmd; }``, a backtick text bash would unescape, a backslash-newline inside."""
    opener, text = line[start : start + 2], line[start:end]
    if kind == substitutions.COMMAND and opener in (b"$(", b"<(", b">(") and text[-1:] == b")":
        inner, at = text[2:-1], start + 2
    elif kind == substitutions.COMMAND and opener[:1] == b"`" and len(text) > 1:
        inner, at = text[1:-1], start + 1
        if b"\\" in inner or text[-1:] != b"`":
            return None
    elif kind == substitutions.ARITHMETIC and opener == b"$(" and text.endswith(b"))"):
        inner, at = b"((" + text[3:-2] + b"))", start + 1
    elif kind == substitutions.ARITHMETIC and opener == b"$[" and text[-1:] == b"]":
        inner, at = b"((" + text[2:-1] + b"))", start
    else:
        return None
    if b"\\\n" in inner:
        return None
    return b" " * at + inner


def _check_tokens(root: Node, parsed: Parsed) -> None:
    """Catch what tree-sitter accepts but bash reads otherwise: ``;;`` outside a case
    statement, and a simple command whose words run across a line break (tree-sitter-bash
    joins ``ls | ls | ls`` NEWLINE ``rm -rf ~ && ls`` into one command ``ls rm -rf ~``,
    where bash runs ``rm``; backslash-newline pairs are joined before parsing)."""
    stack = [root]
    source = root.text or b""
    while stack:
        node = stack.pop()
        if node.type == ";;" and (node.parent is None or node.parent.type not in ("case_item",)):
            parsed.errors.append(f"unexpected ';;' at line {node.start_point[0] + 1}")
        if node.type == "command":
            for before, after in zip(node.children, node.children[1:], strict=False):
                if b"\n" in source[before.end_byte : after.start_byte]:
                    parsed.errors.append(
                        f"syntax error: a command runs on past the end of line "
                        f"{before.end_point[0] + 1}, as bash would not read it"
                    )
                    break
        stack.extend(node.children)


def _describe_error(root: Node, source: bytes) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"syntax error: missing {node.type!r} at line {node.start_point[0] + 1}"
        if node.type == "ERROR":
            snippet = source[node.start_byte : node.end_byte][:20].decode(errors="replace")
            if node.start_byte >= len(source) - 1 or not snippet.strip():
                return "syntax error: unexpected end of input (unclosed quote or trailing \\?)"
            return f"syntax error near {snippet!r} at line {node.start_point[0] + 1}"
        stack.extend(reversed(node.children))
    return "syntax error"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")
