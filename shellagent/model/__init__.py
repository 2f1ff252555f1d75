"""Model backends behind one small interface, the registry of backend kinds, the model
catalog, downloads, and the shared warm model.

``load_backend(spec)`` is the entry point; ``Backend`` and ``Generation`` are what the
agent loop sees; ``ReplyFormat`` is how a caller constrains replies. Heavy libraries
(llama_cpp, numpy) load only when a local model does.
"""

from __future__ import annotations

from shellagent.model.backend import Backend, Generation, Message, ReplyFormat, TokenCallback
from shellagent.model.registry import BackendKind, kind_for, load_backend

__all__ = [
    "Backend",
    "BackendKind",
    "Generation",
    "Message",
    "ReplyFormat",
    "TokenCallback",
    "kind_for",
    "load_backend",
]
