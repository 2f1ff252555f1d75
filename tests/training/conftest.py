"""A tiny llama GGUF (built once per run) and SFT data that teaches it one reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="training needs the train extra (./install.sh --train)")
pytest.importorskip("peft", reason="training needs the train extra (./install.sh --train)")
pytest.importorskip("gguf", reason="training needs the train extra (./install.sh --train)")

from tests.training.tiny_model import write_tiny_model  # noqa: E402

REPLY = '{"done": "zebra zebra"}'


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny.gguf")


@pytest.fixture
def sft_file(tmp_path: Path) -> Path:
    path = tmp_path / "sft.jsonl"
    lines = []
    for n in range(12):
        messages = [
            {"role": "system", "content": "You are a shell agent."},
            {"role": "user", "content": f"Task: say the word number {n}"},
            {"role": "assistant", "content": REPLY},
        ]
        lines.append(json.dumps({"messages": messages}))
    path.write_text("\n".join(lines) + "\n")
    return path
