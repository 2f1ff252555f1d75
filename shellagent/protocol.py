"""The messages between ``ask`` and the daemon: one JSON object per line, versioned.

Standard library only: ``ask`` imports this module on its start-up path. Both directions
are dataclasses of ``shellagent.events`` (what each one means is tabled there):
``encode_message`` writes a client message, ``encode_event`` a daemon event and
``decode_event`` reads one back. The daemon checks what it receives strictly
(``shellagent.daemon.messages``); the client trusts the daemon (same user, checked by
``SO_PEERCRED``) and reads its events strictly too, so a daemon of another version is an
error that says so, not a traceback.

Every message carries ``v`` (``VERSION``) and ``type``. A line is at most
``MAX_LINE_BYTES`` bytes, newline included; JSON is written with ``ensure_ascii`` so a
line never holds a raw control character, a bidi override or a lone surrogate.

The fields of each message type (``name?``: may be left out, its default then), in the
order of the registries (``tests/test_architecture.py`` holds the tables to them).

Client -> daemon (``events.CLIENT_MESSAGES``)::

    ask               {task, cwd, model?, dry_run?, yes?, interactive?, max_turns?, confirm?,
                      apply?, propose?, continues?, umask?, pick?}
    approval          {id, decision, command, edited?, reason?, scope?}
    changes           {id, decision}
    choice            {id, pick}
    confirm           {id, answer, pick?}
    cancel            {}
    status            {}
    stop              {}

Daemon -> client (``events.WIRE_EVENTS``)::

    accepted          {session, model, overlay?}
    queued            {position}
    thinking          {turn}
    invalid           {turn, stop, raw}
    proposed          {turn, command, why, decision, reasons?, origin?}
    approval_request  {id, turn, command, why, decision, reasons?, carried?, named?, job?}
    approval          {turn, command, decision, edited?, reason?, scope?}
    output            {data}
    result            {turn, command, exit_code, duration_s?, timed_out?, truncated?, confined?,
                      refused?}
    changes           {session, summary, lines, total, deleted, diff?, id?, choices?}
    changes_done      {outcome, message, applied?}
    choice            {id, ran, doubts, alternatives, answer?}
    confirm           {id, summary, unsupported?, alternatives?}
    summary           {reason, summary, turns, session, commands, exit_codes, error, exit_code,
                      transcript, verdict?, cwd?, unsupported?, advice?, claimed?, ran?,
                      doubts?, alternatives?, origin?}
    status            {pid, version, protocol, uptime_s, socket, model, sessions, clients, refused,
                      rss_kb, peak_rss_kb}
    stopping          {}
    error             {code, message, fatal?, exit_code?}
    note              {message}

A task's last message is its ``summary``, or an ``error`` with ``fatal`` (``ends_task``).
Daemons before ``note`` sent a note as ``{"type": "error", "code": "note"}``;
``decode_event`` reads that as the ``Note`` it is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, get_args

from shellagent.errors import InputError
from shellagent.events import (
    CLIENT_MESSAGES,
    WIRE_EVENTS,
    ApprovalKind,
    ClientMessage,
    EventError,
    Failure,
    Scope,
    Summary,
    WireEvent,
)
from shellagent.events import to_dict as _to_dict
from shellagent.events import wire_from_dict as _wire_from_dict

if TYPE_CHECKING:
    from shellagent.jsontypes import JsonObject, JsonValue

VERSION = 1
MAX_LINE_BYTES = 1024 * 1024
SOCKET_NAME = "daemon.sock"

CLIENT_TYPES = tuple(CLIENT_MESSAGES)
EVENT_TYPES = tuple(WIRE_EVENTS)
DECISIONS: tuple[ApprovalKind, ...] = get_args(ApprovalKind)
SCOPES: tuple[Scope, ...] = get_args(Scope)

# error codes
MALFORMED = "malformed"
TOO_LONG = "too_long"
OUT_OF_ORDER = "out_of_order"
UNSUPPORTED_VERSION = "unsupported_version"
REFUSED = "refused"
FAILED = "failed"
NOTE = "note"  # how a daemon before the ``note`` event marked a note: an ``error`` with this code
# The codes of a message the daemon could not take (as opposed to a task that failed).
REJECTIONS = frozenset({MALFORMED, TOO_LONG, OUT_OF_ORDER, UNSUPPORTED_VERSION})


class ProtocolError(InputError, ValueError):
    """A line that is not one valid message; ``code`` is one of the error codes above.

    In the package's error tree (``shellagent.errors``); still a ``ValueError``, as it was
    before it joined the tree, for callers that catch that."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def encode(kind: str, **fields: JsonValue) -> bytes:
    """One message as a line of bytes, newline included."""
    message: JsonObject = {"v": VERSION, "type": kind, **fields}
    line = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(TOO_LONG, f"{kind} message is {len(line)} bytes")
    return line


def decode(line: bytes) -> JsonObject:
    """A line back into a JSON object with a known ``v`` and a string ``type``."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(TOO_LONG, f"line longer than {MAX_LINE_BYTES} bytes")
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(MALFORMED, f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError(MALFORMED, "a message must be a JSON object")
    if message.get("v") != VERSION:
        raise ProtocolError(
            UNSUPPORTED_VERSION, f"protocol version {message.get('v')!r}, expected {VERSION}"
        )
    if not isinstance(message.get("type"), str):
        raise ProtocolError(MALFORMED, "a message needs a string 'type'")
    return message


def _encode(message: WireEvent | ClientMessage) -> bytes:
    fields = _to_dict(message)
    del fields["type"]
    return encode(message.kind, **fields)


def encode_event(event: WireEvent) -> bytes:
    """One daemon -> client event as a line of bytes."""
    return _encode(event)


def encode_message(message: ClientMessage) -> bytes:
    """One client -> daemon message as a line of bytes."""
    return _encode(message)


def decode_event(line: bytes) -> WireEvent:
    """A daemon -> client line as its event; ``ProtocolError`` when it is not one."""
    message = decode(line)
    if message["type"] == "error" and message.get("code") == NOTE:  # a daemon of before
        message = {"type": "note", "message": message.get("message")}
    try:
        return _wire_from_dict(message)
    except EventError as exc:
        raise ProtocolError(MALFORMED, exc.text()) from None


def ends_task(event: WireEvent) -> bool:
    """Whether ``event`` is the last one of a task: its summary, or a fatal error."""
    return isinstance(event, Summary) or (isinstance(event, Failure) and event.fatal)


def error(code: str, message: str, *, fatal: bool = False) -> bytes:
    return encode_event(Failure(code=code, message=message, fatal=fatal))
