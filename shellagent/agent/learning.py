"""What ``ask`` learns from a correction you confirm, and the recipe book kept up with it.

A correction is a command you wrote yourself in a session (edited at the approval prompt,
or typed after refusing, which reaches the session as an edit) or an alternative you
picked; when you then answer "did that do it?" with yes, the request is learned at once
(``shellagent.recipes.learn``): the next time it, a paraphrase of it or the same request
with other values is asked, the recipe step finds it. ``ask.learn = false`` turns it off.

``learn_commands`` is what the daemon calls after a confirmed session; ``learn_pick`` is the
call for an alternative the user picked (the alternatives list calls it). Both return the
one line the screen shows. ``BookWatch`` keeps a long-lived recipe book (the daemon's) up
with ``taught.toml``, written by this process or by ``shellagent recipes add --task``: when
the file changed, the book's taught recipes are read again and the ranker's
nearest-phrasing layer takes them in (milliseconds; no retraining).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from shellagent.policy import PolicyEngine
    from shellagent.recipes import Recipe
    from shellagent.recipes.learn import Learned
    from shellagent.recipes.model import Kind
    from shellagent.recipes.shortlist import Shelf

__all__ = ["BookWatch", "kind_of", "learn_commands", "learn_pick"]


def kind_of(commands: Sequence[str], policy: PolicyEngine, cwd: Path | None = None) -> Kind:
    """ "question" when the policy reads every command as read-only, else "action"."""
    from shellagent.policy import ShellState

    state = ShellState(cwd=cwd)
    read_only = all(policy.check(c, state).read_only for c in commands)
    return "question" if read_only else "action"


def learn_commands(task: str, commands: Sequence[str], *, kind: Kind) -> Learned:
    """Learn that the commands the user wrote (and confirmed) do ``task``; ``InputError``
    when they cannot be learned (a secret in them, nothing to learn)."""
    from shellagent.recipes.learn import teach_commands
    from shellagent.transcript import Redactor

    return teach_commands(task, commands, redact=Redactor.from_environment().redact, kind=kind)


def learn_pick(task: str, recipe: Recipe | str, args: Mapping[str, object]) -> Learned:
    """Learn that the alternative the user picked (``recipe`` with ``args``) does ``task``:
    call it once the user confirmed the pick did it, unless ``ask.learn`` is off. The
    ``Learned``'s ``line()`` is what to show; ``InputError`` when it cannot be learned."""
    from shellagent.recipes.learn import teach
    from shellagent.transcript import Redactor

    return teach(task, recipe, args, redact=Redactor.from_environment().redact)


def _signature() -> tuple[int, int, int] | None:
    from shellagent.recipes.taught import taught_path

    try:
        st = os.stat(taught_path())
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# a recipe book (``recipe_step.RecipeBook``, a dataclass): named by what it has, so that
# this module, below the recipe step, does not import it
_Book = TypeVar("_Book", bound="Shelf")


class BookWatch:
    """Keeps a recipe book up with ``taught.toml`` (see the module docstring)."""

    def __init__(self) -> None:
        self._seen: tuple[int, int, int] | None = None
        self._lock = threading.Lock()

    def mark(self) -> None:
        """The book about to be loaded holds ``taught.toml`` as it is now."""
        with self._lock:
            self._seen = _signature()

    def __call__(self, book: _Book) -> _Book:
        """``book``, or a new one with the taught recipes as they are now when the file
        changed since it was read. The book's other recipes stay as they were: their
        ranker was trained on them."""
        with self._lock:
            now = _signature()
            if now == self._seen:
                return book
            from shellagent import paths
            from shellagent.errors import ShellagentError
            from shellagent.recipes import load

            try:
                fresh = load()
                recipes = {n: r for n, r in book.recipes.items() if not r.taught}
                recipes.update({n: r for n, r in fresh.recipes.items() if r.taught})
                ranker = book.ranker.with_taught(list(recipes.values()), paths.cache_dir())
            except (ShellagentError, OSError, ValueError):
                return book  # tried again at the next task
            self._seen = now
            return cast(
                "_Book", dataclasses.replace(cast(Any, book), recipes=recipes, ranker=ranker)
            )
