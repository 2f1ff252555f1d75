"""Frames between the host and the sandbox's driver, each one authenticated.

Both pipes carry the same shape of frame::

    kind (1 byte) | length (4 bytes, big-endian) | payload | HMAC-SHA256 (32 bytes)

The HMAC covers the direction, a per-direction sequence number, the kind and the payload,
under a key of 32 random bytes that the host makes for each sandbox and sends as the very
first frame (kind ``K``, the only frame without a MAC). Only the host and the driver hold
the pipes, and the driver's memory and descriptors are out of reach of every command (see
``driver.py``); the MAC is the second wall: a frame that did not come from the holder of the
key, or that was replayed, reordered or cut, does not verify, and the reader stops trusting
the channel at once.

Payloads are fields separated by NUL bytes (no field can contain one: paths, names and
numbers). This module uses only the standard library, and avoids ``hashlib`` (which loads
OpenSSL, a few milliseconds at every sandbox start): the driver loads it inside the sandbox.
"""

from __future__ import annotations

import struct
import sys

if sys.version_info >= (3, 12):
    from _sha2 import sha256 as _sha256
else:
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]

from _operator import _compare_digest

# Not even ``typing`` is imported at run time (it pulls in re, functools, collections…):
# the driver loads this module at every sandbox start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

KEY_BYTES = 32
MAC_BYTES = 32
HEADER = struct.Struct(">cI")
MAX_PAYLOAD = 64 * 1024 * 1024
TO_DRIVER, TO_HOST = b">", b"<"


class WireError(Exception):
    """A frame did not verify or was malformed: the channel can no longer be trusted."""


class Mac:
    """HMAC-SHA256 (RFC 2104) with the key's inner and outer states computed once."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise WireError("the session key has the wrong length")
        block = key.ljust(64, b"\0")
        self._inner: Any = _sha256(bytes(b ^ 0x36 for b in block))
        self._outer: Any = _sha256(bytes(b ^ 0x5C for b in block))

    def digest(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        result: bytes = outer.digest()
        return result


class Channel:
    """One direction of the wire: numbers, signs and checks the frames."""

    def __init__(self, key: bytes, direction: bytes) -> None:
        self.mac = Mac(key)
        self.direction = direction
        self.sequence = 0

    def _tag(self, kind: bytes, payload: bytes) -> bytes:
        head = self.direction + struct.pack(">Q", self.sequence) + kind
        return self.mac.digest(head + payload)

    def seal(self, kind: bytes, fields: list[bytes]) -> bytes:
        payload = b"\0".join(fields)
        frame = HEADER.pack(kind, len(payload)) + payload + self._tag(kind, payload)
        self.sequence += 1
        return frame

    def open(self, kind: bytes, payload: bytes, tag: bytes) -> list[bytes]:
        if not _compare_digest(tag, self._tag(kind, payload)):
            raise WireError("a frame did not verify")
        self.sequence += 1
        return payload.split(b"\0")


def split(buffer: bytes) -> tuple[bytes, bytes, bytes, bytes] | None:
    """(kind, payload, tag, rest) of the first complete frame in ``buffer``, or None."""
    if len(buffer) < HEADER.size:
        return None
    kind, length = HEADER.unpack_from(buffer)
    if length > MAX_PAYLOAD:
        raise WireError(f"a frame claims {length} bytes")
    end = HEADER.size + length
    if len(buffer) < end + MAC_BYTES:
        return None
    return kind, buffer[HEADER.size : end], buffer[end : end + MAC_BYTES], buffer[end + MAC_BYTES :]


def key_frame(key: bytes) -> bytes:
    return HEADER.pack(b"K", len(key)) + key


def read_exactly(read: Callable[[int], bytes], count: int) -> bytes:
    """``count`` bytes from a blocking reader; WireError if the stream ends first."""
    data = b""
    while len(data) < count:
        chunk = read(count - len(data))
        if not chunk:
            raise WireError("the stream ended inside a frame")
        data += chunk
    return data
