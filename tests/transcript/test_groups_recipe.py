"""The docs' recipe for loading grouped rollouts runs as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from shellagent.transcript.groups import with_advantages
from tests.transcript.test_groups import rec

DOC = Path(__file__).resolve().parents[2] / "docs" / "transcripts.md"


def test_the_documented_loading_recipe_runs_on_a_grouped_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("datasets")
    pytest.importorskip("pandas")
    section = DOC.read_text().split("### `rl --group`", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the recipe's code block is missing"
    prompt = [{"role": "user", "content": "count the logs"}]
    raw = [rec("a", r, "x", prompt) for r in (1.0, -0.1)] + [rec("b", 0.5, "y", prompt)] * 2
    lines = [json.dumps(r) for r in with_advantages(raw)]
    (tmp_path / "rl-groups.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    exec(compile(code.group(1), str(DOC), "exec"), {})
    assert capsys.readouterr().out.strip() == "4 episodes, 2 with spread, 1 prompts"
