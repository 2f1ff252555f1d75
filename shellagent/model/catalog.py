"""The model catalog: names users can type, and where each model comes from.

The catalog is ``models/catalog.toml`` (its header documents the fields). A user's own
``catalog.toml`` in the config dir adds or overrides entries; ``SHELLAGENT_MODEL_CATALOG``
points at a different file entirely. ``SHELLAGENT_MODEL_URL_BASE`` replaces everything but
the file name of each download URL (a mirror, or a local server in tests).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from shellagent.errors import ConfigError, ModelUnavailable
from shellagent.paths import config_dir, models_dir

__all__ = [
    "CatalogEntry",
    "catalog_path",
    "installed_path",
    "load_catalog",
    "lookup",
]

_PACKAGE_PREFIX = "package:"  # the embedded model's wheel
_SHIPPED_PREFIX = "shellagent:"  # a file inside this package (adapters)


class _EntryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    url: str
    size_bytes: int = 0
    sha256: str = ""
    chat_format: str = ""
    context: int = 4096
    license: str = ""
    kind: Literal["model", "adapter"] = "model"
    base: str = ""  # an adapter's base model (a catalog name)


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    description: str
    url: str
    size_bytes: int
    sha256: str
    chat_format: str
    context: int
    license: str
    kind: str = "model"
    base: str = ""

    @property
    def embedded(self) -> bool:
        """Shipped inside an installed package rather than downloaded."""
        return self.url.startswith((_PACKAGE_PREFIX, _SHIPPED_PREFIX))

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    def download_url(self) -> str:
        base = os.environ.get("SHELLAGENT_MODEL_URL_BASE")
        if not base or self.embedded:
            return self.url
        return f"{base.rstrip('/')}/{self.url.rsplit('/', 1)[-1]}"


def catalog_path() -> Path:
    override = os.environ.get("SHELLAGENT_MODEL_CATALOG")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "models" / "catalog.toml"


def _read(path: Path) -> dict[str, CatalogEntry]:
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError("model catalog not found", path=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=str(path)) from None
    entries: dict[str, CatalogEntry] = {}
    for name, table in raw.items():
        try:
            entry = _EntryFile.model_validate(table)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"model {name!r}: {where}: {first['msg']}", path=str(path)) from None
        sha = entry.sha256.lower()
        if sha and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
            raise ConfigError(f"model {name!r}: sha256 must be 64 hex digits", path=str(path))
        if entry.kind == "adapter" and not entry.base:
            raise ConfigError(f"adapter {name!r} needs base = MODEL", path=str(path))
        entries[name] = CatalogEntry(name=name, **{**entry.model_dump(), "sha256": sha})
    return entries


def load_catalog() -> dict[str, CatalogEntry]:
    """The shipped catalog, with the user's entries (config dir) added on top."""
    entries = _read(catalog_path())
    user = config_dir() / "catalog.toml"
    if user.is_file():
        entries.update(_read(user))
    return entries


def lookup(name: str) -> CatalogEntry:
    entries = load_catalog()
    if name not in entries:
        known = ", ".join(sorted(entries))
        raise ModelUnavailable(f"unknown model {name!r}", hint=f"known models: {known}")
    return entries[name]


def installed_path(entry: CatalogEntry) -> Path:
    """Where the model's file is (embedded) or will be once pulled (models dir)."""
    if entry.url.startswith(_SHIPPED_PREFIX):
        return Path(__file__).resolve().parents[1] / entry.url.removeprefix(_SHIPPED_PREFIX)
    if entry.embedded:
        from shellagent.model.embedded import embedded_model_path

        return embedded_model_path()
    return models_dir() / entry.filename
