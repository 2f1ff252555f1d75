"""The daemon's log: a 0600 file in the state dir, every record redacted (checklist G6-G8).

Only events are logged (task started, ended, refused connection), never a command's
output, at any level: the worker has no log call that receives output text.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path


def log_path() -> Path:
    from shellagent.paths import state_dir

    return state_dir() / "daemon.log"


def setup_logging(*, stderr: bool = True, path: Path | None = None) -> Path:
    """Send ``shellagent.daemon`` records to the log file (and stderr), redacted."""
    from shellagent.paths import ensure_private_dir
    from shellagent.transcript import RedactingFilter, Redactor

    target = path or log_path()
    ensure_private_dir(target.parent)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    os.close(fd)
    redacting = RedactingFilter(Redactor.from_environment())
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    handlers: list[logging.Handler] = [logging.FileHandler(target, encoding="utf-8")]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    logger = logging.getLogger("shellagent")
    level = os.environ.get("SHELLAGENT_LOG_LEVEL", "INFO").upper()
    logger.setLevel(getattr(logging, level, logging.INFO))
    for handler in handlers:
        handler.addFilter(redacting)
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    return target
