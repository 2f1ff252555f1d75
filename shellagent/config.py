"""The user's settings: ``config.toml`` in the config directory, validated on load.

Every key has a default, so a missing file is the defaults; an unknown key, a wrong type
or an out-of-range value is a ``ConfigError`` that names file:line and the fix. ``set``
edits one key in place with tomlkit, which keeps the user's comments and layout, and
writes only a file that validates. ``TEMPLATE`` is what ``shellagent config edit`` starts
from. pydantic and tomlkit are imported only here, never on ``ask``'s start-up path.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from shellagent import paths, tomlfile
from shellagent.errors import ConfigError

__all__ = ["TEMPLATE", "Config", "config_path", "load", "set_value"]

HINT = "see `shellagent config show` for every setting and its default"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelSettings(_Section):
    default: str = Field(
        default="default",
        min_length=1,
        description="catalog name, a GGUF path, or openai:http://HOST:PORT/v1#MODEL",
    )
    context: int | None = Field(
        default=None, ge=512, le=1_048_576, description="context size (tokens)"
    )
    threads: int | None = Field(
        default=None, ge=1, le=512, description="CPU threads for a local model"
    )


class PolicySettings(_Section):
    preset: str = Field(
        default="default", min_length=1, description="default, strict, permissive, or a policy file"
    )


class AskSettings(_Section):
    review: Literal["commands", "changes", "both"] = Field(
        default="both", description="approve each command, the change set at the end, or both"
    )
    confirm: bool = Field(default=True, description='ask "Did that do it?" after the model is done')
    history: bool = Field(
        default=True,
        description="learn from sessions you confirmed: kept locally as worked examples",
    )
    offer_recipes: bool = Field(
        default=True,
        description="after a confirmed task whose commands the model wrote, name the command "
        "that keeps them as a recipe of your own",
    )
    learn: bool = Field(
        default=True,
        description="a command you wrote yourself (edited or typed) in a task you confirmed "
        "is learned at once for that request (`shellagent recipes rm NAME` forgets it)",
    )
    colors: Literal["auto", "always", "never"] = Field(
        default="auto", description="terminal colors"
    )
    max_turns: int = Field(default=15, ge=1, le=200, description="model replies per task")
    recipes: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="fill a verified recipe before the model writes commands (auto: every "
        "model; off: the model writes every command itself)",
    )
    larger_model: str = Field(
        default="qwen2.5-coder-1.5b",
        max_length=200,
        description='suggested (once a day) after a task the local model could not do; "" never',
    )


class SandboxSettings(_Section):
    hide: tuple[str, ...] = Field(
        default=(), description="more files or directories the sandbox hides (~ allowed)"
    )

    def hidden_paths(self) -> tuple[Path, ...]:
        return tuple(Path(p).expanduser() for p in self.hide)


class ShellSettings(_Section):
    key: str = Field(
        default="ctrl-g",
        pattern=r"^(?i:ctrl|c)-[a-zA-Z]$",
        description="key of `shellagent shell-init`: describe -> proposed command",
    )


class Config(_Section):
    model: ModelSettings = Field(default_factory=ModelSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    ask: AskSettings = Field(default_factory=AskSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)


TEMPLATE = """\
# shellagent settings. Every key is optional; `shellagent config show` prints them all.

[model]
# The model ask uses: "default" (the embedded SmolLM2-135M with its shipped adapter
# smollm2-135m-shell; "smollm2-135m" is the base alone), a catalog name
# (`shellagent model list`, `shellagent model pull NAME`), a GGUF file, or an
# OpenAI-compatible server, e.g. "openai:http://127.0.0.1:11434/v1#qwen2.5-coder:3b".
# default = "default"
# context = 8192    # context size in tokens (default: the model's catalog value)
# threads = 4       # CPU threads for a local model (default: llama.cpp's choice)

[policy]
# preset = "default"   # default | strict | permissive | a path to your own policy file

