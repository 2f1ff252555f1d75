"""Turn one tree-sitter word node into the string bash would pass, or say it cannot.

Bash removes quotes and backslashes before a program sees its argv, so ``\\rm``, ``'r'm``,
``"r"m`` and ``$'\\x72m'`` all run ``rm``. This module does that removal for the quoting
forms whose result is known before the command runs. Anything else (variables other than
``$HOME``, command substitution, arithmetic, brace expansion, ``~user``) makes the word
*dynamic*: its text is kept for display, and the engine never allows on its value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from shellagent import substitutions

_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_HOME_VARS = frozenset({"$HOME", "${HOME}"})


@dataclass(frozen=True)
class Word:
    """One shell word: ``text`` is the value bash would produce when ``static``."""

    text: str
    static: bool = True
    glob: bool = False  # unquoted * ? [ : the shell expands it into file names
    substitution: bool = False  # contains $( ), backticks or <( ) >( )

    @property
    def leading_glob(self) -> bool:
        """A glob that may expand to a name starting with ``-``, i.e. to an option."""
        return self.glob and self.text[:1] in "*?["


def _unescape_unquoted(raw: str) -> str:
    # Outside quotes a backslash quotes the next character; backslash-newline vanishes.
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), raw, flags=re.S)


def _unescape_double(raw: str) -> str:
    # Inside double quotes a backslash only escapes $ ` " \ and newline.
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), raw)


def _decode_ansi(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        if head in "xuU" and len(esc) > 1:
            return chr(int(esc[1:], 16))
        if head in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1].upper()) ^ 0x40)
        return _ANSI_SIMPLE.get(esc, "\\" + esc)

    return _ANSI_ESCAPE.sub(one, body)


def _has_unquoted_glob(raw: str) -> bool:
    return re.search(r"(?<!\\)[*?\[]", raw) is not None


def _has_brace_expansion(raw: str) -> bool:
    return re.search(r"(?<!\\)\{[^{}]*(,|\.\.)[^{}]*\}", raw) is not None


class WordReader:
    """Evaluates word nodes against a fixed home directory (for ``~`` and ``$HOME``)."""

    def __init__(self, home: str) -> None:
        self.home = home

    def read(self, node: Node) -> Word:
        parts: list[Word] = []
        self._collect(node, parts, first=True)
        text = "".join(p.text for p in parts)
        static = all(p.static for p in parts)
        substitution = any(p.substitution for p in parts)
        if not static:
            text = _text(node)
            # a $( ) tree-sitter left as text (the pattern of ${v#$(cmd)}) is one still
            substitution = substitution or _hides_command(node.text or b"")
        return Word(
            text=text,
            static=static,
            glob=any(p.glob for p in parts),
            substitution=substitution,
        )

    def _collect(self, node: Node, out: list[Word], *, first: bool) -> None:
        kind = node.type
        raw = _text(node)
        if kind in ("word", "number", "variable_name", "file_descriptor"):
            if first and (raw == "~" or raw.startswith("~/")):
                out.append(
                    Word(self.home + _unescape_unquoted(raw[1:]), glob=_has_unquoted_glob(raw))
                )
            elif first and raw.startswith("~"):
                out.append(Word(raw, static=False))  # ~user: another account's home
            elif "{" in raw and _has_brace_expansion(raw):
                out.append(Word(raw, static=False))
            else:
                out.append(Word(_unescape_unquoted(raw), glob=_has_unquoted_glob(raw)))
        elif kind == "raw_string":
            out.append(Word(raw[1:-1]))
        elif kind == "ansi_c_string":
            out.append(Word(_decode_ansi(raw[2:-1])))
        elif kind in ("string", "translated_string"):
            self._string(node, out)
        elif kind == "concatenation":
            if _has_brace_expansion(raw):
                out.append(Word(raw, static=False))
                return
            for i, child in enumerate(node.children):
                self._collect(child, out, first=first and i == 0)
        elif kind in ("simple_expansion", "expansion") and raw in _HOME_VARS:
            out.append(Word(self.home))
        elif kind in _SUBSTITUTIONS:
            out.append(Word(raw, static=False, substitution=True))
        elif kind == "$":
            return  # the $ of $"..." (locale translation): the string follows
        else:
            # Variables, arithmetic, arrays, anything we cannot evaluate statically.
            out.append(Word(raw, static=False, substitution=_contains_substitution(node)))

    def _string(self, node: Node, out: list[Word]) -> None:
        start = node.start_byte + (2 if _text(node).startswith('$"') else 1)
        end = node.end_byte - 1
        pos = start
        for child in node.named_children:
            if child.start_byte > pos:
                out.append(Word(_unescape_double(_slice(node, pos, child.start_byte))))
            if child.type == "string_content":
                out.append(Word(_unescape_double(_text(child))))
            else:
                self._collect(child, out, first=False)
            pos = child.end_byte
        if end > pos:
            out.append(Word(_unescape_double(_slice(node, pos, end))))


def _hides_command(raw: bytes) -> bool:
    return any(t[2] != substitutions.ARITHMETIC for t in substitutions.scan(raw).tokens)


def _contains_substitution(node: Node) -> bool:
    if node.type in _SUBSTITUTIONS:
        return True
    return any(_contains_substitution(c) for c in node.named_children)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _slice(node: Node, start: int, end: int) -> str:
    # Byte offsets are relative to the whole source; node.text covers only this node.
    base = node.start_byte
    return (node.text or b"")[start - base : end - base].decode("utf-8", "replace")
