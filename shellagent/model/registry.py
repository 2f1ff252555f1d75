"""Which backend a model spec names: a registry of backend kinds that plugins extend.

A spec is what a user types after ``--model``. A kind with a ``prefix`` claims the specs
written ``PREFIX:…`` (``openai:http://host:port/v1#model``, ``scripted:replies.json``); the
kind without one (the local llama.cpp models) takes everything else. Kinds come from the
entry point group ``shellagent.backends`` — the built-in ones are registered there too, in
``pyproject.toml`` — each naming a ``BackendKind`` object or a class that makes one, the
way ``llm`` plugins register their models. The built-in kinds are also known without
installed package metadata, so a source checkout works.

    [project.entry-points."shellagent.backends"]
    mykind = "my_package.backend:MyKind"
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from shellagent.errors import ConfigError, ModelUnavailable
from shellagent.model.backend import Backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendKind",
    "LlamaKind",
    "OpenAIKind",
    "kind_for",
    "kinds",
    "load_backend",
]

ENTRY_POINT_GROUP = "shellagent.backends"
log = logging.getLogger("shellagent.model")


@runtime_checkable
class BackendKind(Protocol):
    """One way of running a model, and the specs that name it.

    ``per_task``: each task gets a fresh backend made for it (``load`` is given the task),
    instead of one warm model shared by every task.
    """

    name: str
    prefix: str | None
    per_task: bool

    def load(self, spec: str, *, task: str | None = None, **config: Any) -> Backend: ...


class LlamaKind:
    """Local GGUF models: the embedded default, a file path, or a catalog name."""

    name: str = "llama"
    prefix: str | None = None
    per_task: bool = False

    def load(self, spec: str, *, task: str | None = None, **config: Any) -> Backend:
        from shellagent.model.adapters import split_spec
        from shellagent.model.embedded import resolve_default

        spec = resolve_default(spec)
        base_spec, adapter = split_spec(spec)
        if adapter is None:
            return self._load_base(spec, **config)
        from shellagent.model.catalog import installed_path, load_catalog

        entry = load_catalog().get(adapter)
        if entry is not None and entry.kind == "adapter":
            config["adapter"] = installed_path(entry)
            if not config["adapter"].is_file():
                raise ModelUnavailable(
                    f"adapter {adapter} is not downloaded yet",
                    hint=f"run `shellagent model pull {adapter}`",
                )
        else:
            config["adapter"] = Path(adapter).expanduser()
        config.setdefault("name", f"{base_spec}+{adapter}")
        return self._load_base(base_spec, **config)

    def _load_base(self, spec: str, **config: Any) -> Backend:
        from shellagent.model.embedded import EMBEDDED_NAME, embedded_model_path
        from shellagent.model.llama import LlamaBackend

        # "default" as a base (``default+ADAPTER``) is the embedded model. Not through the
        # catalog: the base must load even without the catalog file.
        if spec in ("default", EMBEDDED_NAME):
            config.setdefault("name", EMBEDDED_NAME)
            if "adapter" in config:
                from shellagent.model.catalog import lookup

                config.setdefault("base_sha256", lookup(EMBEDDED_NAME).sha256)
            return LlamaBackend(embedded_model_path(), **config)
        if spec.endswith(".gguf") or "/" in spec or Path(spec).is_file():
            return LlamaBackend(Path(spec), **config)

        from shellagent.model.catalog import installed_path, lookup

        entry = lookup(spec)
        path = installed_path(entry)
        if not path.is_file():
            raise ModelUnavailable(
                f"model {spec} is not downloaded yet",
                hint=f"run `shellagent model pull {spec}`",
            )
        if entry.kind == "adapter":
            return self.load(f"{entry.base}+{entry.name}", **config)
        config.setdefault("n_ctx", entry.context)
        config.setdefault("name", entry.name)
        if "adapter" in config and entry.sha256:
            config.setdefault("base_sha256", entry.sha256)
        return LlamaBackend(path, **config)


class OpenAIKind:
    """Any OpenAI-compatible chat server: ``openai:http://host:port/v1[#model][?options]``
    (``constraint=json_schema|grammar|none``, ``timeout=SECONDS``; options given in
    ``config`` take precedence)."""

    name: str = "openai"
    prefix: str | None = "openai"
    per_task: bool = False

    def load(self, spec: str, *, task: str | None = None, **config: Any) -> Backend:
        from shellagent.model.openai import OpenAIBackend, parse_openai_spec

        parsed = parse_openai_spec(spec)
        options = {**dict(parsed.options), **config}
        return OpenAIBackend(parsed.base_url, model=parsed.model, **options)


_BUILT_IN: tuple[BackendKind, ...] = (LlamaKind(), OpenAIKind())


@functools.cache
def kinds() -> tuple[BackendKind, ...]:
    """Every known kind: the built-in ones, then those of installed plugins."""
    from importlib.metadata import entry_points

    found: dict[str, BackendKind] = {kind.name: kind for kind in _BUILT_IN}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in found:
            continue
        try:
            loaded = point.load()
            kind = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:  # a broken plugin must not take the built-in kinds down
            log.warning("backend plugin %s (%s) failed to load: %s", point.name, point.value, exc)
            continue
        if not isinstance(kind, BackendKind):
            log.warning("backend plugin %s (%s) is not a BackendKind", point.name, point.value)
            continue
        found[point.name] = kind
    return tuple(found.values())


def kind_for(spec: str | None) -> BackendKind:
    """The kind that claims ``spec`` (None or "" is the embedded default)."""
    spec = spec or ""
    head, colon, _ = spec.partition(":")
    fallback: BackendKind | None = None
    for kind in kinds():
        if kind.prefix is None:
            fallback = fallback or kind
        elif colon and head == kind.prefix:
            return kind
    if fallback is None:
        raise ConfigError("no backend kind takes plain model names or paths")
    return fallback


def load_backend(spec: str | None = None, *, task: str | None = None, **config: Any) -> Backend:
    """Load the backend ``spec`` names; ``config`` goes to the backend's constructor.

    None, "default"                       the embedded SmolLM2 with the shipped adapter
    "smollm2-135m"                        the embedded SmolLM2 alone (no download either)
    "openai:http://host:port/v1[#model]"  an OpenAI-compatible server (options after the
                                          model: ``#m?constraint=grammar&timeout=60``)
    "path/to/model.gguf"                  any GGUF file
    "qwen2.5-coder-1.5b"                  a catalog name, pulled into the models dir
    "scripted:replies.json"               a scripted model (``shellagent.testing``)
    """
    return kind_for(spec).load(spec or "", task=task, **config)
