"""Where bash would run code while it expands a command line: ``$( )``, backticks, ``<( )``,
``>( )``, ``$(( ))`` and ``$[ ]``, found by a small lexer that knows bash's quoting.

The policy reads a command with tree-sitter-bash, which leaves some of these as plain text
(the pattern of ``${v#…}``, a here-document body holding backticks, ``$(( '$(cmd)' ))`` …).
This lexer is a second, independent reading of the same bytes: the policy re-reads every
place it reports that tree-sitter did not, and the sandbox's driver refuses a confined
command holding one that the policy did not list as judged.

It errs one way only. Text bash might expand is reported (a report too many makes a command
asked about or refused; one too few would run code nobody judged). Literal are only: single
quoted and ``$'…'`` text in plain command text, escaped characters, comments, and the bodies
of here-documents whose delimiter is quoted. Inside ``${ }``, ``$(( ))``, ``$[ ]``, ``(( ))``
and array subscripts a single quote does not protect what it holds (bash runs the ``$( )``
in ``$(( '$(cmd)' ))``, ``${s:'$(cmd)'}`` and ``"${v:-'$(cmd)'}"``), so their text is read
whole. Backslash-newline pairs are removed where bash removes them (``joins``), so
``$\\⏎(cmd)`` is found too. Whatever the lexer cannot follow to its end (an unclosed quote
or substitution, nesting deeper than ``MAX_DEPTH``) is ``unsure``: the caller must not trust
the reading.

The sandbox's driver loads this module: standard library only, and nothing imported.
"""

from __future__ import annotations

COMMAND = "c"  # $( ), backticks, <( ), >( ): a command runs
ARITHMETIC = "a"  # $(( )), $[ ]: arithmetic (variables' values are evaluated)
FUNSUB = "f"  # ${ cmd; } and ${| cmd; }: bash 5.3 runs a command (5.2: an error)
MAX_DEPTH = 64

_NL, _SP, _TAB = 10, 32, 9
_BACKSLASH, _SQ, _DQ, _BT, _DOLLAR = 92, 39, 34, 96, 36
_LP, _RP, _LB, _RB, _LC, _RC = 40, 41, 91, 93, 123, 125
_LT, _GT, _HASH, _SEMI, _AMP, _PIPE = 60, 62, 35, 59, 38, 124
_METACHARS = frozenset(b" \t\n;&|()<>")
_IDENT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# words after which the next word is again a command (so ``case``/``esac`` are keywords)
_KEEP_COMMAND = frozenset({b"if", b"then", b"else", b"elif", b"do", b"while", b"until"})
_KEEP_COMMAND |= {b"!", b"time", b"{", b"}"}
_SPECIAL_PARAMETERS = b"$!#?-@*0123456789"
_HINTS = (b"$(", b"`", b"<(", b">(", b"$[", b"${", b"\\\n", b">&")


class Scan:
    """What ``scan`` found: ``tokens`` as ``(start, end, kind, in_heredoc)`` byte offsets
    (``end`` is past the closing character, or the end of the text when unclosed), sorted by
    start; ``joins``: offsets of the backslash-newline pairs bash removes; ``unsure``: why
    the reading cannot be trusted ("" when it can)."""

    __slots__ = ("joins", "tokens", "unsure")

    def __init__(self, tokens: list[tuple[int, int, str, bool]], joins: list[int], unsure: str):
        self.tokens = tokens
        self.joins = joins
        self.unsure = unsure


def scan(source: bytes) -> Scan:
    """Every place in ``source`` (a whole command line, UTF-8) where bash would run a
    command substitution, a process substitution or arithmetic expansion."""
    if not any(hint in source for hint in _HINTS):
        return Scan([], [], "")
    lexer = _Lexer(source, 0, False)
    lexer.normal(0, len(source), False)
    return Scan(sorted(lexer.tokens), sorted(lexer.joins), lexer.unsure)


