"""The shape of JSON as it crosses a boundary (a file line, an HTTP body, a socket message).

Inside the package, values are dataclasses or pydantic models; these aliases name what a
``to_json()`` produces or a decoder hands over *before* it is read into a typed value, so a
reader sees at the signature that the value is plain JSON and nothing richer.
"""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = None | bool | int | float | str
JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"

__all__ = ["JsonObject", "JsonScalar", "JsonValue"]
