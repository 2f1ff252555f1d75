"""Generation: many families of everyday work, reproducible from a seed, well-formed lines."""

from __future__ import annotations

import collections
import re

import pytest

from shellagent.errors import InputError
from shellagent.eval import parse_task_lines
from shellagent.taskgen import DEFAULT_SEED, check_template, families, generate
from shellagent.taskgen.generate import count

PER_FAMILY = 3


@pytest.fixture(scope="module")
def sample() -> list:  # type: ignore[type-arg]
    return generate(DEFAULT_SEED, PER_FAMILY)


def test_there_are_at_least_40_families_over_the_areas_of_everyday_work() -> None:
    found = families()
    assert len(found) >= 40
    assert len({f.name for f in found}) == len(found)
    areas = {f.area for f in found}
    for area in ("files", "logs", "archives", "text", "permissions", "disk", "processes",
                 "users", "schedules", "data", "git", "backups", "renames", "dedup"):  # fmt: skip
        assert area in areas, area


def test_the_same_seed_gives_the_same_set_and_another_seed_another(sample: list) -> None:  # type: ignore[type-arg]
    again = generate(DEFAULT_SEED, PER_FAMILY)
    assert [t.to_line() for t in again] == [t.to_line() for t in sample]
    other = generate(DEFAULT_SEED + 1, PER_FAMILY)
    same = sum(a.task == b.task for a, b in zip(sample, other, strict=True))
    assert same < len(sample) // 10


def test_a_family_keeps_its_instances_when_others_are_left_out(sample: list) -> None:  # type: ignore[type-arg]
    alone = generate(DEFAULT_SEED, PER_FAMILY, ["git_tag"])
    assert [t.to_line() for t in alone] == [t.to_line() for t in sample if t.family == "git_tag"]


def test_every_family_gives_distinct_well_formed_task_lines(sample: list) -> None:  # type: ignore[type-arg]
    per_family = collections.Counter(t.family for t in sample)
    assert per_family == {f.name: count(f, PER_FAMILY) for f in families()}
    assert set(per_family.values()) == {PER_FAMILY, 2}  # twins (to a file) are drawn half as often
    assert len({t.task for t in sample}) == len(sample)
    tasks, problems = parse_task_lines([t.to_line() for t in sample])
    assert problems == [] and tasks == sample
    for task in sample:
        assert task.gold is not None and task.gold.commands
        check_template(task.gold.answer_template, len(task.gold.commands))
        assert task.setup_commands and task.success_condition


def test_slots_name_the_paths_and_values_the_task_is_made_of(sample: list) -> None:  # type: ignore[type-arg]
    for task in sample:
        assert task.gold is not None
        text = " ".join((task.task, *task.setup_commands, *task.gold.commands))
        for name, value in task.slots.items():
            assert re.fullmatch(r"[a-z_]+", name), name
            for part in value.split(","):
                bare = part.removeprefix("~/")
                assert bare in text, (task.id, name, value)


def test_question_families_give_wrong_answers_their_checks_must_refuse(sample: list) -> None:  # type: ignore[type-arg]
    questions = [
        t for t in sample if "$ANSWER" in t.success_condition and not t.family.endswith("_to_file")
    ]
    assert len({t.family for t in questions}) >= 30
    for task in questions:
        assert task.gold is not None and task.gold.wrong_answers, task.id


def test_phrasings_vary_within_a_family() -> None:
    tasks = generate(DEFAULT_SEED, 20, ["largest_files", "log_count_level", "git_tag"])
    for name in ("largest_files", "log_count_level", "git_tag"):
        openings = {" ".join(t.task.split()[:3]) for t in tasks if t.family == name}
        assert len(openings) >= 3, name


def test_unknown_family_names_are_an_input_error() -> None:
    with pytest.raises(InputError, match="no task family nope"):
        generate(DEFAULT_SEED, 1, ["nope"])
    with pytest.raises(InputError, match="per-family"):
        generate(DEFAULT_SEED, 0)
