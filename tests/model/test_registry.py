"""Backend kinds: specs go to the kind that claims them; plugins add kinds through entry
points, installed here as a real distribution on the path of a child Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shellagent.errors import ModelUnavailable
from shellagent.model import kind_for, load_backend
from shellagent.testing import ScriptedBackend

PLUGIN = """
from shellagent.testing import ScriptedBackend

class EchoKind:
    name = "echo"
    prefix = "echo"
    per_task = False

    def load(self, spec, *, task=None, **config):
        return ScriptedBackend(['{"done": "%s"}' % spec.removeprefix("echo:")], name=spec)
"""

CHILD = """
import json
from shellagent.model import kind_for, load_backend
from shellagent.model.registry import kinds
backend = load_backend("echo:hello")
reply = backend.generate([{"role": "user", "content": "x"}]).text
print(json.dumps({"kinds": [k.name for k in kinds()], "reply": reply,
                  "fallback": kind_for("some-model").name}))
"""


def _install_plugin(root: Path, module: str, target: str) -> None:
    (root / f"{module}.py").write_text(PLUGIN)
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[shellagent.backends]\n{target}\n")


def _child(root: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def test_each_spec_goes_to_the_kind_that_claims_it() -> None:
    assert kind_for(None).name == "llama"
    assert kind_for("qwen2.5-coder-1.5b").name == "llama"
    assert kind_for("/models/x.gguf").name == "llama"
    assert kind_for("openai:http://127.0.0.1:8080/v1#m").name == "openai"
    assert kind_for("scripted:replies.json").name == "scripted"
    assert kind_for("scripted:replies.json").per_task


def test_a_scripted_spec_loads_the_reply_list_of_its_task(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps({"replies": ['{"done": "other"}'], "by_task": {"t": ['{"done": "mine"}']}})
    )
    backend = load_backend(f"scripted:{script}", task="t")
    assert isinstance(backend, ScriptedBackend)
    assert backend.generate([{"role": "user", "content": "t"}]).text == '{"done": "mine"}'
    with pytest.raises(ModelUnavailable, match="cannot read script"):
        load_backend(f"scripted:{tmp_path / 'missing.json'}")


def test_a_plugin_registered_by_entry_point_serves_its_prefix(tmp_path: Path) -> None:
    _install_plugin(tmp_path, "echoplugin", "echo = echoplugin:EchoKind")
    result = _child(tmp_path)
    assert result["reply"] == '{"done": "hello"}'
    kinds = result["kinds"]
    assert isinstance(kinds, list) and "echo" in kinds and "llama" in kinds
    assert result["fallback"] == "llama"


def test_a_broken_plugin_is_skipped_and_the_built_in_kinds_still_work(tmp_path: Path) -> None:
    _install_plugin(tmp_path, "brokenplugin", "broken = brokenplugin:DoesNotExist")
    child = CHILD.replace('load_backend("echo:hello")', 'load_backend("scripted:/nonexistent")')
    out = subprocess.run(
        [sys.executable, "-c", child],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert "broken" in out.stderr and "failed to load" in out.stderr
    assert "cannot read script" in out.stderr  # the scripted kind was still found
