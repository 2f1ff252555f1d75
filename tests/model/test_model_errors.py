"""Every way a model can fail to load is a message with a fix, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.errors import ModelUnavailable
from shellagent.model import load_backend
from shellagent.model.chat_template import ChatTemplate
from shellagent.model.gguf import check_model_file, mem_available_bytes


def test_missing_model_file_is_model_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable) as info:
        load_backend(str(tmp_path / "nope.gguf"))
    assert "not found" in info.value.message
    assert info.value.exit_code == 3


def test_a_file_that_is_not_gguf_is_refused_before_llama_reads_it(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"<html>404 not found</html>")
    with pytest.raises(ModelUnavailable) as info:
        load_backend(str(fake))
    assert "not a GGUF" in info.value.message and "b'<htm'" in info.value.message


@pytest.mark.model
def test_a_truncated_gguf_is_model_unavailable(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(200))
    with pytest.raises(ModelUnavailable) as info:
        load_backend(str(broken))
    assert "could not load" in info.value.message
    assert info.value.hint is not None and "pull it again" in info.value.hint


def test_a_model_larger_than_available_ram_is_refused(tmp_path: Path) -> None:
    available = mem_available_bytes()
    assert available is not None
    huge = tmp_path / "huge.gguf"
    with huge.open("wb") as f:
        f.write(b"GGUF")
        f.truncate(available + 2**30)  # sparse: takes no disk space
    with pytest.raises(ModelUnavailable) as info:
        check_model_file(huge)
    assert "of RAM is available" in info.value.message
    assert check_model_file(huge, check_memory=False) == available + 2**30


def test_a_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="not a file"):
        load_backend(str(tmp_path) + "/")


def test_a_catalog_model_not_yet_pulled_says_how_to_pull_it() -> None:
    with pytest.raises(ModelUnavailable) as info:
        load_backend("qwen2.5-coder-1.5b")
    assert info.value.hint == "run `shellagent model pull qwen2.5-coder-1.5b`"


def test_an_unknown_model_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelUnavailable) as info:
        load_backend("gpt-17")
    assert info.value.hint is not None and "qwen3-4b" in info.value.hint


def test_the_cli_prints_one_line_and_exits_3_for_a_missing_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["model", "path", "qwen3-4b"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: model qwen3-4b is not downloaded")
    assert "Traceback" not in err


def test_a_template_that_rewrites_earlier_turns_is_detected() -> None:
    # Like templates that strip earlier assistant turns: prefix reuse cannot hold.
    strip_old = (
        "{% for m in messages %}{% if m['role'] != 'assistant' or loop.last %}"
        "<{{ m['role'] }}>{{ m['content'] }}</s>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    assert not ChatTemplate(strip_old).extends_previous_turn()
    chatml = ChatTemplate(
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    assert chatml.extends_previous_turn()


def test_a_template_that_does_not_compile_is_model_unavailable() -> None:
    with pytest.raises(ModelUnavailable, match="does not compile"):
        ChatTemplate("{% for m in messages %}")
