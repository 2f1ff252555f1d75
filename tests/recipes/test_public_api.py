"""The recipes package's public surface: complete and sorted."""

from __future__ import annotations

import inspect

import shellagent.recipes as recipes


def test_all_is_sorted_and_every_name_exists() -> None:
    assert recipes.__all__ == sorted(recipes.__all__)
    for name in recipes.__all__:
        assert hasattr(recipes, name), name


def test_every_public_class_and_function_is_in_all() -> None:
    public = {
        name
        for name, value in vars(recipes).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", "").startswith("shellagent.recipes")
    }
    assert public <= set(recipes.__all__)
