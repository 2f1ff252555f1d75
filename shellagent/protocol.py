"""The messages between ``ask`` and the daemon: one JSON object per line, versioned.

Standard library only: ``ask`` imports this module on its start-up path. The daemon
validates what it receives with the pydantic models in ``shellagent.daemon.messages``;
the client trusts the daemon (same user, checked by ``SO_PEERCRED``) and reads its events
with ``decode_event``, into the dataclasses of ``shellagent.events`` (listed below with
their fields; ``encode_event`` writes them).

Every message carries ``v`` (``VERSION``) and ``type``. A line is at most
``MAX_LINE_BYTES`` bytes, newline included; JSON is written with ``ensure_ascii`` so a
line never holds a raw control character, a bidi override or a lone surrogate.

Client -> daemon
    ask        {task, cwd, model?, dry_run, yes, interactive, max_turns?}   one task
    approval   {id, decision, command, edited?, reason?, scope?}   answer an approval_request
    cancel     {}                                             stop the task (Ctrl-C)
    status     {}                                             daemon status, then close
    stop       {}                                             shut the daemon down

Daemon -> client
    accepted          {session, model}                 the task has a session and sandbox
    queued            {position}                       waiting for the model
    thinking          {turn}                           the model is generating
    invalid           {turn, stop, raw}                the reply was not an action (stop:
                                                       end, length or repeat); asking again
    proposed          {turn, command, why, decision, reasons}   a command and its verdict
    approval_request  {id, turn, command, why, decision, reasons}  answer with approval
    output            {data}                           live output of the running command
    approval          {turn, command, decision, ...}   what was decided (by whom)
    result            {turn, command, exit_code, duration_s, timed_out, truncated, confined,
                       refused}                        confined: run read-only (the policy's
                                                       claim); refused: the kernel caught it
    summary           {reason, summary, turns, session, commands, error, exit_code, transcript}
    status            {pid, version, uptime_s, model, sessions, rss_kb, ...}
    stopping          {}
    error             {code, message, fatal, exit_code?}   fatal: the task ends (exit_code: the
                                                       exit status ask should return)
"""

from __future__ import annotations

import json
from typing import Any, get_args

from shellagent.errors import InputError
from shellagent.events import WIRE_EVENTS, ApprovalKind, EventError, Failure, Scope, WireEvent
from shellagent.events import to_dict as _to_dict
from shellagent.events import wire_from_dict as _wire_from_dict

VERSION = 1
MAX_LINE_BYTES = 1024 * 1024
SOCKET_NAME = "daemon.sock"

CLIENT_TYPES = ("ask", "approval", "cancel", "status", "stop")
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
NOTE = "note"  # a non-fatal ``error`` event that is information, not a failure
# The codes of a message the daemon could not take (as opposed to a task that failed).
REJECTIONS = frozenset({MALFORMED, TOO_LONG, OUT_OF_ORDER, UNSUPPORTED_VERSION})


class ProtocolError(InputError, ValueError):
    """A line that is not one valid message; ``code`` is one of the error codes above.

    In the package's error tree (``shellagent.errors``); still a ``ValueError``, as it was
    before it joined the tree, for callers that catch that."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def encode(kind: str, **fields: Any) -> bytes:
    """One message as a line of bytes, newline included."""
    message = {"v": VERSION, "type": kind, **fields}
    line = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(TOO_LONG, f"{kind} message is {len(line)} bytes")
    return line


def decode(line: bytes) -> dict[str, Any]:
    """A line back into a message dict: a JSON object with a known ``v`` and a ``type``."""
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


def encode_event(event: WireEvent) -> bytes:
    """One daemon -> client event as a line of bytes."""
    fields = _to_dict(event)
    del fields["type"]
    return encode(event.kind, **fields)


def decode_event(line: bytes) -> WireEvent:
    """A daemon -> client line as its event; ``ProtocolError`` when it is not one."""
    try:
        return _wire_from_dict(decode(line))
    except EventError as exc:
        raise ProtocolError(MALFORMED, exc.text()) from None


def error(code: str, message: str, *, fatal: bool = False) -> bytes:
    return encode_event(Failure(code=code, message=message, fatal=fatal))
