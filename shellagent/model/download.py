"""Fetching a catalog model: resumable, verified, and never half a file under the real name.

Bytes go to ``NAME.gguf.part`` in the models dir; an interrupted download resumes from its
length with an HTTP Range request. When the transfer completes the file is hashed (the
bytes already on disk are hashed as the resume starts), checked against the catalog's
sha256 and the GGUF magic, and only then renamed to ``NAME.gguf``. A mismatch deletes the
part file. Progress is one plain-text line on stderr, rewritten in place.
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from shellagent.errors import ModelUnavailable
from shellagent.model.catalog import CatalogEntry
from shellagent.model.gguf import GGUF_MAGIC
from shellagent.paths import ensure_private_dir

__all__ = ["PullResult", "pull"]

CHUNK = 1 << 20


@dataclass(frozen=True)
class PullResult:
    path: Path
    sha256: str
    verified: bool  # False when the catalog had no digest to compare with
    downloaded_bytes: int
    resumed_from: int


class _Progress:
    def __init__(self, label: str, total: int, out: TextIO | None) -> None:
        self.label, self.total, self.out = label, total, out
        self.start = time.monotonic()
        self.last = 0.0
        self.fresh = 0

    def update(self, done: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if self.out is None or (not force and now - self.last < 0.25):
            return
        self.last = now
        rate = self.fresh / max(now - self.start, 1e-6) / 1e6
        if self.total:
            pct = min(100.0, 100.0 * done / self.total)
            width = 24
            bar = "#" * int(width * pct / 100)
            line = f"{self.label} [{bar:<{width}}] {pct:5.1f}% {_mb(done)}/{_mb(self.total)}"
        else:
            line = f"{self.label} {_mb(done)}"
        self.out.write(f"\r{line} {rate:.1f} MB/s ")
        self.out.flush()

    def finish(self, done: int) -> None:
        self.update(done, force=True)
        if self.out is not None:
            self.out.write("\n")
            self.out.flush()


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _hash_existing(path: Path) -> tuple[hashlib._Hash, int]:
    digest = hashlib.sha256()
    size = 0
    if path.exists():
        with path.open("rb") as f:
            while block := f.read(CHUNK):
                digest.update(block)
                size += len(block)
    return digest, size


def pull(
    entry: CatalogEntry,
    dest_dir: Path,
    *,
    url: str | None = None,
    progress: TextIO | None = sys.stderr,
    timeout_s: float = 60.0,
) -> PullResult:
    """Download ``entry`` into ``dest_dir/NAME.gguf`` (see the module docstring)."""
    url = url or entry.download_url()
    ensure_private_dir(dest_dir)
    final = dest_dir / entry.filename
    part = dest_dir / f"{entry.filename}.part"
    digest, offset = _hash_existing(part)
    resumed_from = offset

    headers = {"User-Agent": "shellagent"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    total = entry.size_bytes
    received = 0
    bar = _Progress(f"pulling {entry.name}", total, progress)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status = response.status
            length = int(response.headers.get("Content-Length") or 0)
            if offset and status == 200:
                # The server ignored the range: start over.
                digest, offset, resumed_from = hashlib.sha256(), 0, 0
            total = offset + length if length else total
            bar.total = total
            with part.open("ab" if offset else "wb") as out:
                received = _copy(response, out, digest, offset, bar)
                out.flush()
                os.fsync(out.fileno())
            if length and received < length:
                # http.client reports a connection closed early as a normal end of body.
                raise ConnectionError(f"connection closed after {_mb(received)} of {_mb(length)}")
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            pass  # the part file already holds everything: verify it below
        else:
            raise ModelUnavailable(
                f"download of {entry.name} failed: {url} answered HTTP {exc.code} {exc.reason}",
                hint="check the URL (or --url / SHELLAGENT_MODEL_URL_BASE)",
            ) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        size = part.stat().st_size if part.exists() else 0
        unreachable = _unreachable(url, reason) if not received else None
        if unreachable:
            raise ModelUnavailable(
                unreachable,
                hint="connect to the internet and run it again, or download the GGUF "
                "elsewhere and use it with --model PATH",
            ) from None
        raise ModelUnavailable(
            f"download of {entry.name} interrupted at {_mb(size)}: {reason}",
            hint=f"run `shellagent model pull {entry.name}` again to resume",
        ) from None
    finally:
        if received or offset:
            bar.finish(offset + received)
    return _verify_and_install(entry, part, final, digest.hexdigest(), received, resumed_from)


def _unreachable(url: str, reason: object) -> str | None:
    """Why no connection could be made at all (no network, no DNS, nothing listening), or
    None when the failure came after the server answered."""
    host = urllib.parse.urlsplit(url).hostname or url
    if isinstance(reason, socket.gaierror):
        return f"no network: cannot resolve {host} (name lookup failed)"
    if isinstance(reason, ConnectionRefusedError):
        return f"no network: {host} refused the connection"
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"no network: {host} did not answer"
    if isinstance(reason, OSError) and reason.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return f"no network: {host} is unreachable"
    return None


def _copy(
    response: BinaryIO, out: BinaryIO, digest: hashlib._Hash, offset: int, bar: _Progress
) -> int:
    received = 0
    while block := response.read(CHUNK):
        out.write(block)
        digest.update(block)
        received += len(block)
        bar.fresh = received
        bar.update(offset + received)
    return received


def _verify_and_install(
    entry: CatalogEntry, part: Path, final: Path, actual: str, received: int, resumed_from: int
) -> PullResult:
    with part.open("rb") as f:
        magic = f.read(4)
    if entry.sha256 and actual != entry.sha256:
        part.unlink(missing_ok=True)
        raise ModelUnavailable(
            f"sha256 mismatch for {entry.name}: expected {entry.sha256}, got {actual}; "
            "the download was deleted",
            hint="the file on the server differs from the catalog: check the URL or the catalog",
        )
    if magic != GGUF_MAGIC:
        part.unlink(missing_ok=True)
        raise ModelUnavailable(
            f"the download of {entry.name} is not a GGUF file (starts with {magic!r}); "
            "it was deleted",
            hint="the URL probably serves an error page; check it",
        )
    os.replace(part, final)
    return PullResult(
        path=final,
        sha256=actual,
        verified=bool(entry.sha256),
        downloaded_bytes=received,
        resumed_from=resumed_from,
    )
