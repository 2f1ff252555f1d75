"""Every test gets its own shellagent directories: nothing touches the real ones."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A run started in the background by a non-interactive shell inherits SIGINT ignored, and so
# would every subprocess a test starts: the Ctrl-C tests would then wait forever. A signal
# with a handler is reset to the default on exec, so the children get Ctrl-C back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def detach_views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Detach, at the run's end, the id-shifted views of the run's own snapshots (throwaway
    roots as root): left in the host's views directory, each would stay mounted, and every
    later sandbox's bwrap would re-read one more mount line after each bind."""
    from shellagent.sandbox import idmap

    yield
    idmap.prune(under=tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def shared_rootfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One snapshot of /etc and /var for every throwaway root of the run (building one
    takes about a second); a test that needs its own sets SHELLAGENT_ROOTFS_DIR itself."""
    return tmp_path_factory.mktemp("rootfs")


@pytest.fixture(autouse=True)
def private_shellagent_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_rootfs: Path
) -> Iterator[Path]:
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        monkeypatch.setenv(f"SHELLAGENT_{name}_DIR", str(tmp_path / f"sa-{name.lower()}"))
    monkeypatch.setenv("SHELLAGENT_ROOTFS_DIR", str(shared_rootfs))
    monkeypatch.setenv("SHELLAGENT_WORKSPACES_DIR", str(tmp_path / "sa-workspaces"))
    yield tmp_path


REAL_HOME = Path.home()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory that is *not* under /tmp.

    The sandbox gives every command a private /tmp, so a fake home under pytest's tmp_path
    would simply be invisible inside and every probe of it would pass for the wrong reason.
    """
    base = Path(os.environ.get("SHELLAGENT_TEST_ROOT", REAL_HOME / ".cache/shellagent-tests"))
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def accepts() -> Iterator[Any]:
    """``accepts(gbnf, text)``: whether llama.cpp's grammar engine takes ``text`` as a
    whole reply (token by token, then the end of generation)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from shellagent.model.embedded import embedded_model_path
    from shellagent.model.grammar_gate import GrammarGate

    llm = llama_cpp.Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    end = int(llm.token_eos())

    def accepts(gbnf: str, text: str) -> bool:
        gate = GrammarGate(vocab, int(llm.n_vocab()), gbnf)
        try:
            for token in llm.tokenize(text.encode(), add_bos=False, special=False):
                if not gate.allows(token):
                    return False
                gate.accept(token)
            return gate.allows(end)
        finally:
            gate.close()

    yield accepts
    llm.close()
