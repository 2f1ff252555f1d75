"""Model backends behind one small interface, the model catalog, and downloads.

``load_backend(spec)`` is the entry point; ``Backend`` and ``Generation`` are what the
agent loop sees. Heavy libraries (llama_cpp, numpy) load only when a local model does.
"""

from __future__ import annotations

from shellagent.model.backend import Backend, Generation, Message, TokenCallback
from shellagent.model.loader import load_backend

__all__ = [
    "Backend",
    "Generation",
    "Message",
    "TokenCallback",
    "load_backend",
]
