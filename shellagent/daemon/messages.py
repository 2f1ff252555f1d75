"""What the daemon accepts from a client, validated with pydantic (``extra="forbid"``).

``shellagent.protocol.decode`` has already checked that the line is a JSON object with a
known version; ``parse`` checks the fields of its type. Anything else is a
``ProtocolError`` the server answers with an error reply.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from shellagent.events import ApprovalKind, ChangesDecision, Scope
from shellagent.protocol import MALFORMED, ProtocolError

_TEXT_MAX = 64 * 1024


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    v: Literal[1] = 1


class Ask(_Message):
    type: Literal["ask"]
    task: str = Field(min_length=1, max_length=_TEXT_MAX)
    cwd: str = Field(min_length=1, max_length=4096)
    model: str | None = Field(default=None, max_length=4096)
    dry_run: bool = False
    yes: bool = False
    """Approve every ``ask`` without asking (``ask -y``)."""
    interactive: bool = True
    """False when nobody can answer: every ``ask`` is refused (unless ``yes``)."""
    max_turns: int | None = Field(default=None, ge=1, le=200)
    confirm: bool = True
    """Ask "Did that do it?" when the model is done (``ask --json`` says False)."""
    apply: bool = False
    """With ``yes``: apply the change set at the end without asking (``ask -y --apply``)."""
    propose: bool = False
    """Only the first proposed command is wanted (``ask --propose``, a shell key binding)."""
    continues: str | None = Field(default=None, max_length=64, pattern=r"^[0-9A-Za-z-]+$")
    """A follow-up of this session (an id or a unique prefix; ``last``: the newest)."""
    umask: int | None = Field(default=None, ge=0, le=0o777)
    """The client's umask: the task's commands create files with it."""


class ApprovalReply(_Message):
    type: Literal["approval"]
    id: int = Field(ge=0)
    decision: ApprovalKind
    command: str = Field(max_length=_TEXT_MAX)
    """The command the client showed: it must equal the one the daemon asked about."""
    edited: str | None = Field(default=None, max_length=_TEXT_MAX)
    reason: str = Field(default="", max_length=4096)
    scope: Scope | None = None


class ChangesReply(_Message):
    type: Literal["changes"]
    id: int = Field(ge=0)
    decision: ChangesDecision


class ConfirmReply(_Message):
    type: Literal["confirm"]
    id: int = Field(ge=0)
    answer: Literal["yes", "no", "skip"]


class Cancel(_Message):
    type: Literal["cancel"]


class Status(_Message):
    type: Literal["status"]


class Stop(_Message):
    type: Literal["stop"]


ClientMessage = Ask | ApprovalReply | ChangesReply | ConfirmReply | Cancel | Status | Stop
_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(
    Annotated[ClientMessage, Field(discriminator="type")]
)


def parse(message: dict[str, object]) -> ClientMessage:
    """The typed message, or ``ProtocolError`` naming the first problem."""
    try:
        return _ADAPTER.validate_python(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProtocolError(MALFORMED, f"{where}: {first['msg']}") from None
