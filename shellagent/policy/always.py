""" "Always allow": exact normalised segments the user approved, with a scope.

An entry is the full normalised text of one segment (assignments, wrappers, every argument,
redirections), never a prefix: approving ``terraform plan`` does not approve
``terraform plan -destroy``. Scopes: ``session`` (this engine only, and only in the directory
where it was approved, because relative paths and ``make``/``python3 build.py`` mean
something else elsewhere), ``directory`` (the same, kept across sessions) and
``everywhere``; the last two persist in ``config_dir()/always.toml``, mode 0600. A segment
whose directory is not known when it is judged (``cwd`` None: a ``cd`` earlier in the same
line) matches only ``everywhere`` entries.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from shellagent.errors import ConfigError

SCOPES: tuple[str, ...] = ("session", "directory", "everywhere")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str
    scope: Literal["directory", "everywhere"]
    directory: str | None = None


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    always: list[_Entry] = []


@dataclass
class AlwaysStore:
    path: Path | None  # None: nothing persists (e.g. an explicit policy for a test)
    session: set[tuple[str, str]] = field(default_factory=set)  # (command, directory)
    _entries: list[_Entry] | None = None

    def entries(self) -> list[_Entry]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def allows(self, key: str, cwd: Path | None) -> str:
        """The scope under which ``key`` is always allowed in ``cwd``, or ``""``."""
        if cwd is not None and (key, str(cwd)) in self.session:
            return "session"
        for entry in self.entries():
            if entry.command != key:
                continue
            if entry.scope == "everywhere":
                return "everywhere"
            if cwd is not None and entry.directory == str(cwd):
                return f"directory {entry.directory}"
        return ""

    def add(self, keys: list[str], scope: str, cwd: Path) -> None:
        if scope == "session":
            self.session.update((key, str(cwd)) for key in keys)
            return
        if self.path is None:
            raise ConfigError("this policy engine has no place to store always-allow entries")
        entries = self.entries()
        directory = str(cwd) if scope == "directory" else None
        for key in keys:
            entry = _Entry(command=key, scope=scope, directory=directory)  # type: ignore[arg-type]
            if entry not in entries:
                entries.append(entry)
        self._write(entries)

    def _read(self) -> list[_Entry]:
        if self.path is None or not self.path.exists():
            return []
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
            return _File.model_validate(data).always
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML: {exc}", path=str(self.path)) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ConfigError(f"{where}: {err['msg']}", path=str(self.path)) from None

    def _write(self, entries: list[_Entry]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lines = ["# Commands shellagent runs without asking. Each is matched exactly.", ""]
        for entry in entries:
            lines.append("[[always]]")
            # JSON string escapes are valid TOML basic-string escapes.
            lines.append(f"command = {json.dumps(entry.command)}")
            lines.append(f"scope = {json.dumps(entry.scope)}")
            if entry.directory is not None:
                lines.append(f"directory = {json.dumps(entry.directory)}")
            lines.append("")
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)


def describe(keys: list[str], scope: str, cwd: Path) -> str:
    shown = ", ".join(f"`{k}`" for k in keys)
    exact = "exactly as written; any other arguments will still be checked"
    where = {
        "session": f"in {cwd} for the rest of this session",
        "directory": f"when run in {cwd}",
        "everywhere": "in every directory, from now on",
    }[scope]
    noun = "this command" if len(keys) == 1 else "these commands"
    return f"Will run {noun} without asking {where}: {shown} ({exact})."
