"""``model pull`` against a local HTTP server that supports Range, like a model hub."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from shellagent.cli.main import main
from shellagent.errors import ModelUnavailable
from shellagent.model.catalog import CatalogEntry, lookup
from shellagent.model.download import pull

PAYLOAD = b"GGUF" + os.urandom(3 * 2**20 + 12345)
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()


class FileServer(BaseHTTPRequestHandler):
    """Serves ``payload`` at any path; honours ``Range: bytes=N-`` unless told not to.

    ``cut_after`` makes the next response promise the whole body but hang up after that many
    bytes, as a dropped connection does.
    """

    payload: ClassVar[bytes] = PAYLOAD
    ranges: ClassVar[bool] = True
    cut_after: ClassVar[int | None] = None
    seen: ClassVar[list[str | None]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        cls = type(self)
        header = self.headers.get("Range")
        cls.seen.append(header)
        start = 0
        if header and cls.ranges:
            start = int(header.removeprefix("bytes=").rstrip("-"))
            if start >= len(cls.payload):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(cls.payload)}")
                self.end_headers()
                return
            self.send_response(206)
            end = len(cls.payload) - 1
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(cls.payload)}")
        else:
            self.send_response(200)
        body = cls.payload[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if cls.cut_after is not None:
            self.wfile.write(body[: cls.cut_after])
            cls.cut_after = None
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def _server(start_server: Callable[..., Any], **attrs: Any) -> Any:
    handler = type("Handler", (FileServer,), {"seen": [], **attrs})
    return start_server(handler), handler


def _entry(sha256: str = DIGEST, url: str = "http://unused/test.gguf") -> CatalogEntry:
    return CatalogEntry(
        name="tiny",
        description="test model",
        url=url,
        size_bytes=0,
        sha256=sha256,
        chat_format="chatml",
        context=2048,
        license="",
    )


def test_pull_verifies_and_installs_under_the_final_name(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, handler = _server(start_server)
    result = pull(_entry(), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)
    assert result.path == tmp_path / "tiny.gguf"
    assert result.path.read_bytes() == PAYLOAD
    assert result.verified and result.sha256 == DIGEST
    assert not (tmp_path / "tiny.gguf.part").exists()
    assert handler.seen == [None]


def test_an_interrupted_pull_resumes_with_a_range_request(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, handler = _server(start_server, cut_after=2**20 + 7)
    url = f"{server.url}/tiny.gguf"
    with pytest.raises(ModelUnavailable) as info:
        pull(_entry(), tmp_path, url=url, progress=None)
    assert "interrupted" in info.value.message and "again to resume" in str(info.value.hint)
    part = tmp_path / "tiny.gguf.part"
    assert part.read_bytes() == PAYLOAD[: 2**20 + 7]
    assert not (tmp_path / "tiny.gguf").exists()

    result = pull(_entry(), tmp_path, url=url, progress=None)
    assert handler.seen == [None, f"bytes={2**20 + 7}-"]
    assert result.resumed_from == 2**20 + 7
    assert result.downloaded_bytes == len(PAYLOAD) - (2**20 + 7)
    assert result.path.read_bytes() == PAYLOAD and result.verified


def test_a_complete_part_file_is_verified_without_downloading_again(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, handler = _server(start_server)
    (tmp_path / "tiny.gguf.part").write_bytes(PAYLOAD)
    result = pull(_entry(), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)
    assert handler.seen == [f"bytes={len(PAYLOAD)}-"]
    assert result.downloaded_bytes == 0 and result.path.read_bytes() == PAYLOAD


def test_a_server_that_ignores_range_restarts_the_download(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, _ = _server(start_server, ranges=False)
    (tmp_path / "tiny.gguf.part").write_bytes(b"stale bytes from another file")
    result = pull(_entry(), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)
    assert result.resumed_from == 0 and result.path.read_bytes() == PAYLOAD


def test_a_sha256_mismatch_deletes_the_download_and_fails(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, _ = _server(start_server)
    with pytest.raises(ModelUnavailable) as info:
        pull(_entry(sha256="0" * 64), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)
    assert f"expected {'0' * 64}, got {DIGEST}" in info.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_download_that_is_not_gguf_is_deleted(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    server, _ = _server(start_server, payload=b"<html>rate limited</html>")
    with pytest.raises(ModelUnavailable, match="not a GGUF"):
        pull(_entry(sha256=""), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_file_on_the_server_is_a_clear_error(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    class NotFound(FileServer):
        def do_GET(self) -> None:
            self.send_error(404)

    server = start_server(NotFound)
    with pytest.raises(ModelUnavailable, match="HTTP 404"):
        pull(_entry(), tmp_path, url=f"{server.url}/tiny.gguf", progress=None)


def test_no_network_says_so_instead_of_interrupted(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="no network: cannot resolve") as info:
        pull(_entry(), tmp_path, url="http://models.example.invalid/tiny.gguf", progress=None)
    assert "interrupted" not in info.value.message and "--model PATH" in str(info.value.hint)
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelUnavailable, match="no network: 127.0.0.1 refused"):
        pull(_entry(), tmp_path, url=f"http://127.0.0.1:{port}/tiny.gguf", progress=None)


# -- through the command line --------------------------------------------------------------


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(
        '["tiny"]\ndescription = "test model"\n'
        'url = "https://example.invalid/models/tiny-q4.gguf"\n'
        f'sha256 = "{DIGEST}"\n\n'
        '["nodigest"]\ndescription = "no digest yet"\n'
        'url = "https://example.invalid/models/tiny-q4.gguf"\nsha256 = ""\n'
    )
    monkeypatch.setenv("SHELLAGENT_MODEL_CATALOG", str(path))
    return path


def test_model_pull_uses_the_url_base_override_and_shows_progress(
    start_server: Callable[..., Any],
    catalog: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, _ = _server(start_server)
    monkeypatch.setenv("SHELLAGENT_MODEL_URL_BASE", f"{server.url}/mirror")
    assert lookup("tiny").download_url() == f"{server.url}/mirror/tiny-q4.gguf"
    assert main(["model", "pull", "tiny"]) == 0
    out, err = capsys.readouterr()
    assert "pulling tiny [" in err and "100.0%" in err
    assert f"sha256 verified: {DIGEST}" in err
    assert main(["model", "path", "tiny"]) == 0
    assert Path(capsys.readouterr().out.strip()).read_bytes() == PAYLOAD


def test_model_pull_without_a_catalog_digest_prints_the_computed_one(
    start_server: Callable[..., Any], catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = _server(start_server)
    assert main(["model", "pull", "nodigest", "--quiet", "--url", f"{server.url}/x.gguf"]) == 0
    err = capsys.readouterr().err
    assert f"sha256 {DIGEST} (the catalog has no digest for nodigest" in err
    assert "pulling" not in err


def test_model_pull_exits_nonzero_on_a_mismatch(
    start_server: Callable[..., Any], catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = _server(start_server, payload=b"GGUF but different bytes")
    assert main(["model", "pull", "tiny", "-q", "--url", f"{server.url}/tiny.gguf"]) == 3
    assert "sha256 mismatch for tiny" in capsys.readouterr().err
    models = catalog.parent / "data" / "models"
    assert not (models / "tiny.gguf").exists() and not (models / "tiny.gguf.part").exists()


def test_model_list_json_marks_the_embedded_model_present(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["model", "list", "--json"]) == 0
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["smollm2-135m"]["status"] == "embedded"
    assert rows["qwen2.5-coder-1.5b"]["status"] == "-"
    assert rows["qwen2.5-coder-1.5b"]["url"].startswith("https://huggingface.co/Qwen/")


def test_model_path_without_a_name_prints_the_embedded_gguf(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["model", "path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.name.endswith(".gguf") and path.read_bytes()[:4] == b"GGUF"


def test_a_broken_catalog_is_a_config_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('["x"]\ndescription = "d"\nurl = "u"\nsha256 = "abc"\n')
    monkeypatch.setenv("SHELLAGENT_MODEL_CATALOG", str(bad))
    assert main(["model", "list"]) == 2
    assert f"{bad}: model 'x': sha256 must be 64 hex digits" in capsys.readouterr().err
