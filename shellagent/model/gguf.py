"""Checks on a model file before llama.cpp sees it, so a bad path is a message, not a crash.

llama.cpp reports a missing, truncated or foreign file as a bare failure (or worse, the
process runs out of memory half-way through loading). Each check here names the problem
and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shellagent.errors import ModelUnavailable

__all__ = [
    "GGUF_MAGIC",
    "TensorInfo",
    "check_model_file",
    "mem_available_bytes",
    "read_layout",
    "read_metadata",
]

GGUF_MAGIC = b"GGUF"


def mem_available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable from /proc/meminfo in bytes, or ``None`` where it cannot be read."""
    try:
        text = meminfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def check_model_file(path: Path, *, check_memory: bool = True) -> int:
    """Raise ``ModelUnavailable`` unless ``path`` is a readable GGUF that fits in RAM.

    Returns the file size in bytes.
    """
    if not path.exists():
        raise ModelUnavailable(
            f"model file not found: {path}",
            hint="check the path, or run `shellagent model list` to see the catalog",
        )
    if not path.is_file():
        raise ModelUnavailable(f"model path is not a file: {path}", hint="give a .gguf file")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
        size = path.stat().st_size
    except OSError as exc:
        raise ModelUnavailable(
            f"cannot read model file {path}: {exc.strerror or exc}", hint="check permissions"
        ) from None
    if magic != GGUF_MAGIC:
        raise ModelUnavailable(
            f"not a GGUF model file: {path} (starts with {magic!r}, expected b'GGUF')",
            hint="download the .gguf again; only GGUF models are supported",
        )
    if check_memory:
        available = mem_available_bytes()
        if available is not None and size > available:
            raise ModelUnavailable(
                f"model {path.name} is {_gib(size)} but only {_gib(available)} of RAM is available",
                hint="pick a smaller or more quantized model, or free memory",
            )
    return size


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


# -- metadata --------------------------------------------------------------------------------

# GGUF value types (ggml's gguf.h): the scalar ones this reader returns, arrays it skips.
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # ggml order: the fastest-varying dimension first
    kind: int  # ggml type id
    offset: int  # from the start of the tensor data


def read_metadata(path: Path) -> dict[str, object]:
    """The key/value metadata of a GGUF file (arrays are left out), with the standard
    library only; ``ModelUnavailable`` if it is not a readable GGUF."""
    return read_layout(path)[0]


def read_layout(path: Path) -> tuple[dict[str, object], list[TensorInfo], int]:
    """(metadata without arrays, tensor infos, byte offset of the tensor data)."""
    import struct

    def need(f: object, n: int) -> bytes:
        data = f.read(n)  # type: ignore[attr-defined]
        if len(data) != n:
            raise ModelUnavailable(f"{path} is truncated", hint="download or write it again")
        return bytes(data)

    def string(f: object) -> str:
        (n,) = struct.unpack("<Q", need(f, 8))
        return need(f, n).decode("utf-8", errors="replace")

    def skip(f: object, kind: int) -> None:
        if kind in _SCALARS:
            need(f, struct.calcsize(_SCALARS[kind]))
        elif kind == _STRING:
            string(f)
        elif kind == _ARRAY:
            (inner,) = struct.unpack("<I", need(f, 4))
            (count,) = struct.unpack("<Q", need(f, 8))
            if inner in _SCALARS:
                need(f, struct.calcsize(_SCALARS[inner]) * count)
            else:
                for _ in range(count):
                    skip(f, inner)
        else:
            raise ModelUnavailable(f"{path}: unknown GGUF value type {kind}")

    try:
        with path.open("rb") as f:
            if need(f, 4) != GGUF_MAGIC:
                raise ModelUnavailable(f"not a GGUF file: {path}")
            need(f, 4)  # version
            (n_tensors,) = struct.unpack("<Q", need(f, 8))
            (count,) = struct.unpack("<Q", need(f, 8))
            found: dict[str, object] = {}
            for _ in range(count):
                key = string(f)
                (kind,) = struct.unpack("<I", need(f, 4))
                if kind in _SCALARS:
                    (found[key],) = struct.unpack(
                        _SCALARS[kind], need(f, struct.calcsize(_SCALARS[kind]))
                    )
                elif kind == _STRING:
                    found[key] = string(f)
                else:
                    skip(f, kind)
            tensors = []
            for _ in range(n_tensors):
                name = string(f)
                (dims,) = struct.unpack("<I", need(f, 4))
                shape = struct.unpack(f"<{dims}Q", need(f, 8 * dims))
                kind, offset = struct.unpack("<IQ", need(f, 12))
                tensors.append(TensorInfo(name, tuple(shape), kind, offset))
            alignment = int(found.get("general.alignment", 32))  # type: ignore[call-overload]
            start = f.tell()
            start += (-start) % alignment
            return found, tensors, start
    except OSError as exc:
        raise ModelUnavailable(f"cannot read {path}: {exc.strerror or exc}") from None
