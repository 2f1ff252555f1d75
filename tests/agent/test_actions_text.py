"""What a model may write in an action: visible text only, in every field, bounded.

The parser is checked with JSON a server that ignores the grammar could send (escaped
controls, raw bidi and zero-width characters, oversized fields); the grammar is checked
with llama.cpp's own grammar engine over the embedded model's vocabulary, so what it
refuses is exactly what a constrained model cannot produce.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest

from shellagent.agent.actions import (
    CMD_MAX,
    DONE_MAX,
    NAME_MAX,
    WHY_MAX,
    FinishAction,
    RunAction,
    ScheduleAction,
    parse_action,
)
from shellagent.chars import HIDDEN_RANGES, INVISIBLE, VARIATION_SELECTORS, kind
from shellagent.errors import InputError

SCHEDULE = {"every": "week", "on": "sun", "at": "03:00", "name": "backup"}

# Each: a character, and the word the error must use for it.
HIDDEN = [
    ("\x00", "control character"),
    ("\x07", "control character"),
    ("\x1b", "escape"),
    ("\r", "carriage return"),
    ("\x9b", "control character"),  # C1 CSI: an escape sequence in one character
    ("\x7f", "control character"),
    ("\u202e", "bidirectional"),
    ("\u2066", "bidirectional"),
    ("\u200b", "zero-width"),
    ("\ufeff", "zero-width"),
    ("\u2060", "zero-width"),
    ("\U000e0041", "zero-width"),  # a tag character: invisible ASCII
    ("\u3164", "invisible"),
    ("\u2028", "line or paragraph separator"),
    ("\u2029", "line or paragraph separator"),
    ("\ufe0f", "zero-width"),  # variation selectors (review 3 L10)
    ("\ufe00", "zero-width"),
    ("\U000e0100", "zero-width"),
    ("\u180b", "zero-width"),
    ("\ud800", "surrogate"),  # last: the grammar tests cannot encode it
]

# Every text field of every action kind, as a function of the value to put in it.
FIELDS = {
    "cmd": lambda v: {"cmd": f"ls {v}x", "why": "w"},
    "why": lambda v: {"cmd": "ls", "why": f"list {v}files"},
    "done": lambda v: {"done": f"all {v}done"},
    "name": lambda v: {**SCHEDULE, "name": f"back{v}up"},
    "every": lambda v: {**SCHEDULE, "every": f"we{v}ek"},
    "on": lambda v: {**SCHEDULE, "on": f"s{v}un"},
    "at": lambda v: {**SCHEDULE, "at": f"03{v}00"},
}


def reply(obj: dict[str, str]) -> str:
    """The reply a server would send: JSON with every non-ASCII character escaped."""
    return json.dumps(obj)


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize(
    ("ch", "word"), HIDDEN, ids=lambda x: f"U+{ord(x):04X}" if len(x) == 1 else None
)
def test_a_hidden_character_in_any_field_is_refused(field: str, ch: str, word: str) -> None:
    with pytest.raises(InputError) as info:
        parse_action(reply(FIELDS[field](ch)))
    message = info.value.text()
    assert info.value.exit_code == 2
    assert word in message and f"U+{ord(ch):04X}" in message, message
    assert all(kind(c) is None for c in message)  # the message itself is safe to print


# Where a combining mark sits on no letter: after a slash, a space, a digit, a colon, at
# the start (review 3 L10).
LONE_MARKS = {
    "cmd": lambda m: {"cmd": f"rm -rf /{m}tmp", "why": "w"},
    "why": lambda m: {"cmd": "ls", "why": f"list {m}files"},
    "done": lambda m: {"done": f"{m}all done"},
    "name": lambda m: {**SCHEDULE, "name": f"backup 2{m}"},
    "every": lambda m: {**SCHEDULE, "every": f"{m}week"},
    "on": lambda m: {**SCHEDULE, "on": f"{m}sun"},
    "at": lambda m: {**SCHEDULE, "at": f"3:{m}00"},
}


@pytest.mark.parametrize("field", sorted(LONE_MARKS))
@pytest.mark.parametrize("mark", ["\u0338", "\u0301", "\u20e3", "\u093e"])
def test_a_combining_mark_on_no_letter_is_refused_in_any_field(field: str, mark: str) -> None:
    with pytest.raises(InputError) as info:
        parse_action(reply(LONE_MARKS[field](mark)))
    assert "combining mark" in info.value.text() and f"U+{ord(mark):04X}" in info.value.text()


def test_a_scripts_mark_on_a_letter_of_another_script_is_refused() -> None:
    with pytest.raises(InputError, match="combining mark"):
        parse_action(reply({"cmd": "echo a\u093e", "why": ""}))


def test_a_use_reply_refuses_a_lone_mark_in_its_values() -> None:
    with pytest.raises(InputError, match="combining mark"):
        parse_action(json.dumps({"use": "largest_files", "args": {"dir": "/\u0338"}}))
    with pytest.raises(InputError, match="invisible"):
        parse_action(json.dumps({"use": "largest_files", "args": {"dir": "x\ufe0f"}}))


@pytest.mark.parametrize(
    "text",
    [
        "cafe\u0301 cre\u0300me",  # decomposed accents on their letters
        "Vie\u0302\u0323t",  # two marks stacked on one letter
        "\u0915\u093e\u0930\u094d",  # Devanagari signs on Devanagari letters
        "\u05e9\u05c1\u05b8",  # Hebrew points on a Hebrew letter
        "\u30ab\u3099",  # a kana voicing mark
    ],
)
def test_marks_on_their_letters_are_text(text: str) -> None:
    assert parse_action(reply({"cmd": f"echo {text}", "why": text})) == RunAction(
        cmd=f"echo {text}", why=text
    )


@pytest.mark.parametrize("field", ["why", "name", "every", "on", "at"])
@pytest.mark.parametrize("ch", ["\n", "\t"])
def test_one_line_fields_refuse_newlines_and_tabs(field: str, ch: str) -> None:
    with pytest.raises(InputError):
        parse_action(reply(FIELDS[field](ch)))


def test_a_newline_spoofing_the_approval_screen_through_why_is_refused() -> None:
    # Security review H5: erase the real command line and draw a harmless one.
    spoof = (
        '{"cmd":"rm -rf ~/Documents","why":"tidy\\u001b[1A\\u001b[2K\\r[1] $ ls -la ~/Documents"}'
    )
    with pytest.raises(InputError, match=r"the reason \(why\) contains a terminal escape"):
        parse_action(spoof)


def test_a_job_name_injecting_unit_file_lines_is_refused() -> None:
    # Security review H4: a name that adds an ExecStartPre= to the systemd unit.
    injected = {**SCHEDULE, "name": "backup\n[Service]\nExecStartPre=/bin/sh -c 'id>/tmp/P'"}
    with pytest.raises(InputError, match="the job name contains a newline"):
        parse_action(reply(injected))


@pytest.mark.parametrize(
    ("obj", "what"),
    [
        ({"cmd": "x" * (CMD_MAX + 1), "why": ""}, "the command"),
        ({"cmd": "ls", "why": "w" * (WHY_MAX + 1)}, "the reason"),
        ({"done": "d" * (DONE_MAX + 1)}, "the summary"),
        ({**SCHEDULE, "name": "n" * 10240}, "the job name"),
    ],
)
def test_a_field_longer_than_the_grammar_allows_is_refused(obj: dict[str, str], what: str) -> None:
    with pytest.raises(InputError) as info:
        parse_action(reply(obj))
    assert info.value.message.startswith(what) and "the limit is" in info.value.message
    assert len(info.value.text()) < 200  # the 10 KB is never repeated back


def test_fields_at_their_limits_are_accepted() -> None:
    assert parse_action(reply({"cmd": "x" * CMD_MAX, "why": "w" * WHY_MAX})) == RunAction(
        cmd="x" * CMD_MAX, why="w" * WHY_MAX
    )
    action = parse_action(reply({**SCHEDULE, "name": "n" * NAME_MAX}))
    assert isinstance(action, ScheduleAction) and action.name == "n" * NAME_MAX


ORDINARY = [
    "café crème, naïve façade",
    "日本語のファイルを一覧する「完了」",
    "한국어 파일",
    "emoji ✅ 🎉 ❤ done",
    "Ελληνικά and русский",
    "x²+y² ≤ 1 → ok — “quoted” … 10 €",
    "हिन्दी फ़ाइलें",
    "الملفات العربية",
    "Tiếng Việt, ภาษาไทย, ქართული",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_unicode_text_passes_in_every_prose_field(text: str) -> None:
    assert parse_action(reply({"cmd": "ls", "why": text})) == RunAction(cmd="ls", why=text)
    assert parse_action(reply({"done": text})) == FinishAction(done=text)
    action = parse_action(reply({**SCHEDULE, "name": text[:NAME_MAX]}))
    assert isinstance(action, ScheduleAction) and action.name == text[:NAME_MAX]


def test_commands_and_summaries_keep_newlines_and_tabs() -> None:
    script = "for f in *; do\n\tprintf '%s\\n' \"$f\"\ndone"
    assert parse_action(reply({"cmd": script, "why": "loop"})) == RunAction(cmd=script, why="loop")
    assert parse_action(reply({"done": "a\n\tb"})) == FinishAction(done="a\n\tb")


@pytest.mark.parametrize("space", ["\u00a0", "\u2007", "\u3000", "\u202f"])
def test_a_command_refuses_spaces_that_are_not_word_breaks(space: str) -> None:
    with pytest.raises(InputError, match="unusual space"):
        parse_action(reply({"cmd": f"rm -rf /tmp/x{space}~", "why": ""}))
    # ... which prose may hold (French typography, CJK text)
    assert parse_action(reply({"cmd": "ls", "why": f"a{space}b"})).why == f"a{space}b"  # type: ignore[union-attr]


def test_schedule_fields_take_only_their_ascii_forms() -> None:
    assert parse_action(reply({**SCHEDULE, "on": "Sunday"})) == ScheduleAction(
        every="week", on="sun", at="03:00", name="backup"
    )
    for bad in ({"at": "٠٣:٠٠"}, {"on": "sunXYZ"}, {"on": "s"}, {"every": "weekly!"}):
        with pytest.raises(InputError, match="schedule action"):
            parse_action(reply({**SCHEDULE, **bad}))


def test_every_hidden_character_of_this_python_is_in_the_grammar_ranges() -> None:
    """HIDDEN_RANGES (what the grammar excludes) covers every Cc, Cf, Zl and Zp character
    this Python knows, and holds nothing that is an assigned visible character."""
    inside = {c for lo, hi in HIDDEN_RANGES for c in range(lo, hi + 1)}
    for code in range(0x110000):
        category = unicodedata.category(chr(code))
        hidden = category in ("Cc", "Cf", "Zl", "Zp") or code in INVISIBLE
        hidden = hidden or code in VARIATION_SELECTORS
        if hidden:
            assert code in inside, f"U+{code:04X} ({category}) missing from HIDDEN_RANGES"
        elif code in inside:
            assert category == "Cn", f"U+{code:04X} ({category}) excluded but visible"
    assert all(kind(chr(c)) is not None for c in inside if unicodedata.category(chr(c)) != "Cn")


# -- the grammar, run by llama.cpp ------------------------------------------------------


@pytest.fixture(scope="module")
def grammar_accepts() -> Iterator[Any]:
    """``accepts(text, bytewise=False)``: whether llama.cpp's grammar engine takes ``text``
    as a whole reply, token by token over the embedded model's vocabulary (no weights are
    loaded). ``bytewise`` feeds one single-byte token per byte, as a byte-level tokenizer
    spells a character it has no token for."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from shellagent.agent.actions import ACTION_GBNF
    from shellagent.model.embedded import embedded_model_path
    from shellagent.model.grammar_gate import GrammarGate

    llm = llama_cpp.Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    byte_token: dict[int, int] = {}
    for token in range(int(llm.n_vocab())):
        piece = llm.detokenize([token])
        if len(piece) == 1:
            byte_token.setdefault(piece[0], token)

    def accepts(text: str, bytewise: bool = False) -> bool:
        data = text.encode()
        if bytewise:
            tokens = [byte_token[b] for b in data]
        else:
            tokens = llm.tokenize(data, add_bos=False, special=False)
        gate = GrammarGate(vocab, int(llm.n_vocab()), ACTION_GBNF)
        try:
            for token in tokens:
                if not gate.allows(token):
                    return False
                gate.accept(token)
            return True
        finally:
            gate.close()

    assert len(byte_token) > 200  # a byte-level vocabulary (a few unused bytes have none)
    yield accepts
    llm.close()


