"""What the daemon accepts from a client: the messages of ``shellagent.events``, checked
strictly with pydantic (``extra="forbid"``, strict types, each field's ``limits``).

The dataclasses stay the one definition of a message (``ask`` builds them without
pydantic); the pydantic models here are made from them when the daemon starts, so a field
added there is checked here without a second spelling. ``shellagent.protocol.decode`` has
already checked that the line is a JSON object with a known version; ``parse`` checks the
fields of its type. Anything else is a ``ProtocolError`` the server answers with an error
reply.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from shellagent.events import CLIENT_MESSAGES, ClientMessage
from shellagent.protocol import MALFORMED, VERSION, ProtocolError

if typing.TYPE_CHECKING:
    from shellagent.jsontypes import JsonObject

__all__ = ["ClientMessage", "parse"]

_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True)


def _model(cls: type[ClientMessage]) -> type[BaseModel]:
    """The pydantic model of one message: ``v``, its ``type`` and the dataclass's fields,
    each with its type, default and limits."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, tuple[Any, object]] = {  # name -> (its type, its default or Field)
        "v": (Literal[VERSION], VERSION),  # decode has checked it already
        "type": (Literal[cls.kind], ...),  # the union's tag
    }
    for f in dataclasses.fields(cls):
        default = ... if f.default is dataclasses.MISSING else f.default
        fields[f.name] = (hints[f.name], Field(default, **f.metadata.get("limits", {})))
    # ``Any``: mypy holds a ``**`` mapping to every keyword create_model has; these are
    # field names only (no message field starts with ``__``)
    definitions: Any = fields
    model: type[BaseModel] = create_model(cls.__name__, __config__=_CONFIG, **definitions)
    return model


_MODELS = [_model(cls) for cls in CLIENT_MESSAGES.values()]
_UNION: Any = typing.Union[tuple(_MODELS)]  # noqa: UP007  # a union made at run time
_ADAPTER: TypeAdapter[BaseModel] = TypeAdapter(Annotated[_UNION, Field(discriminator="type")])


def parse(message: JsonObject) -> ClientMessage:
    """The typed message, or ``ProtocolError`` naming the first problem."""
    try:
        checked = _ADAPTER.validate_python(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProtocolError(MALFORMED, f"{where}: {first['msg']}") from None
    cls = CLIENT_MESSAGES[str(message["type"])]
    return cls(**{f.name: getattr(checked, f.name) for f in dataclasses.fields(cls)})
