"""Client messages: what ``ask`` writes, the daemon reads back as the same dataclass; what
a client gets wrong is refused with one line naming the field."""

from __future__ import annotations

import pytest

from shellagent import events, protocol
from shellagent.daemon.messages import parse
from shellagent.events import CLIENT_MESSAGES, ClientMessage
from shellagent.jsontypes import JsonObject

CLIENT: list[ClientMessage] = [
    events.Ask(task="t", cwd="/w"),
    events.Ask(
        task="tidy",
        cwd="/w",
        model="smollm2",
        dry_run=True,
        yes=True,
        interactive=False,
        max_turns=5,
        confirm=False,
        apply=True,
        propose=True,
        continues="last",
        umask=0o022,
    ),
    events.ApprovalReply(id=0, decision="approve", command="ls"),
    events.ApprovalReply(
        id=3, decision="always", command="rm x", edited="rm -i x", reason="ok", scope="session"
    ),
    events.ChangesReply(id=4, decision="keep"),
    events.ConfirmReply(id=5, answer="skip"),
    events.ChoiceReply(id=6, pick=2),
    events.Cancel(),
    events.Status(),
    events.Stop(),
]


def test_the_examples_cover_every_kind() -> None:
    assert {m.kind for m in CLIENT} == set(CLIENT_MESSAGES)


@pytest.mark.parametrize("message", CLIENT, ids=lambda m: m.kind)
def test_every_client_message_reads_back_as_the_daemon_checks_it(message: ClientMessage) -> None:
    line = protocol.encode_message(message)
    assert line.startswith(b'{"v":1,"type":"' + message.kind.encode() + b'"')
    assert parse(protocol.decode(line)) == message


def test_fields_at_their_defaults_are_left_out_so_an_older_daemon_takes_the_message() -> None:
    assert protocol.encode_message(events.Ask(task="t", cwd="/w")) == (
        b'{"v":1,"type":"ask","task":"t","cwd":"/w"}\n'
    )
    assert protocol.encode_message(events.Cancel()) == b'{"v":1,"type":"cancel"}\n'


GOOD: JsonObject = {"v": 1, "type": "ask", "task": "t", "cwd": "/w"}


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (GOOD | {"evil": 1}, "ask.evil: Extra inputs are not permitted"),
        (GOOD | {"task": 1}, "ask.task: Input should be a valid string"),
        (GOOD | {"task": ""}, "ask.task: String should have at least 1 character"),
        (GOOD | {"dry_run": 1}, "ask.dry_run: Input should be a valid boolean"),
        (GOOD | {"max_turns": 0}, "ask.max_turns: Input should be greater than or equal to 1"),
        (GOOD | {"umask": 0o1000}, "ask.umask: Input should be less than or equal to 511"),
        (GOOD | {"continues": "a b"}, "ask.continues: String should match pattern"),
        ({"v": 1, "type": "ask", "cwd": "/w"}, "ask.task: Field required"),
        (
            {"v": 1, "type": "approval", "id": -1, "decision": "approve", "command": "x"},
            "approval.id: Input should be greater than or equal to 0",
        ),
        (
            {"v": 1, "type": "approval", "id": 1, "decision": "yes", "command": "x"},
            "approval.decision: Input should be 'approve', 'refuse', 'edit', 'always' or 'quit'",
        ),
        ({"v": 1, "type": "confirm", "id": 1, "answer": "maybe"}, "confirm.answer: Input should"),
        ({"v": 1, "type": "cancel", "x": 1}, "cancel.x: Extra inputs are not permitted"),
        ({"v": 1, "type": "telemetry"}, "Input tag 'telemetry' found using 'type' does not match"),
    ],
)
def test_a_message_the_daemon_cannot_take_is_one_line_naming_the_field(
    message: JsonObject, problem: str
) -> None:
    with pytest.raises(protocol.ProtocolError) as caught:
        parse(message)
    assert caught.value.code == protocol.MALFORMED
    assert problem in str(caught.value) and "\n" not in str(caught.value)