def canonical(obj: dict[str, str]) -> str:
    """The reply as a constrained model writes it: the canonical layout, raw UTF-8."""
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


@pytest.mark.model
def test_the_grammar_takes_ordinary_replies_in_any_script(grammar_accepts: Any) -> None:
    assert grammar_accepts(canonical({"cmd": "ls -la", "why": "list files"}))  # positive control
    for text in ORDINARY:
        for bytewise in (False, True):
            assert grammar_accepts(canonical({"cmd": "ls", "why": text}), bytewise), text
            assert grammar_accepts(canonical({"done": text}), bytewise), text
    assert grammar_accepts(canonical({"cmd": "a\n\tb", "why": ""}))
    assert grammar_accepts(canonical({**SCHEDULE, "name": "sauvegarde des fichiers"}))


@pytest.mark.model
@pytest.mark.parametrize(
    ("ch", "word"), HIDDEN[:-1], ids=lambda x: f"U+{ord(x):04X}" if len(x) == 1 else None
)
def test_the_grammar_cannot_produce_a_hidden_character_raw_or_escaped(
    grammar_accepts: Any, ch: str, word: str
) -> None:
    for field in ("cmd", "why", "done", "name"):
        obj = FIELDS[field](ch)
        escaped = json.dumps(obj, separators=(", ", ": "))  # \uXXXX, or \r
        raw = canonical(obj).replace(json.dumps(ch, ensure_ascii=False)[1:-1], ch)
        assert ch in raw
        assert not grammar_accepts(escaped), (field, word)
        assert not grammar_accepts(raw), (field, word)
        assert not grammar_accepts(raw, bytewise=True), (field, word)
        assert grammar_accepts(canonical(FIELDS[field]("-")))  # positive control


@pytest.mark.model
def test_the_grammar_keeps_reasons_and_names_to_one_line(grammar_accepts: Any) -> None:
    assert not grammar_accepts(canonical({"cmd": "ls", "why": "a\nb"}))
    assert not grammar_accepts(canonical({**SCHEDULE, "name": "a\nb"}))
    assert not grammar_accepts(canonical({"cmd": "rm /tmp/x\u00a0~", "why": ""}))
    assert grammar_accepts(canonical({"cmd": "ls", "why": "a\u00a0b"}))
