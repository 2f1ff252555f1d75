from __future__ import annotations

import subprocess
import sys
import types

import shellagent.agent.actions as actions
import shellagent.model as model


def test_model_package_all_is_sorted_and_complete() -> None:
    assert model.__all__ == sorted(model.__all__)
    public = {
        name
        for name, value in vars(model).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(model.__all__) == public - {"annotations"}


def test_actions_all_is_sorted_and_names_only_what_exists() -> None:
    assert actions.__all__ == sorted(actions.__all__)
    assert all(hasattr(actions, name) for name in actions.__all__)


def test_importing_the_interface_loads_neither_llama_cpp_nor_numpy() -> None:
    code = (
        "import sys, shellagent.model, shellagent.agent.actions, shellagent.testing; "
        "print(sorted(m for m in ('llama_cpp', 'numpy', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
