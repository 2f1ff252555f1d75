"""The adapter shipped in the package: in the catalog with its digest, loads by name over the
embedded model, and changes what the model replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.model import load_backend
from shellagent.model.adapters import check_adapter, file_sha256
from shellagent.model.catalog import installed_path, lookup
from shellagent.model.embedded import embedded_model_path

NAME = "smollm2-135m-shell"


def test_the_shipped_adapter_is_in_the_catalog_with_its_digest_and_size() -> None:
    entry = lookup(NAME)
    assert (entry.kind, entry.base, entry.embedded) == ("adapter", "smollm2-135m", True)
    path = installed_path(entry)
    assert path.is_file() and path.stat().st_size == entry.size_bytes <= 20_000_000
    assert file_sha256(path) == entry.sha256
    # trained for exactly this base: the adapter names the embedded model's digest
    check_adapter(path, embedded_model_path(), base_sha256=lookup("smollm2-135m").sha256)


@pytest.mark.model
def test_the_shipped_adapter_loads_by_name_and_changes_the_reply() -> None:
    from shellagent.agent.examples import default_library
    from shellagent.taskgen.sft import conversations

    record = next(conversations(default_library()))
    prompt = record["messages"][:2]  # the system prompt and the task, as the agent sends them
    plain = load_backend("smollm2-135m", n_ctx=4096).generate(prompt, max_tokens=48).text
    tuned_backend = load_backend(f"default+{NAME}", n_ctx=4096)
    assert tuned_backend.name == f"default+{NAME}"
    tuned = tuned_backend.generate(prompt, max_tokens=256).text  # as the agent asks
    assert tuned != plain
    assert "cmd" in json.loads(tuned)  # still the action format


@pytest.mark.model
def test_the_default_model_is_the_embedded_base_with_the_shipped_adapter() -> None:
    from shellagent.model.llama import LlamaBackend

    for spec in (None, "", "default"):
        backend = load_backend(spec, n_ctx=1024)
        assert isinstance(backend, LlamaBackend)
        assert backend.name == f"smollm2-135m+{NAME}"
        assert backend.adapter == installed_path(lookup(NAME))
        assert backend.path == embedded_model_path()
        backend.close()
    base = load_backend("smollm2-135m", n_ctx=1024)
    assert isinstance(base, LlamaBackend) and base.adapter is None  # still selectable
    base.close()


def test_the_daemon_pool_loads_the_default_once_however_it_is_named() -> None:
    from shellagent.model.pool import ModelPool
    from shellagent.testing import ScriptedBackend

    loaded: list[str | None] = []

    def loader(spec: str | None) -> ScriptedBackend:
        loaded.append(spec)
        return ScriptedBackend([])

    pool = ModelPool(None, idle_unload_s=None, loader=loader)
    for spec in (None, "default", f"smollm2-135m+{NAME}"):
        pool.backend_for(spec, "a task")
    assert loaded == [f"smollm2-135m+{NAME}"]


def test_doctor_checks_the_default_models_adapter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from shellagent.cli import cmd_doctor
    from shellagent.sandbox import Check

    assert f"with the adapter {NAME}" in cmd_doctor._model()
    changed = tmp_path / f"{NAME}.gguf"
    changed.write_bytes(installed_path(lookup(NAME)).read_bytes()[:-1] + b"\0")
    monkeypatch.setattr("shellagent.model.catalog.installed_path", lambda _entry: changed)
    check = Check.attempt("model", cmd_doctor._model)
    assert not check.ok and "not the file the catalog names" in check.detail
    assert "./install.sh" in check.fix
