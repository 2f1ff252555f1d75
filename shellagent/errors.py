"""Every error shellagent shows to a user, in one tree.

    ShellagentError                 exit 1   base; carries a one-line message and a fix
    ├── UsageError                  exit 2   bad command line or bad input
    │   ├── ConfigError             exit 2   a config, policy or job file that could not be read
    │   └── InputError              exit 2   a command, task line or message that is malformed
    │       ├── ProtocolError       exit 2   a socket line that is not one valid message (protocol)
    │       ├── EventError          exit 2   a transcript or wire line that is no event (events)
    │       ├── SlotError           exit 2   a recipe's slot value that does not fit (recipes.slots)
    │       └── UnknownEpisode      exit 2   an env episode that is not (or no longer) there (env)
    ├── SessionClosed               exit 1   a sandbox session that has ended was used
    ├── Cancelled                   exit 130 the task was cancelled (Ctrl-C, or the client left)
    ├── EnvironmentProblem          exit 3   something about this machine must be fixed first
    │   ├── SandboxUnavailable      exit 3   bwrap missing or cannot create namespaces
    │   ├── ModelUnavailable        exit 3   model file missing, corrupt or too large
    │   │   └── _Refused            exit 3   a served model's HTTP error, kept (model.openai)
    │   ├── TranscriptError         exit 3   the transcript store cannot be written (transcript)
    │   ├── DaemonRunning           exit 3   another daemon holds the socket (daemon.lock)
    │   └── UntrustedDaemon         exit 3   the socket's daemon is not this user's (cli)
    ├── ApplyRefused, ApplyStopped  exit 1   a change set not landed, or stopped (transaction)
    ├── SessionInUse                exit 1   a session's files held by another (transaction)
    ├── TaskFailed                  exit 1   the task or check ran and failed
    └── InternalError               exit 4   a bug: an unexpected exception, a daemon that died

The classes without a module named are defined here; the others beside what raises them.
All of them can be caught at the daemon's and the agent loop's boundary as
``ShellagentError``, and the package exports the ones defined here (and ``ProtocolError``)
at the top level: ``shellagent.ShellagentError``, ``shellagent.Cancelled`` …

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


class Cancelled(ShellagentError):
    """The task was cancelled while it waited for the model, generated or ran a command."""

    exit_code = 130  # as for Ctrl-C

    def __init__(self, message: str = "cancelled", *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)


class EnvironmentProblem(ShellagentError):
    exit_code = 3


class SandboxUnavailable(EnvironmentProblem):
    pass


class ModelUnavailable(EnvironmentProblem):
    pass


class TaskFailed(ShellagentError):
    exit_code = 1


class InternalError(ShellagentError):
    """Something shellagent did not expect went wrong: a bug, not the user's doing."""

    exit_code = 4