def unlisted(source: bytes, listed: set[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every expansion in ``source`` whose ``(start, kind)`` is
    not in ``listed`` (what a policy judged), and ``(-1, -1, why)`` when the reading cannot
    be trusted."""
    found = scan(source)
    missing = [(t[0], t[1], t[2]) for t in found.tokens if (t[0], t[2]) not in listed]
    if found.unsure:
        missing.append((-1, -1, found.unsure))
    return missing


class _Lexer:
    def __init__(self, src: bytes, depth: int, heredoc: bool) -> None:
        self.src = src
        self.depth = depth
        self.heredoc = heredoc  # inside a here-document body (tokens say so)
        self.tokens: list[tuple[int, int, str, bool]] = []
        self.joins: set[int] = set()
        self.unsure = ""

    # -- helpers --

    def skip(self, i: int, end: int) -> int:
        """Past the backslash-newline pairs at ``i`` (bash removes them before it reads)."""
        src = self.src
        while i + 1 < end and src[i] == _BACKSLASH and src[i + 1] == _NL:
            self.joins.add(i)
            i += 2
        return i

    def doubt(self, why: str) -> None:
        if not self.unsure:
            self.unsure = why

    def mark(self) -> tuple[int, set[int], str]:
        return len(self.tokens), set(self.joins), self.unsure

    def restore(self, mark: tuple[int, set[int], str]) -> None:
        """Forget what was read since ``mark`` (a guess at arithmetic that was wrong)."""
        del self.tokens[mark[0] :]
        self.joins, self.unsure = mark[1], mark[2]

    def process(self, i: int, k: int, end: int) -> int:
        """``<(`` or ``>(`` at ``i`` (its parenthesis at ``k``): past its ``)``."""
        if self.depth >= MAX_DEPTH:
            self.doubt("substitutions nested too deeply to follow")
            return end
        self.depth += 1
        try:
            j = self.normal(k + 1, end, True)
        finally:
            self.depth -= 1
        self.token(i, j, COMMAND)
        return j

    def token(self, start: int, end: int, kind: str) -> None:
        self.tokens.append((start, end, kind, self.heredoc))

    # -- plain command text --

    def normal(self, i: int, end: int, closed: bool) -> int:
        """Command text from ``i``; with ``closed`` it is the inside of ``$( )`` or
        ``<( )``, and this returns past its closing parenthesis."""
        src = self.src
        parens: list[bool] = []  # per open "(": True for a subshell, False for a glob group
        cases: list[int] = []  # len(parens) at each open ``case``
        heredocs: list[tuple[bytes, bool, bool]] = []
        token_start = True  # the next character starts a token (so "#" starts a comment)
        command = True  # the next word is in command position
        word = -1  # where the current word started
        target = False  # the next word is a redirection's target
        while True:
            i = self.skip(i, end)
            if i >= end:
                if closed:
                    self.doubt("a $( ) or <( ) is not closed")
                return end
            c = src[i]
            if c in _METACHARS and word >= 0:
                text = src[word:i]
                word = -1
                if target:  # a redirection's target: no keyword, and no command
                    target = False
                elif command and text == b"case":
                    cases.append(len(parens))
                    command = False
                elif command and text == b"esac" and cases and cases[-1] == len(parens):
                    cases.pop()
                    command = False
                elif text in _KEEP_COMMAND or (text == b"in" and cases):
                    command = True
                else:
                    command = False
            if c in (_SP, _TAB):
                token_start = True
                i += 1
                continue
            if c == _NL:
                token_start = command = True
                i += 1
                if heredocs:
                    i = self.bodies(i, end, heredocs)
                    heredocs = []
                continue
            if c == _HASH and token_start:
                newline = src.find(b"\n", i, end)
                i = end if newline < 0 else newline
                continue
            if c in (_SEMI, _AMP, _PIPE):
                token_start = command = True
                i += 1
                continue
            if c == _RP:
                if parens and not (cases and cases[-1] == len(parens)):
                    token_start = parens.pop()
                    command = True
                elif cases:  # the end of a case pattern
                    token_start = command = True
                elif closed:
                    return i + 1
                else:
                    token_start = True  # a stray ")": bash refuses the line
                i += 1
                continue
            if c == _LP:
                k = self.skip(i + 1, end)
                if k < end and src[k] == _LP:  # (( … )): arithmetic, unless a ")" closes it
                    mark = self.mark()
                    j, arithmetic = self.arithmetic(k + 1, end, b"))")
                    if arithmetic:
                        i, token_start = j, False
                        continue
                    self.restore(mark)  # ( ( … ) … ): two subshells
                parens.append(token_start)
                token_start = command = token_start
                i += 1
                continue
            if c in (_LT, _GT):
                k = self.skip(i + 1, end)
                if k < end and src[k] == _LP:
                    if word < 0:
                        word = i
                    i, token_start = self.process(i, k, end), False
                    continue
                if c == _LT and k < end and src[k] == _LT:
                    k = self.skip(k + 1, end)
                    if k < end and src[k] == _LT:  # <<< here-string
                        i, token_start = k + 1, True
                        continue
                    strip = k < end and src[k] == 45  # <<-
                    if strip:
                        k += 1
                    delimiter, quoted, i = self.delimiter(k, end)
                    if delimiter is not None:
                        heredocs.append((delimiter, quoted, strip))
                    token_start = True
                    continue
                if c == _GT and k < end and src[k] == _AMP and _fd_is_output(src, i):
                    i = self.reexpanded(k + 1, end)
                    token_start = True
                    continue
                i, token_start, target = k, True, True
                continue
            # a word character
            if word < 0:
                word = i
            token_start = False
            if c == _BACKSLASH:
                i += 2
            elif c == _SQ:
                close = src.find(b"'", i + 1, end)
                if close < 0:
                    self.doubt("a single quote is not closed")
                    i = end
                else:
                    i = close + 1
            elif c == _DQ:
                i = self.quoted(i + 1, end, True)
            elif c == _BT:
                i = self.backtick(i, end, False)
            elif c == _DOLLAR:
                k = self.skip(i + 1, end)
                d = src[k] if k < end else -1
                if d == _SQ:  # $'…': literal, with backslash escapes
                    j = k + 1
                    while j < end and src[j] != _SQ:
                        j += 2 if src[j] == _BACKSLASH else 1
                    if j >= end:
                        self.doubt("a $'…' string is not closed")
                    i = j + 1
                elif d == _DQ:
                    i = self.quoted(k + 1, end, True)
                else:
                    i = self.dollar(i, k, end, False)
            elif c == _LB and _subscript(src[word:i], parens):
                i = self.arithmetic(i + 1, end, b"]")[0]
            else:
                i += 1

    def reexpanded(self, i: int, end: int) -> int:
        """The word after ``>&`` (or ``1>&``): bash 5.2 expands it, and when the result is
        not a number expands it again, so no quote or backslash in it protects a ``$( )``
        or a backtick (``echo x >&'$(cmd)'`` runs ``cmd``). Every one in it is reported,
        with no extent (the policy cannot re-read it). Past the word."""
        src = self.src
        while i < end and src[i] in (_SP, _TAB):
            i += 1
        start = i
        while True:  # the word's extent, as the lexer reads it
            i = self.skip(i, end)
            if i >= end or src[i] in _METACHARS:
                break
            c = src[i]
            if c == _BACKSLASH:
                i += 2
            elif c == _SQ:
                close = src.find(b"'", i + 1, end)
                i = end if close < 0 else close + 1
            elif c == _DQ:
                i = self.quoted(i + 1, end, True)
            elif c == _BT:
                i = self.backtick(i, end, False)
            elif c == _DOLLAR:
                k = self.skip(i + 1, end)
                i = self.dollar(i, k, end, False)
            else:
                i += 1
        i = min(i, end)
        bare = [(j, b) for j, b in enumerate(src[start:i], start) if b not in b"\\'\""]
        text = bytes(b for _, b in bare)
        for opener, kind in (
            (b"$(", COMMAND),
            (b"`", COMMAND),
            (b"$[", ARITHMETIC),
            (b"${", COMMAND),
            (b"<(", COMMAND),
            (b">(", COMMAND),
        ):
            at = text.find(opener)
            while at >= 0:
                self.token(bare[at][0], bare[at][0], kind)
                at = text.find(opener, at + 1)
        return i

    # -- the rest of bash's quoting --

    def dollar(self, i: int, k: int, end: int, quoted: bool) -> int:
        """``$`` at ``i``, its next character at ``k``: ``$(``, ``$((``, ``$[``, ``${``; past
        a special parameter (``$$[`` is ``$$`` and a ``[``)."""
        following = self.src[k : k + 1]
        if following not in (b"(", b"[", b"{"):
            return k + 1 if following and following in _SPECIAL_PARAMETERS else k
        if self.depth >= MAX_DEPTH:
            self.doubt("substitutions nested too deeply to follow")
            return end
        self.depth += 1
        try:
            return self._dollar(i, k, end, quoted)
        finally:
            self.depth -= 1

    def _dollar(self, i: int, k: int, end: int, quoted: bool) -> int:
        src = self.src
        d = src[k]
        if d == _LP:
            k2 = self.skip(k + 1, end)
            if k2 < end and src[k2] == _LP:
                # bash reads $(( … )) as arithmetic when the parenthesis that closes the
                # second "(" is followed by ")"; else as a command substitution of a subshell
                mark = self.mark()
                j, arithmetic = self.arithmetic(k2 + 1, end, b"))")
                if arithmetic:
                    self.token(i, j, ARITHMETIC)
                    return j
                self.restore(mark)
            j = self.normal(k + 1, end, True)
            self.token(i, j, COMMAND)
            return j
        if d == _LB:
            j = self.arithmetic(k + 1, end, b"]")[0]
            self.token(i, j, ARITHMETIC)
            return j
        k2 = self.skip(k + 1, end)  # ${
        if k2 < end and src[k2] in (_SP, _TAB, _NL, _PIPE):
            self.token(i, k2, FUNSUB)  # what follows is read on as it stands
            return k2
        return self.parameter(k2, end, quoted)

    def parameter(self, i: int, end: int, quoted: bool) -> int:
        """The inside of ``${ … }`` from ``i``, past its ``}``. Single quotes group text
        (a ``}`` inside does not close) but do not protect it: in an offset, a subscript
        or ``"${v:-'…'}"`` bash expands what they hold."""
        src = self.src
        while True:
            i = self.skip(i, end)
            if i >= end:
                self.doubt("a ${ } is not closed")
                return end
            c = src[i]
            if c == _RC:
                return i + 1
            if c == _BACKSLASH:
                i += 2
            elif c == _SQ:
                i = self.single_quoted_read(i, end)
            elif c == _DQ:
                i = self.quoted(i + 1, end, True)
            elif c == _BT:
                i = self.backtick(i, end, quoted)
            elif c == _DOLLAR:
                i = self.dollar(i, self.skip(i + 1, end), end, quoted)
            elif c in (_LT, _GT) and quoted:
                # "${v/<(cmd)/}" runs it (a pattern), "${v:-<(cmd)}" does not (a word read
                # like "…"): reported, its text read on as this ${ }'s
                if src[i + 1 : i + 2] == b"(":
                    self.token(i, i + 2, COMMAND)
                i += 1
            elif c in (_LT, _GT):
                k = self.skip(i + 1, end)
                i = self.process(i, k, end) if k < end and src[k] == _LP else k
            else:
                i += 1

    def single_quoted_read(self, i: int, end: int) -> int:
        """``'…'`` at ``i`` where the quotes do not protect: its text is read as inside
        double quotes. Past the closing quote."""
        close = self.src.find(b"'", i + 1, end)
        if close < 0:
            self.doubt("a single quote is not closed")
            close = end
        self.quoted(i + 1, close, False)
        return close + 1

    def quoted(self, i: int, end: int, closed: bool) -> int:
        """Double-quoted text from ``i`` (past its closing quote when ``closed``), or text
        read like it up to ``end``: a here-document body, a single-quoted part that does
        not protect. Only ``$`` and backticks are special, and ``\\`` before them."""
        src = self.src
        while True:
            i = self.skip(i, end)
            if i >= end:
                if closed:
                    self.doubt("a double quote is not closed")
                return end
            c = src[i]
            if c == _BACKSLASH:
                i += 2
            elif c == _DQ and closed:
                return i + 1
            elif c == _BT:
                i = self.backtick(i, end, closed)
            elif c == _DOLLAR:
                i = self.dollar(i, self.skip(i + 1, end), end, True)
            else:
                i += 1

    def arithmetic(self, i: int, end: int, closer: bytes) -> tuple[int, bool]:
        """Arithmetic text from ``i`` up to ``))`` or ``]``: read like double-quoted text
        (quotes group but do not protect). Returns the offset past the closer and whether
        it was found: for ``))``, False when a single ``)`` closed the parentheses."""
        src = self.src
        depth = 0
        opening, closing = (_LP, _RP) if closer == b"))" else (_LB, _RB)
        while True:
            i = self.skip(i, end)
            if i >= end:
                self.doubt("arithmetic is not closed")
                return end, False
            c = src[i]
            if c == _BACKSLASH:
                i += 2
            elif c == _SQ:
                i = self.single_quoted_read(i, end)
            elif c == _DQ:
                i = self.quoted(i + 1, end, True)
            elif c == _BT:
                i = self.backtick(i, end, True)
            elif c == _DOLLAR:
                i = self.dollar(i, self.skip(i + 1, end), end, True)
            elif c in (_LT, _GT) and src[i + 1 : i + 2] == b"(":
                # not a process substitution in $(( )) but one in a[…]= (bash's lexer reads
                # the word first): reported either way, its text read on as arithmetic
                self.token(i, i + 2, COMMAND)
                i += 1
            elif c == opening:
                depth += 1
                i += 1
            elif c == closing:
                if depth:
                    depth -= 1
                    i += 1
                elif closing == _RB:
                    return i + 1, True
                else:
                    k = self.skip(i + 1, end)
                    if k < end and src[k] == _RP:
                        return k + 1, True
                    return i + 1, False
            else:
                i += 1

    def backtick(self, i: int, end: int, in_double_quotes: bool) -> int:
        """A backtick substitution at ``i``, past its closing backtick. Bash takes its text
        up to the next unescaped backtick, drops the backslash before ``$``, a backtick or
        ``\\`` (and ``"`` inside double quotes), and parses the result as commands: so is it
        read here, by a lexer of its own whose findings are mapped back to offsets here.
        Whether a ``\\"`` is inside double quotes is not always plain, so text holding one
        is read both ways."""
        if self.depth >= MAX_DEPTH:
            self.doubt("substitutions nested too deeply to follow")
            return end
        src = self.src
        j = i + 1
        while j < end and src[j] != _BT:
            if src[j] == _BACKSLASH and j + 1 < end and src[j + 1] == _NL:
                self.joins.add(j)
            j += 2 if src[j] == _BACKSLASH else 1
        if j >= end:
            self.doubt("a backtick substitution is not closed")
            j = end
        text = src[i + 1 : j]
        ways = [b'$`\\"', b"$`\\"] if b'\\"' in text else [b"$`\\"]
        for special in ways:
            self._inner(i + 1, j, special)
        self.token(i, min(j + 1, end), COMMAND)
        return min(j + 1, end)

    def _inner(self, start: int, stop: int, special: bytes) -> None:
        src = self.src
        inner = bytearray()
        where: list[int] = []  # offset in src of each byte of inner
        j = start
        while j < stop:
            if src[j] == _BACKSLASH and j + 1 < stop:
                if src[j + 1] == _NL:
                    j += 2
                    continue
                if src[j + 1] in special:
                    inner.append(src[j + 1])
                    where.append(j + 1)
                    j += 2
                    continue
            inner.append(src[j])
            where.append(j)
            j += 1
        where.append(stop)  # the end of the inner text is the closing backtick
        sub = _Lexer(bytes(inner), self.depth + 1, self.heredoc)
        sub.normal(0, len(inner), False)
        for first, last, kind, heredoc in sub.tokens:
            found = (where[first], where[last - 1] + 1, kind, heredoc or self.heredoc)
            if found not in self.tokens:
                self.tokens.append(found)
        if sub.unsure:
            self.doubt(sub.unsure)

    # -- here-documents --

    def delimiter(self, i: int, end: int) -> tuple[bytes | None, bool, int]:
        """The word after ``<<``: (the delimiter with quotes removed or None, whether any
        part was quoted (the body is then literal), the offset past it)."""
        src = self.src
        while True:
            i = self.skip(i, end)
            if i < end and src[i] in (_SP, _TAB):
                i += 1
                continue
            break
        word = bytearray()
        quoted = False
        start = i
        while True:
            i = self.skip(i, end)
            if i >= end or src[i] in _METACHARS:
                break
            c = src[i]
            if c == _BACKSLASH and i + 1 < end:
                quoted = True
                word.append(src[i + 1])
                i += 2
            elif c == _SQ or (c == _DOLLAR and i + 1 < end and src[i + 1] in (_SQ, _DQ)):
                quoted = True
                if c == _DOLLAR:
                    i += 1
                q = src[i]
                close = src.find(bytes([q]), i + 1, end)
                close = end if close < 0 else close
                word += src[i + 1 : close]
                i = close + 1
            elif c == _DQ:
                quoted = True
                j = i + 1
                while j < end and src[j] != _DQ:
                    if src[j] == _BACKSLASH and j + 1 < end:
                        j += 1
                    word.append(src[j])
                    j += 1
                i = j + 1
            else:
                word.append(c)
                i += 1
        if i == start:
            return None, False, i
        return bytes(word), quoted, min(i, end)

    def bodies(self, i: int, end: int, heredocs: list[tuple[bytes, bool, bool]]) -> int:
        """The bodies of the here-documents opened on the line just ended, from ``i``; past
        the last delimiter line. An unquoted body is read like double-quoted text; its
        backslash-newline pairs are removed before a line is compared with the delimiter
        (as bash does); a quoted one is literal and keeps them. A body without its
        delimiter runs to the end (bash warns, and runs it)."""
        src = self.src
        for delimiter, quoted, strip in heredocs:
            start = i
            stop = end
            while i < end:
                line_start = i
                line = b""
                while True:
                    newline = src.find(b"\n", i, end)
                    piece = src[i : end if newline < 0 else newline]
                    backslashes = len(piece) - len(piece.rstrip(b"\\"))
                    if not quoted and newline >= 0 and backslashes % 2 == 1:
                        self.joins.add(newline - 1)
                        line += piece[:-1]
                        i = newline + 1
                        continue
                    line += piece
                    i = end if newline < 0 else newline + 1
                    break
                if (line.lstrip(b"\t") if strip else line) == delimiter:
                    stop = line_start
                    break
            if not quoted:
                was, self.heredoc = self.heredoc, True
                self.quoted(start, stop, False)
                self.heredoc = was
        return i


def _subscript(before: bytes, parens: list[bool]) -> bool:
    """Whether a ``[`` after ``before`` (the word so far) opens an array subscript, which
    bash reads as arithmetic: ``a[…]=``, or ``[…]=`` inside ``a=( … )``."""
    if not before:
        return bool(parens) and not parens[-1]
    return all(b in _IDENT for b in before)


def _fd_is_output(src: bytes, i: int) -> bool:
    """Whether the ``>`` at ``i`` redirects standard output: no number before it, or 1."""
    j = i
    while j > 0 and 48 <= src[j - 1] <= 57:
        j -= 1
    if j > 0 and src[j - 1] not in _METACHARS:
        return True  # "a1>&": the digits end a word; the redirection is of stdout
    return src[j:i] in (b"", b"1")
