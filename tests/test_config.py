"""config.toml: defaults, validation with file:line, `config set` keeping comments, and
the `shellagent config` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from shellagent import config
from shellagent.cli.main import main
from shellagent.errors import ConfigError


def test_no_file_means_every_default() -> None:
    settings = config.load()
    assert settings.model.default == "default" and settings.ask.review == "both"
    assert not config.config_path().exists()


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[model]\ncontext = 100\n", 2, "model.context: Input should be greater than or equal"),
        ("[ask]\nreview = 'sometimes'\n", 2, "ask.review: Input should be 'commands'"),
        ("[ask]\nconfirm = true\ncolour = 'auto'\n", 3, "ask.colour: unknown setting"),
        ("[model]\n\n[nope]\nx = 1\n", 3, "nope: unknown setting"),
        ("[model]\ndefault = \n", 2, "not valid TOML"),
    ],
)
def test_a_bad_file_is_an_error_naming_file_and_line(text: str, line: int, words: str) -> None:
    path = config.config_path()
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        config.load()
    assert info.value.message.startswith(f"{path}:{line}: ")
    assert words in info.value.message
    assert info.value.exit_code == 2


def test_set_keeps_comments_and_an_invalid_value_writes_nothing() -> None:
    path = config.config_path()
    path.parent.mkdir(parents=True)
    path.write_text("# my notes\n[model]\ndefault = 'qwen3-4b'  # the big one\n")
    config.set_value("ask.confirm", "false")
    config.set_value("model.threads", "4")
    text = path.read_text()
    assert "# my notes" in text and "# the big one" in text
    settings = config.load()
    assert settings.ask.confirm is False and settings.model.threads == 4
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="was not changed"):
        config.set_value("ask.review", "sometimes")
    with pytest.raises(ConfigError, match="unknown setting 'ask.colour'"):
        config.set_value("ask.colour", "never")
    assert path.read_bytes() == before
    config.set_value("model.threads", "default")
    assert config.load().model.threads is None


def test_config_show_says_where_each_value_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "set", "model.default", "qwen2.5-coder-1.5b"]) == 0
    capsys.readouterr()
    assert main(["config", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    rows = {row["key"]: row for row in shown["settings"]}
    assert rows["model.default"]["value"] == "qwen2.5-coder-1.5b"
    assert rows["model.default"]["source"] == "file"
    assert rows["ask.review"]["source"] == "default"
    assert main(["config", "set", "model.context", "12"]) == 2
    assert "greater than or equal to 512" in capsys.readouterr().err


def test_config_edit_runs_the_editor_and_checks_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[1]\ntext = open(p).read()\n"
        "open(p, 'w').write(text.replace('# max_turns = 15', 'max_turns = 0'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    assert main(["config", "edit"]) == 2
    err = capsys.readouterr().err
    assert "ask.max_turns: Input should be greater than or equal to 1" in err
    assert "kept as you wrote it" in err
    assert "max_turns = 0" in config.config_path().read_text()
    monkeypatch.setenv("EDITOR", f"{sys.executable} -c pass")
    config.config_path().write_text(config.TEMPLATE)
    assert main(["config", "edit"]) == 0
    assert "valid" in capsys.readouterr().out


def _write(text: str) -> Path:
    path = config.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_policy_preset_is_the_one_the_engine_loads() -> None:
    from shellagent.policy import PolicyEngine

    assert PolicyEngine.load().check("curl -s https://example.org").decision == "ask"
    _write('[policy]\npreset = "strict"\n')
    assert PolicyEngine.load().check("curl -s https://example.org").decision == "deny"
    _write('[policy]\npreset = "/nowhere/policy.toml"\n')
    with pytest.raises(ConfigError, match="neither a preset nor a file"):
        PolicyEngine.load()


def test_the_model_settings_reach_the_backend_of_a_local_model_only() -> None:
    _write('[model]\ndefault = "qwen2.5-coder-1.5b"\ncontext = 8192\nthreads = 2\n')
    settings = config.load()
    assert config.model_spec(settings) == "qwen2.5-coder-1.5b"
    assert config.model_spec(settings, "scripted:x.json") == "scripted:x.json"
    assert config.backend_options(settings, None) == {"n_ctx": 8192, "n_threads": 2}
    assert config.backend_options(settings, "openai:http://127.0.0.1:1/v1#m") == {}
    assert config.model_spec(config.Config()) is None  # "default": the embedded model


def test_ask_without_model_uses_the_configured_one(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "model.json"
    script.write_text(json.dumps(['{"cmd": "echo from-config", "why": "x"}', '{"done": "ok"}']))
    _write(f'[model]\ndefault = "scripted:{script}"\n[ask]\nconfirm = false\nrecipes = "off"\n')
    work = tmp_path / "w"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", "-y", "--no-daemon", "say it"],
        cwd=work, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    # the model's own commands, nobody confirmed them: not claimed, exit 1 (the exit-code table)
    assert done.returncode == 1, done.stderr
    assert "$ echo from-config" in done.stdout and "model scripted:model.json" in done.stdout
