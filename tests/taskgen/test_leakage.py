"""Leakage: no generated task copies or paraphrases a dev task."""

from __future__ import annotations

from pathlib import Path

from shellagent.eval import load_tasks
from shellagent.taskgen import compare, everyday_path, read_library
from shellagent.taskgen.leakage import jaccard, tokens

# Generated tasks may do the same everyday things as dev tasks (tail a log, find the
# newest file); a paraphrase would share most of its words once paths are abstracted.
MAX_SIMILARITY = 0.6


def test_paths_names_and_numbers_are_abstracted() -> None:
    a = tokens("Delete the .tmp files in /var/cache/app older than 7 days.")
    b = tokens("delete the *.log files in '~/Downloads' older than 30 days")
    assert a == b == {"delete", "<file>", "file", "<path>", "older", "<num>", "day"}


def test_a_paraphrase_with_other_paths_scores_high_and_an_unrelated_task_low() -> None:
    dev = [("d1", "Count the lines in '/var/log/nginx/access.log' and save it to /tmp/n.txt.")]
    report = compare(
        [
            ("same", "count the lines in /srv/app/app.log and save it to ~/n.txt"),
            ("other", "Which git branch is ~/code/site on?"),
        ],
        dev,
    )
    assert report.maxima[0] == 1.0 and report.exact == 1
    assert report.maxima[1] < 0.2
    assert report.nearest[0].candidate_id == "same"
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_the_library_is_far_from_every_dev_task(dev_tasks: Path) -> None:
    dev = [(t.id, t.task) for t in load_tasks(dev_tasks).tasks]
    report = compare([(t.id, t.task) for t in read_library()], dev)
    assert report.exact == 0
    assert report.max_similarity < MAX_SIMILARITY, report.nearest[0]


def test_the_everyday_set_is_far_from_every_dev_task(dev_tasks: Path) -> None:
    dev = [(t.id, t.task) for t in load_tasks(dev_tasks).tasks]
    everyday = [(t.id, t.task) for t in load_tasks(everyday_path()).tasks]
    report = compare(everyday, dev)
    assert report.exact == 0 and report.max_similarity < MAX_SIMILARITY


def test_the_everyday_set_does_not_reword_library_tasks() -> None:
    """The everyday set measures an agent that retrieves from the library: the operations
    overlap on purpose (that is what the library is for), the wording must not."""
    library = [(t.id, t.task) for t in read_library()]
    everyday = [(t.id, t.task) for t in load_tasks(everyday_path()).tasks]
    report = compare(everyday, library)
    assert report.exact == 0 and report.max_similarity < MAX_SIMILARITY, report.nearest[0]
