"""Checks on a model file before llama.cpp sees it, so a bad path is a message, not a crash.

llama.cpp reports a missing, truncated or foreign file as a bare failure (or worse, the
process runs out of memory half-way through loading). Each check here names the problem
and the fix.
"""

from __future__ import annotations

from pathlib import Path

from shellagent.errors import ModelUnavailable

__all__ = ["GGUF_MAGIC", "check_model_file", "mem_available_bytes"]

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
