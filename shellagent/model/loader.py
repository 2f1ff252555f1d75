"""Turning what a user typed after ``--model`` into a loaded backend.

None, "default", "smollm2-135m"       the embedded SmolLM2 (no download)
"openai:http://host:port/v1[#model]"  an OpenAI-compatible server
"path/to/model.gguf"                  any GGUF file
"qwen2.5-coder-1.5b"                  a catalog name, pulled into the models dir
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shellagent.errors import ModelUnavailable
from shellagent.model.backend import Backend

__all__ = ["load_backend"]


def load_backend(spec: str | None = None, **config: Any) -> Backend:
    """Load the backend ``spec`` names; ``config`` goes to the backend's constructor."""
    if spec is None or spec in ("", "default", "smollm2-135m"):
        # Not through the catalog: the default must work even without the catalog file.
        from shellagent.model.embedded import EMBEDDED_NAME, embedded_model_path
        from shellagent.model.llama import LlamaBackend

        config.setdefault("name", EMBEDDED_NAME)
        return LlamaBackend(embedded_model_path(), **config)
    if spec.startswith("openai:"):
        from shellagent.model.openai import OpenAIBackend, parse_openai_spec

        base, model = parse_openai_spec(spec)
        return OpenAIBackend(base, model=model, **config)

    from shellagent.model.llama import LlamaBackend

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
    config.setdefault("n_ctx", entry.context)
    config.setdefault("name", entry.name)
    return LlamaBackend(path, **config)
