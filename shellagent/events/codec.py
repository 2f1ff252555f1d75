"""Events to and from JSON objects: ``to_dict`` writes one, ``from_dict`` and
``wire_from_dict`` read one strictly, ``read_event`` skips a kind this version does not
know (a newer shellagent wrote it)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, get_args, get_origin

from shellagent.events.transcript import TRANSCRIPT_EVENTS, TranscriptEvent
from shellagent.events.wire import WIRE_EVENTS, WireEvent
from shellagent.events.words import EventError

if TYPE_CHECKING:  # ``ask`` imports this module: nothing more at run time
    from _typeshed import DataclassInstance

    from shellagent.events.client import ClientMessage
    from shellagent.jsontypes import JsonObject, JsonValue

__all__ = ["from_dict", "read_event", "to_dict", "wire_from_dict"]

# -- to and from JSON objects ------------------------------------------------------------


def to_dict(event: TranscriptEvent | WireEvent | ClientMessage) -> JsonObject:
    """The event as a JSON object: ``type`` first, then its fields (tuples as lists, a
    record such as a ``PolicySegment`` as an object); optional fields that hold their
    default are left out."""
    data: JsonObject = {"type": event.kind}
    data.update(_object(event))
    return data


def _object(record: DataclassInstance) -> JsonObject:
    data: JsonObject = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.metadata.get("omit") and value == f.default:
            continue
        data[f.name] = _plain(value)
    return data


def _plain(value: object) -> JsonValue:
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _object(value)
    raise TypeError(f"{type(value).__name__} has no JSON form")  # pragma: no cover


def from_dict(data: Mapping[str, object]) -> TranscriptEvent:
    """A transcript event from its JSON object, or ``EventError`` saying what is wrong
    (an unknown ``type`` included). ``v`` is not checked here: see ``upgrade``."""
    return _build(_kind_of(data, TRANSCRIPT_EVENTS, "transcript event"), data)


def read_event(data: Mapping[str, object]) -> TranscriptEvent | None:
    """Like ``from_dict``, but an event kind this version does not know gives None (to be
    skipped: a newer shellagent wrote it)."""
    kind = data.get("type")
    if isinstance(kind, str) and kind not in TRANSCRIPT_EVENTS:
        return None
    return from_dict(data)


def wire_from_dict(data: Mapping[str, object]) -> WireEvent:
    """A daemon -> client message from its JSON object, or ``EventError``."""
    return _build(_kind_of(data, WIRE_EVENTS, "daemon message"), data)


_T = TypeVar("_T")


def _kind_of(data: Mapping[str, object], known: Mapping[str, type[_T]], what: str) -> type[_T]:
    kind = data.get("type")
    if not isinstance(kind, str):
        raise EventError(f"a {what} needs a string 'type', got {kind!r:.40}")
    try:
        return known[kind]
    except KeyError:
        raise EventError(
            f"unknown {what} type {kind!r:.60}",
            hint=f"known types: {', '.join(known)}",
        ) from None


def _build(cls: type[_T], data: Mapping[str, object], where: str = "") -> _T:
    """``cls`` from a JSON object; ``where`` names it in errors (an event: its kind)."""
    where = where or f"{getattr(cls, 'kind', cls.__name__)} event"
    values: dict[str, object] = {}
    for name, (hint, required) in _fields(cls).items():
        if name not in data:
            if required:
                raise EventError(f"{where}: missing {name!r}")
            continue
        values[name] = _check(data[name], hint, f"{where}: {name!r}")
    make: Callable[..., _T] = cls  # each value was checked against its field's type
    return make(**values)


_FIELDS: dict[type, dict[str, tuple[Any, bool]]] = {}


def _fields(cls: type) -> dict[str, tuple[Any, bool]]:
    """Field name -> (resolved type, required) of an event class."""
    known = _FIELDS.get(cls)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    known = _FIELDS[cls] = {
        f.name: (
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    }
    return known


def _check(value: object, hint: Any, where: str) -> object:
    """``value`` if it is a ``hint`` (lists become tuples where the field is a tuple)."""
    if hint is Any:
        return value
    origin = get_origin(hint)
    if origin is Literal:
        if isinstance(value, str) and value in get_args(hint):
            return value
        raise EventError(f"{where} must be one of {', '.join(get_args(hint))}, got {value!r:.40}")
    if origin in (Union, types.UnionType):
        for option in get_args(hint):
            try:
                return _check(value, option, where)
            except EventError:
                continue
        raise EventError(f"{where} must be {_name(hint)}, got {_name(type(value))}")
    if hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is tuple:
        if isinstance(value, list | tuple):
            item = get_args(hint)[0]
            return tuple(_check(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    elif origin is dict:
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            item = get_args(hint)[1]
            return {k: _check(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a record in an event
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return _build(hint, value, where)
    else:  # pragma: no cover - a field type this checker was not taught
        raise TypeError(f"{where}: cannot check {hint!r}")
    raise EventError(f"{where} must be {_name(hint)}, got {_name(type(value))}")


def _name(hint: Any) -> str:
    if hint is type(None):
        return "null"
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_name(a) for a in get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(get_args(hint))
    if origin is tuple or hint in (list, tuple):
        return "a list"
    if origin is dict or hint is dict or dataclasses.is_dataclass(hint):
        return "an object"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        hint, getattr(hint, "__name__", str(hint))
    )
