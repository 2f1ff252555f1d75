"""The transcript format's version, the migrations that upgrade older lines, and the JSON
Schema of one line (``docs/transcript.schema.json``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from shellagent.events.transcript import TRANSCRIPT_EVENTS

if TYPE_CHECKING:
    from shellagent.jsontypes import JsonObject, JsonValue

__all__ = ["MIGRATIONS", "VERSION", "Line", "json_schema", "upgrade"]

VERSION = 1
"""The transcript format version written by this shellagent."""

# -- format versions ---------------------------------------------------------------------

Line: TypeAlias = "JsonObject"
"""A transcript line as stored: a JSON object with ``v``, ``type``, ``ts``, ``seq``."""

# Append-only: MIGRATIONS[i] upgrades one line from version i + 1 to version i + 2.
# Never edit or remove an entry; files written by every older shellagent depend on it.
MIGRATIONS: list[Callable[[Line], Line]] = []


def upgrade(line: Line, migrations: Sequence[Callable[[Line], Line]] = MIGRATIONS) -> Line:
    """Bring a line of any older version up to the newest by running the migrations."""
    version = line.get("v", 1)
    while isinstance(version, int) and version <= len(migrations):
        line = migrations[version - 1](dict(line))
        version += 1
        line["v"] = version
    return line


# -- the documented schema ---------------------------------------------------------------


def json_schema() -> JsonObject:
    """The JSON Schema of one transcript line (any known event type), as shipped in
    ``docs/transcript.schema.json``. The only function here that imports pydantic."""
    from pydantic import TypeAdapter

    base: JsonObject = {
        "v": {"title": "V", "type": "integer"},
        "ts": {"title": "Ts", "type": "number"},
        "seq": {"title": "Seq", "type": "integer"},
    }
    variants: list[JsonValue] = []
    records: JsonObject = {}  # the records inside events (``PolicySegment`` …), by name
    for kind, cls in TRANSCRIPT_EVENTS.items():
        generated = TypeAdapter(cls).json_schema(ref_template="#/$defs/{model}")
        records.update(generated.get("$defs", {}))
        own = {k: v for k, v in generated["properties"].items() if k not in base}
        variants.append(
            {
                "additionalProperties": True,
                "description": " ".join((cls.__doc__ or kind).split()),
                "properties": {
                    "v": base["v"],
                    "type": {"const": kind, "title": "Type", "type": "string"},
                    "ts": base["ts"],
                    "seq": base["seq"],
                    **own,
                },
                "required": ["v", "type", "ts", "seq"]
                + [k for k in generated.get("required", []) if k in own],
                "title": cls.__name__,
                "type": "object",
            }
        )
    schema: JsonObject = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://shellagent.invalid/transcript.schema.json",
        "title": f"shellagent transcript line, format v{VERSION}",
        "description": (
            "One JSON object per line. Unknown keys and unknown event types must be "
            "ignored by readers; see docs/transcripts.md."
        ),
        "oneOf": variants,
    }
    if records:
        schema["$defs"] = records
    return schema