[ask]
# review = "both"      # commands | changes | both
# confirm = true       # ask "Did that do it?" when the model says it is done
# history = true       # keep sessions you confirmed as examples for later tasks (local)
# offer_recipes = true # after a confirmed task the model wrote, say how to keep it as a recipe
# learn = true         # a command you edited or typed in a task you confirmed is learned for it
# colors = "auto"      # auto | always | never (NO_COLOR always wins)
# max_turns = 15
# recipes = "auto"     # auto | on | off: fill verified recipes first (auto: every model)

[sandbox]
# hide = ["~/work/customer-data", "~/.config/some-app/token"]   # besides the built-in list

[shell]
# key = "ctrl-g"       # the key of `shellagent shell-init`
"""


def config_path() -> Path:
    return paths.config_dir() / "config.toml"


def load(path: Path | None = None) -> Config:
    """The settings in ``path`` (default: the user's config.toml), or the defaults."""
    path = path or config_path()
    if not path.exists():
        return Config()
    text, data = tomlfile.read(path, "config file")
    return tomlfile.validate(Config, data, text, path, hint=HINT)


def describe() -> list[tuple[str, Any, str]]:
    """Every setting as (dotted key, default, description)."""
    rows = []
    for section, field in Config.model_fields.items():
        model = field.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        for key, sub in model.model_fields.items():
            rows.append((f"{section}.{key}", sub.default, sub.description or ""))
    return rows


def _parse_value(key: str, raw: str) -> Any:
    """``raw`` as TOML when it is a TOML value (``true``, ``8``), else as a string;
    ``default`` (or nothing) means: remove the key, back to its default."""
    import tomllib

    known = [row[0] for row in describe()]
    if key not in known:
        raise ConfigError(f"unknown setting {key!r}", hint=f"settings: {', '.join(known)}")
    if raw.strip() in ("", "default"):
        return None
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def set_value(key: str, raw: str, path: Path | None = None) -> Config:
    """Set ``key`` (``section.name``) to ``raw`` in the file, keeping its comments; the file
    is written (atomically) only if the result validates."""
    import tomlkit

    path = path or config_path()
    value = _parse_value(key, raw)
    text = path.read_text(encoding="utf-8") if path.exists() else TEMPLATE
    tomlfile.parse(text, path, "config file")
    document = tomlkit.parse(text)
    section, name = key.split(".", 1)
    table = document.get(section)
    if table is None:
        table = tomlkit.table()
        document[section] = table
    if value is None:
        table.pop(name, None)
    else:
        table[name] = value
    new_text = tomlkit.dumps(document)
    try:
        data = tomlfile.parse(new_text, path, "config file")
        config = tomlfile.validate(Config, data, new_text, path, hint=HINT)
    except ConfigError as exc:
        message = exc.message.split(": ", 1)[1] if exc.line is not None else exc.message
        raise ConfigError(f"{message}; {path} was not changed", hint=exc.hint) from None
    write_text(path, new_text)
    return config


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a crash leaves the old or the new file)."""
    paths.ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def model_spec(settings: Config, given: str | None = None) -> str | None:
    """The model to use: ``given`` (``--model``, ``$SHELLAGENT_BACKEND``), else
    ``model.default`` unless it names the default model (None)."""
    if given:
        return given
    chosen = settings.model.default
    return None if chosen == "default" else chosen


class BackendOptions(TypedDict, total=False):
    """A local model's options from the config file (``LlamaBackend``'s keywords)."""

    n_ctx: int
    n_threads: int


def backend_options(settings: Config, spec: str | None) -> BackendOptions:
    """``model.context`` and ``model.threads`` as backend options, for a local model only
    (an OpenAI-compatible server or a scripted model takes neither)."""
    if spec and spec.startswith(("openai:", "scripted:")):
        return {}
    options: BackendOptions = {}
    if settings.model.context is not None:
        options["n_ctx"] = settings.model.context
    if settings.model.threads is not None:
        options["n_threads"] = settings.model.threads
    return options
