"""Retrieved worked examples: a task finds its own family's examples first, and a
rewritten example carries the task's paths and none of the example's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from shellagent.agent.examples import (
    Example,
    ExampleLibrary,
    Step,
    abstract,
    render,
    rewrite,
    slots_of,
)

RECORDS = [
    {
        "id": "rm-1",
        "family": "delete-by-extension",
        "task": "Remove the files ending in '.tmp' from '/srv/cache'.",
        "steps": [
            {"command": "ls /srv/cache", "output": "a.tmp\nb.log\n", "why": "look first"},
            {"command": "rm /srv/cache/*.tmp", "output": ""},
        ],
        "answer": "Removed a.tmp from /srv/cache; b.log is kept.",
        "slots": {"dir": "/srv/cache", "ext": ".tmp"},
    },
    {
        "id": "count-1",
        "family": "count-lines",
        "task": "Save the number of lines of '/var/log/web/app.log' to '/tmp/count.txt'.",
        "steps": [{"command": "wc -l < /var/log/web/app.log > /tmp/count.txt", "output": ""}],
        "answer": "Saved 42 to /tmp/count.txt.",
        "slots": {"file": "/var/log/web/app.log", "file2": "/tmp/count.txt"},
    },
    {
        "id": "big-1",
        "family": "largest-files",
        "task": "Which five files in '/data/media' are the largest?",
        "steps": [{"command": "ls -S /data/media | head -n 5", "output": "a.mp4\nb.mp4\n"}],
        "answer": "The largest are a.mp4 and b.mp4.",
        "slots": {"dir": "/data/media"},
    },
]


def _library(tmp_path: Path) -> ExampleLibrary:
    path = tmp_path / "lib.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for r in RECORDS:
            f.write(json.dumps(r) + "\n")
        f.write("{not json\n")  # a broken line is skipped
    return ExampleLibrary.load([path, tmp_path / "missing.jsonl"])


def test_a_task_finds_its_own_familys_example_first(tmp_path: Path) -> None:
    library = _library(tmp_path)
    assert len(library.examples) == 3
    cases = {
        "Delete every file ending in '.bak' from '/home/user/old'.": "delete-by-extension",
        "Count the lines in '/opt/app/events.log' and write it to '/root/n.txt'.": "count-lines",
        "What are the 5 biggest files in '/srv/videos'?": "largest-files",
    }
    for task, family in cases.items():
        found = library.search(task, k=2)
        assert found and found[0].family == family, (task, [e.family for e in found])


def test_a_rewritten_example_has_the_tasks_paths_and_none_of_its_own(tmp_path: Path) -> None:
    example = _library(tmp_path).search("Delete '.bak' files in '/home/user/old'.")[0]
    task = "Delete every file ending in '.bak' from '/home/user/old'."
    text = render([rewrite(example, task)])
    assert "/home/user/old" in text and ".bak" in text
    assert "/srv/cache" not in text and ".tmp" not in text
    assert '{"cmd": "rm /home/user/old/*.bak", "why": "run rm"}' in text
    assert '"why": "look first"' in text


def test_a_task_about_here_gets_the_examples_folder_as_dot(tmp_path: Path) -> None:
    example = _library(tmp_path).search("What are the 5 biggest files in '/srv/videos'?")[0]
    folder = example.slots["dir"]
    for task in ("show the five largest files here", "biggest files in this folder"):
        text = render([rewrite(example, task)])
        assert folder not in text, (task, text)
    assert folder in render([rewrite(example, "biggest files on the disk")])


def test_roles_that_do_not_line_up_leave_the_example_as_it_is() -> None:
    example = Example.from_record(RECORDS[2])
    assert rewrite(example, "how much memory is free?") == example


def test_paths_names_and_numbers_are_abstracted_for_the_index() -> None:
    text = abstract("Move '/srv/a/report.pdf' and 3 files from /tmp/x to '.bak' files")
    assert "/srv" not in text and "report" not in text
    assert "file pdf" in text and "number" in text and "ext bak" in text


def test_an_empty_library_finds_nothing() -> None:
    assert ExampleLibrary([]).search("anything") == []


def test_render_uses_the_sessions_layout() -> None:
    example = Example("t", (Step("ls", "a\nb\n"),), "done: a and b")
    assert render([example]).splitlines() == [
        "Task: t",
        '{"cmd": "ls", "why": "run ls"}',
        "exit 0",
        "a",
        "b",
        '{"done": "done: a and b"}',
    ]


def test_the_file_a_result_is_saved_in_keeps_its_role_when_rewritten() -> None:
    assert slots_of("Read '/var/log/x.log' and save it to /tmp/a.txt.") == {
        "file": "/var/log/x.log",
        "out": "/tmp/a.txt",
    }
    assert slots_of("Write the port from /etc/a.conf to the file '/tmp/port.txt'.")["out"] == (
        "/tmp/port.txt"
    )
    assert slots_of("Save the lines in /var/log/a.log to /tmp/b.txt") == {
        "file": "/var/log/a.log",
        "out": "/tmp/b.txt",
    }
    assert slots_of("Copy /etc/app.conf to /tmp/app.conf.bak") == {
        "file": "/etc/app.conf",
        "file2": "/tmp/app.conf.bak",
    }
    # the task names a folder and where to save: the example's log file is not turned
    # into the task's output file (which it was when both were only "file" and "file2")
    example = Example.from_record({**RECORDS[1], "slots": {}})
    task = "Count the lines of the logs in /var/log/es and save the count to '/tmp/es.txt'."
    steps = rewrite(example, task).steps
    assert steps[0].command == "wc -l < /var/log/web/app.log > /tmp/es.txt"


def test_a_folder_named_as_parent_and_name_is_rewritten_too() -> None:
    example = Example.from_record(
        {
            "task": "Pack /srv/tallybook into a tarball at /tmp/tallybook.tar.gz.",
            "steps": [{"command": "tar -czf /tmp/tallybook.tar.gz -C /srv tallybook"}],
            "answer": "Created /tmp/tallybook.tar.gz.",
        }
    )
    task = "Pack ~/Documents/asterix into a tarball at /tmp/asterix.tar.gz."
    command = rewrite(example, task).steps[0].command
    assert command == "tar -czf /tmp/asterix.tar.gz -C ~/Documents asterix"
