"""Split a bash command into every simple command it would run, using tree-sitter-bash.

The walk visits the whole syntax tree, so commands hidden in lists, pipelines, subshells,
``$( )``, backticks, ``<( )``/``>( )``, heredoc bodies, function bodies, loops and tests are
all found. Each becomes a ``RawCommand`` with evaluated words, assignment prefixes and
redirections; ``parent`` links a command found inside another command's words (its output
feeds that command). Syntax trouble is reported in ``Parsed.errors``: the engine never
allows a command bash would parse differently from what it shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from shellagent.policy.values import Flow, scan
from shellagent.policy.words import Word, WordReader

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)

_SUBSTITUTION_CONTEXT = {"command_substitution": "$( )", "process_substitution": "<( )"}


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

    def parse(
        self,
        source: str,
        into: Parsed | None = None,
        *,
        context: str = "",
        parent: int | None = None,
    ) -> Parsed:
        parsed = into if into is not None else Parsed()
        source = join_continuations(source)
        encoded = source.encode("utf-8", "surrogateescape")
        tree = _PARSER.parse(encoded)
        root = tree.root_node
        if root.has_error:
            parsed.errors.append(_describe_error(root, source))
        _check_tokens(root, parsed)
        if "\x00" in source:
            parsed.errors.append("contains a NUL byte, which bash drops")
        self._walk(root, parsed, _Ctx(context=context, parent=parent))
        scan(root, encoded, self.words, parsed.flow)
        return parsed

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

    @staticmethod
    def _add(
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
        return len(out.commands) - 1


def join_continuations(source: str) -> str:
    """Drop backslash-newline pairs as bash does before splitting words.

    tree-sitter-bash splits ``r\\<newline>m`` into two words where bash reads ``rm``.
    Inside single quotes and comments the pair is literal, and is kept.
    """
    if "\\\n" not in source:
        return source
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "'" and (i == 0 or source[i - 1] != "\\"):
            end = source.find("'", i + 1)
            end = n - 1 if end == -1 else end
            out.append(source[i : end + 1])
            i = end + 1
        elif ch == "#" and (i == 0 or source[i - 1] in " \t\n;&|()"):
            end = source.find("\n", i)
            end = n if end == -1 else end
            out.append(source[i:end])
            i = end
        elif ch == "\\" and i + 1 < n:
            if source[i + 1] != "\n":
                out.append(source[i : i + 2])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


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


def _describe_error(root: Node, source: str) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"syntax error: missing {node.type!r} at line {node.start_point[0] + 1}"
        if node.type == "ERROR":
            snippet = source.encode()[node.start_byte : node.end_byte][:20].decode(errors="replace")
            if node.start_byte >= len(source.encode()) - 1 or not snippet.strip():
                return "syntax error: unexpected end of input (unclosed quote or trailing \\?)"
            return f"syntax error near {snippet!r} at line {node.start_point[0] + 1}"
        stack.extend(reversed(node.children))
    return "syntax error"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")
