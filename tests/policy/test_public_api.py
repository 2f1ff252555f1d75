"""The package re-exports its public surface, sorted and complete."""

from __future__ import annotations

import shellagent.policy as policy


def test_all_is_sorted_and_every_name_exists() -> None:
    assert policy.__all__ == sorted(policy.__all__)
    for name in policy.__all__:
        assert hasattr(policy, name), name


def test_public_names_others_rely_on_are_exported() -> None:
    assert {"PolicyEngine", "Decision", "Segment", "ShellState"} <= set(policy.__all__)
