"""The task generator's public surface: complete and sorted."""

from __future__ import annotations

import inspect

import shellagent.taskgen as taskgen


def test_all_is_sorted_and_every_name_exists() -> None:
    assert taskgen.__all__ == sorted(taskgen.__all__)
    for name in taskgen.__all__:
        assert hasattr(taskgen, name), name


def test_every_public_class_and_function_is_in_all() -> None:
    public = {
        name
        for name, value in vars(taskgen).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("shellagent.taskgen")
    }
    assert public <= set(taskgen.__all__)
