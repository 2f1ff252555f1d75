"""Every error shellagent shows to a user, in one tree.

    ShellagentError                 exit 1   base; carries a one-line message and a fix
    ├── UsageError                  exit 2   bad command line or bad input
    │   ├── ConfigError             exit 2   a config, policy or job file that could not be read
    │   └── InputError              exit 2   a command, task line or message that is malformed
    ├── SessionClosed               exit 1   a sandbox session that has ended was used
    ├── EnvironmentProblem          exit 3   something about this machine must be fixed first
    │   ├── SandboxUnavailable      exit 3   bwrap missing or cannot create namespaces
    │   └── ModelUnavailable        exit 3   model file missing, corrupt or too large
    └── TaskFailed                  exit 1   the task or check ran and failed

The CLI catches ``ShellagentError`` in one place and prints ``show()``; nothing else
turns an error into an exit code, and a user never sees a traceback for bad input.
"""

from __future__ import annotations


class ShellagentError(Exception):
    """Base class: a message for the user, an optional hint, and an exit code."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def text(self) -> str:
        """The message with the fix, when known: ``message (hint)``."""
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def show(self) -> str:
        """The one line the CLI prints on stderr."""
        return f"error: {self.text()}"


class UsageError(ShellagentError):
    exit_code = 2


class ConfigError(UsageError):
    """A file that configures shellagent is malformed: names the file and line."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = path or ""
        if path and line is not None:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message, hint=hint)
        self.path = path
        self.line = line


class InputError(UsageError):
    pass


class SessionClosed(ShellagentError):
    pass


class EnvironmentProblem(ShellagentError):
    exit_code = 3


class SandboxUnavailable(EnvironmentProblem):
    pass


class ModelUnavailable(EnvironmentProblem):
    pass


class TaskFailed(ShellagentError):
    exit_code = 1
