"""One error tree: everything the package raises on purpose is a ``ShellagentError``,
drawn in ``errors.py``'s docstring, and exported at the top level as httpx does."""

from __future__ import annotations

import ast
import inspect
import threading
import time
from pathlib import Path

import pytest

import shellagent
from shellagent import errors
from shellagent.agent import AutoApprover, Hooks, Oversight, Parts, Recording, run_task
from shellagent.model.pool import ModelPool
from shellagent.policy import PolicyEngine
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend

PACKAGE = Path(shellagent.__file__).parent


def _tree_classes() -> set[str]:
    """The classes of the package that derive from ``ShellagentError``, read from source."""
    bases: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                names = {ast.unparse(b).rpartition(".")[2] for b in node.bases}
                bases.setdefault(node.name, set()).update(names)
    found = {"ShellagentError"}
    grew = True
    while grew:
        more = {name for name, of in bases.items() if of & found} - found
        found |= more
        grew = bool(more)
    return found


def test_the_docstring_draws_every_class_of_the_tree() -> None:
    doc = errors.__doc__ or ""
    missing = sorted(name for name in _tree_classes() if name not in doc)
    assert missing == []


def test_every_error_of_errors_py_is_exported_at_the_top_level() -> None:
    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.ShellagentError)
    }
    assert defined <= set(shellagent.__all__)
    for name in defined:
        assert getattr(shellagent, name) is getattr(errors, name)


def test_the_boundary_errors_are_in_the_tree_and_importable_where_they_were() -> None:
    from shellagent.model.pool import Cancelled
    from shellagent.protocol import MALFORMED, ProtocolError, decode

    assert Cancelled is shellagent.Cancelled is errors.Cancelled
    assert ProtocolError is shellagent.ProtocolError
    with pytest.raises(ProtocolError) as caught:
        decode(b"not json\n")
    assert isinstance(caught.value, shellagent.InputError)
    assert isinstance(caught.value, ValueError)  # as it was, for callers that catch that
    assert caught.value.code == MALFORMED and caught.value.exit_code == 2
    assert Cancelled().show() == "error: cancelled" and Cancelled.exit_code == 130


def test_a_task_cancelled_while_it_waits_for_the_model_ends_as_cancelled(
    tmp_path: Path,
) -> None:
    pool = ModelPool(
        "m", idle_unload_s=None, loader=lambda spec: ScriptedBackend(['{"done": "ok"}'])
    )
    cancel = threading.Event()
    backend = pool.backend_for(None, "anything", cancel=cancel)
    pool.lock.acquire()  # another task has the model now
    outcomes = []

    def run() -> None:
        outcomes.append(
            run_task(
                "anything",
                Parts(
                    backend=backend,
                    shell=FakeShell(cwd=str(tmp_path)),
                    policy=PolicyEngine.load(workspace=tmp_path),
                ),
                Oversight(approver=AutoApprover()),
                Recording(sink=MemorySink()),
                Hooks(cancel=cancel),
            )
        )

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while pool.lock.waiting < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    cancel.set()
    worker.join(30)
    pool.lock.release()
    pool.close()
    assert [o.reason for o in outcomes] == ["cancelled"]
