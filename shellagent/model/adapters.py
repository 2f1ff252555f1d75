"""LoRA adapters: small GGUF files that llama.cpp applies over a quantized base at load.

An adapter made by ``shellagent train`` records the base it was trained on
(``shellagent.base_sha256``, ``shellagent.base_name``); ``check_adapter`` refuses one made
for another base with a message saying which base it needs, instead of llama.cpp's bare
failure or, worse, silently wrong output. A spec ``BASE+ADAPTER`` names both: the base
as any model spec (catalog name, GGUF path), the adapter as a catalog adapter name or a
path.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from shellagent.errors import ModelUnavailable
from shellagent.model.gguf import check_model_file, read_metadata

__all__ = ["BASE_NAME_KEY", "BASE_SHA_KEY", "check_adapter", "file_sha256", "split_spec"]

BASE_SHA_KEY = "shellagent.base_sha256"
BASE_NAME_KEY = "shellagent.base_name"
_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a (large) file, remembered per path, size and mtime in this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]


def check_adapter(adapter: Path, base: Path, *, base_sha256: str = "") -> dict[str, object]:
    """The adapter's metadata, or ``ModelUnavailable`` naming what is wrong with it."""
    check_model_file(adapter, check_memory=False)
    meta = read_metadata(adapter)
    if meta.get("general.type") != "adapter" or meta.get("adapter.type") != "lora":
        raise ModelUnavailable(
            f"{adapter} is not a LoRA adapter (general.type={meta.get('general.type')!r})",
            hint="give a base model with --model BASE and an adapter with --model BASE+ADAPTER",
        )
    wanted = str(meta.get(BASE_SHA_KEY, ""))
    if wanted:
        have = base_sha256 or file_sha256(base)
        if have != wanted:
            name = meta.get(BASE_NAME_KEY) or wanted[:12]
            raise ModelUnavailable(
                f"adapter {adapter.name} was trained for another base model ({name}); "
                f"{base.name} is not it",
                hint=f"use it as {name}+{adapter.name}",
            )
    base_arch = read_metadata(base).get("general.architecture") if not wanted else None
    if base_arch and meta.get("general.architecture") not in (None, base_arch):
        raise ModelUnavailable(
            f"adapter {adapter.name} is for {meta.get('general.architecture')} models, "
            f"{base.name} is {base_arch}"
        )
    return meta


def split_spec(spec: str) -> tuple[str, str | None]:
    """``BASE+ADAPTER`` -> (BASE, ADAPTER); a spec without a ``+`` that names an adapter
    after it (or an existing path with ``+`` in it) is a plain model spec."""
    if "+" not in spec or os.path.exists(spec):
        return spec, None
    base, adapter = spec.rsplit("+", 1)
    return (base or "default"), adapter
