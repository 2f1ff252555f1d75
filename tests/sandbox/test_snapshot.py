"""The frozen lower layer of a throwaway root (item 9): reused while the host's /etc does not
change, rebuilt when it does, never changed under a session that holds it. A fake host
tree stands in for / so the host's own /etc (other programs write to it) plays no part."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shellagent.sandbox import snapshot


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "etc" / "app").mkdir(parents=True)
    (root / "etc" / "hosts").write_text("127.0.0.1 localhost\n")
    (root / "var" / "log").mkdir(parents=True)
    (root / "var" / "log" / "syslog").write_text("boot\n")
    return root


def test_a_snapshot_is_reused_until_etc_changes_then_rebuilt(host: Path, tmp_path: Path) -> None:
    base, t0 = tmp_path / "rootfs", 1_000_000.0
    first = snapshot.acquire(base, now=t0, source=host)
    assert (first.root / "etc" / "hosts").read_text() == "127.0.0.1 localhost\n"
    (host / "var" / "log" / "new.log").write_text("the host's running state\n")
    again = snapshot.acquire(base, now=t0 + snapshot.RECHECK_S + 1, source=host)
    assert again.root == first.root  # /var changes alone do not rebuild
    (host / "etc" / "app" / "added.conf").write_text("x = 1\n")
    soon = snapshot.acquire(base, now=t0 + snapshot.RECHECK_S + 2, source=host)
    assert soon.root == first.root  # looked at a moment ago: not looked at again yet
    later = snapshot.acquire(base, now=t0 + 2 * snapshot.RECHECK_S + 3, source=host)
    assert later.root != first.root
    assert (later.root / "etc" / "app" / "added.conf").read_text() == "x = 1\n"
    assert not (first.root / "etc" / "app" / "added.conf").exists()  # held: unchanged
    for held in (first, again, soon, later):
        held.release()


def test_a_removed_or_renamed_file_in_etc_counts_as_a_change(host: Path) -> None:
    before = snapshot.fingerprint(host / "etc")
    assert snapshot.fingerprint(host / "etc") == before  # stable while nothing changes
    (host / "etc" / "hosts").rename(host / "etc" / "hosts.old")
    renamed = snapshot.fingerprint(host / "etc")
    assert renamed != before
    (host / "etc" / "hosts.old").unlink()
    assert snapshot.fingerprint(host / "etc") not in (before, renamed)


def test_a_snapshot_older_than_its_age_limit_is_rebuilt(host: Path, tmp_path: Path) -> None:
    base, t0 = tmp_path / "rootfs", 2_000_000.0
    first = snapshot.acquire(base, now=t0, source=host)
    first.release()
    aged = snapshot.acquire(base, now=t0 + snapshot.MAX_AGE_S + 1, source=host)
    assert aged.root != first.root and not first.root.exists()  # unused: deleted
    aged.release()


@pytest.mark.skipif(os.getuid() != 0, reason="files of other owners need root to make")
def test_unreadable_files_keep_their_names_but_not_their_contents(
    host: Path, tmp_path: Path
) -> None:
    secret = host / "etc" / "app" / "secret.key"
    secret.write_text("ROOT-ONLY\n")
    secret.chmod(0o600)
    private = host / "var" / "lib" / "private"
    private.mkdir(parents=True)
    (private / "state").write_text("PRIVATE-STATE\n")
    private.chmod(0o700)
    held = snapshot.acquire(tmp_path / "rootfs", source=host)
    copy = held.root / "etc" / "app" / "secret.key"
    assert copy.exists() and copy.stat().st_size == 0 and oct(copy.stat().st_mode)[-3:] == "600"
    assert list((held.root / "var" / "lib" / "private").iterdir()) == []
    assert (held.root / "var" / "log" / "syslog").read_text() == "boot\n"  # the control
    held.release()


def test_a_cache_inside_the_copied_tree_is_not_copied_into_itself(host: Path) -> None:
    """A home under /var (e.g. /var/tmp/someone) puts the cache inside /var: the build must
    leave its own directory out instead of copying it into itself until names overflow."""
    base = host / "var" / "tmp" / "user" / ".cache" / "rootfs"
    held = snapshot.acquire(base, now=1_000_000.0, source=host)
    try:
        assert (held.root / "var" / "log" / "syslog").read_text() == "boot\n"
        assert (held.root / "var" / "tmp" / "user" / ".cache").is_dir()
        assert not (held.root / "var" / "tmp" / "user" / ".cache" / "rootfs").exists()
    finally:
        held.release()
