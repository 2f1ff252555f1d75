"""shellagent: a personal shell agent with a local model, a policy and a bubblewrap sandbox."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
