"""The shipped library: verified, complete, built from observed output, reproducible."""

from __future__ import annotations

import collections
import gzip
from functools import cache

from shellagent.eval import Task
from shellagent.taskgen import (
    DEFAULT_PER_FAMILY,
    DEFAULT_SEED,
    families,
    generate,
    library_path,
    read_library,
    render,
)
from shellagent.taskgen.library import library_bytes
from shellagent.taskgen.verify import NOTHING_ANSWER

from .conftest import answer_passes


@cache
def library() -> tuple[Task, ...]:
    return tuple(read_library())


def test_the_library_holds_at_least_5000_verified_tasks_of_every_family() -> None:
    tasks = library()
    assert len(tasks) >= 5000
    assert len({t.id for t in tasks}) == len(tasks)
    per_family = collections.Counter(t.family for t in tasks)
    assert set(per_family) == {f.name for f in families()}
    assert min(per_family.values()) >= 30


def test_every_final_answer_is_built_from_the_observed_output() -> None:
    for task in library():
        gold = task.gold
        assert gold is not None and len(gold.observations) == len(gold.commands), task.id
        assert all(o.exit_code == 0 for o in gold.observations), task.id
        outputs = [o.output for o in gold.observations]
        assert gold.answer == render(gold.answer_template, outputs), task.id
        assert 0 < len(gold.answer) <= 400


def test_the_library_is_the_generated_set_plus_what_verification_recorded() -> None:
    generated = {t.id: t for t in generate(DEFAULT_SEED, DEFAULT_PER_FAMILY)}
    for task in library():
        assert task.gold is not None
        made = generated[task.id]
        assert made.gold is not None
        # plain commands: the generated candidate, kept where it passed (``taskgen/plain.py``)
        assert task.gold.plain in (made.gold.plain, ()), task.id
        bare = task.model_copy(
            update={
                "gold": task.gold.model_copy(
                    update={"observations": (), "answer": "", "plain": made.gold.plain}
                )
            }
        )
        assert bare == made, task.id


def test_the_library_file_is_what_library_bytes_writes_for_its_tasks() -> None:
    data = library_path().read_bytes()
    assert data == library_bytes(library())
    assert data[4:8] == b"\0\0\0\0"  # no time in the gzip header
    assert gzip.decompress(data).count(b"\n") == len(library())


def test_recorded_answers_pass_and_wrong_ones_fail_their_checks() -> None:
    """Answer checks of question tasks read only $ANSWER and $LAST_OUTPUT, so a sample can
    be judged here without a sandbox."""
    questions = [t for t in library() if t.gold is not None and t.gold.wrong_answers]
    assert len(questions) >= 2000
    for task in questions[::40]:
        gold = task.gold
        assert gold is not None
        last = gold.observations[-1].output
        assert answer_passes(task.success_condition, gold.answer, last), task.id
        for wrong in ("", NOTHING_ANSWER, task.task, *gold.wrong_answers):
            assert not answer_passes(task.success_condition, wrong, wrong), (task.id, wrong)
