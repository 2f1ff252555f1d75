"""``env serve``'s token and the runtime directory it goes to (security review 3, H3 and L11).

The review's attack: with no ``XDG_RUNTIME_DIR``, another local user makes the predictable
``/tmp/shellagent-UID`` (mode 777) and an empty ``env-token`` (666) in it first, and reads
the token the server writes there. Here the other user's files are really theirs (made,
then given to another uid) in a scratch stand-in for /tmp, and the runtime directory is
found the way every shellagent process finds it (``paths.runtime_dir``). The same attack
by one unprivileged user on another, through the real CLI, is in ``test_token_users.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellagent import paths
from shellagent.env import TokenFile
from shellagent.errors import EnvironmentProblem, InputError

OTHER = 4242  # another local user (any uid with no other role here)
needs_root = pytest.mark.skipif(os.getuid() != 0, reason="needs root to make another user's files")


@pytest.fixture
def tmp_base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for /tmp (sticky, writable by all) where the runtime directory falls back
    to, with no XDG or /run/user directory to use instead."""
    base = Path(tempfile.mkdtemp(prefix="sa-tmp-", dir="/tmp"))
    base.chmod(0o1777)
    monkeypatch.delenv("SHELLAGENT_RUNTIME_DIR")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(paths, "RUN_USER", base / "no-run-user")
    monkeypatch.setattr(paths, "TMP_BASE", base)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def plant(base: Path, owner: int, dir_mode: int = 0o777) -> tuple[Path, Path]:
    """What the other user makes first: the predictable directory and an empty token."""
    squat = base / f"shellagent-{os.getuid()}"
    squat.mkdir()
    squat.chmod(dir_mode)
    planted = squat / "env-token"
    planted.touch()
    planted.chmod(0o666)
    for path in (squat, planted):
        os.chown(path, owner, owner)
    return squat, planted


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@needs_root
def test_the_review_repro_a_token_dir_made_by_another_user_is_never_written(
    tmp_base: Path,
) -> None:
    squat, planted = plant(tmp_base, OTHER)
    token_file = TokenFile.open(None)
    token_file.write("s3cret")
    try:
        written = token_file.path
        assert written.parent != squat and written.parent.parent == tmp_base
        assert written.parent.name.startswith(f"shellagent-{os.getuid()}-")
        assert planted.read_text() == "" and os.listdir(squat) == ["env-token"]
        assert written.read_text() == "s3cret\n"
        assert (mode(written), mode(written.parent)) == (0o600, 0o700)
        assert os.lstat(written.parent).st_uid == os.getuid()
        # Everyone who asks gets the same place: the daemon, ask and the next env serve.
        assert paths.runtime_dir() == written.parent
        pointer = paths.state_dir() / f"runtime-dir.{socket.gethostname()}"
        assert pointer.read_text().strip() == str(written.parent) and mode(pointer) == 0o600
    finally:
        token_file.remove()
    assert not written.exists()


@needs_root
@pytest.mark.parametrize("taken", ["another user's directory", "a symbolic link", "a file"])
def test_a_predictable_runtime_dir_that_is_not_ours_moves_to_a_private_one(
    tmp_base: Path, taken: str
) -> None:
    squat = tmp_base / f"shellagent-{os.getuid()}"
    mine = tmp_base / "mine"
    mine.mkdir(mode=0o700)
    if taken == "another user's directory":
        plant(tmp_base, OTHER, dir_mode=0o700)
    elif taken == "a symbolic link":
        squat.symlink_to(mine)  # even a link to a directory of ours: never followed
    else:
        squat.write_text("")
    found = paths.private_runtime_dir()
    assert found != squat and found.parent == tmp_base and mode(found) == 0o700
    assert paths.runtime_dir() == found  # remembered, not made again
    assert os.listdir(mine) == []


@needs_root
def test_a_remembered_dir_that_was_taken_meanwhile_is_not_used(tmp_base: Path) -> None:
    plant(tmp_base, OTHER)
    first = paths.runtime_dir()
    shutil.rmtree(first)  # /tmp cleaned (tmpfiles) and the name taken by the other user
    first.mkdir(mode=0o700)
    os.chown(first, OTHER, OTHER)
    second = paths.runtime_dir()
    assert second != first and os.lstat(second).st_uid == os.getuid()


def test_the_places_a_sandbox_hides_are_found_without_making_any(tmp_base: Path) -> None:
    default = tmp_base / f"shellagent-{os.getuid()}"
    assert paths.runtime_dir(create=False) == default and paths.own_dirs()[-1] == default
    assert os.listdir(tmp_base) == []  # a sandbox start leaves nothing in /tmp
    if os.getuid() != 0:
        return
    plant(tmp_base, OTHER)
    assert paths.runtime_dir(create=False) == default  # nothing remembered yet
    made = paths.runtime_dir()
    assert made != default and paths.own_dirs()[-1] == made


def test_the_predictable_dir_is_used_and_made_private_when_it_is_ours(tmp_base: Path) -> None:
    mine = tmp_base / f"shellagent-{os.getuid()}"
    assert paths.private_runtime_dir() == mine and mode(mine) == 0o700
    mine.chmod(0o777)  # only its owner can have done this
    assert paths.private_runtime_dir() == mine and mode(mine) == 0o700
    assert not (paths.state_dir() / f"runtime-dir.{socket.gethostname()}").exists()


@needs_root
def test_an_xdg_runtime_dir_of_another_user_is_not_used(
    tmp_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``su`` and ``sudo -E`` keep the other user's XDG_RUNTIME_DIR."""
    theirs = tmp_base / "their-xdg"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, OTHER, OTHER)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(theirs))
    assert paths.runtime_dir() == tmp_base / f"shellagent-{os.getuid()}"
    own = tmp_base / "own-xdg"
    own.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(own))
    assert paths.runtime_dir() == own / "shellagent"


def test_the_state_dir_without_platformdirs_is_platformdirs_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SHELLAGENT_STATE_DIR")
    for xdg in (None, str(tmp_path / "state"), " "):
        if xdg is None:
            monkeypatch.delenv("XDG_STATE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_STATE_HOME", xdg)
        assert paths._state_dir_stdlib() == paths.state_dir()


def test_a_stale_token_left_by_sigkill_is_replaced_not_written_through() -> None:
    runtime = paths.private_runtime_dir()
    stale = runtime / "env-token"
    stale.write_text("old-token\n")
    stale.chmod(0o644)
    held = stale.open()  # whoever opened the old file reads nothing new through it
    old_inode = os.lstat(stale).st_ino
    token_file = TokenFile.open(None)
    token_file.write("new-token")
    assert stale.read_text() == "new-token\n" and mode(stale) == 0o600
    assert os.lstat(stale).st_ino != old_inode and held.read() == "old-token\n"
    held.close()
    token_file.remove()
    assert not stale.exists()


def test_at_exit_a_token_file_that_is_no_longer_ours_is_left_alone(tmp_path: Path) -> None:
    place = tmp_path / "tokens"
    place.mkdir(mode=0o700)
    token_file = TokenFile.open(place / "token")
    token_file.write("first")
    (place / "other").write_text("a later server's\n")
    os.replace(place / "other", place / "token")
    token_file.remove()
    assert (place / "token").read_text() == "a later server's\n"


@pytest.mark.parametrize(
    ("layout", "says"),
    [
        ("dir 1777", "other users can write it (mode 1777)"),
        ("dir 0770", "other users can write it (mode 0770)"),
        ("parent 0777", "other users can write its parent {parent} (mode 0777)"),
        ("dir of another user", f"it belongs to uid {OTHER}"),
        ("parent of another user", f"its parent {{parent}} belongs to uid {OTHER}"),
    ],
)
def test_a_token_file_where_others_can_write_is_refused_before_anything_is_written(
    tmp_path: Path, layout: str, says: str
) -> None:
    parent = tmp_path / "parent"
    directory = parent / "dir"
    directory.mkdir(parents=True)
    what, _, how = layout.rpartition(" ")
    target = directory if layout.startswith("dir") else parent
    if how == "user":
        if os.getuid() != 0:
            pytest.skip("needs root to make another user's directory")
        os.chown(target, OTHER, OTHER)
    else:
        target.chmod(int(how, 8))
    with pytest.raises(InputError) as refused:
        TokenFile.open(directory / "token")
    assert refused.value.message == (
        f"will not write the token into {directory}: {says.format(parent=parent)}"
    )
    assert "only you can write" in (refused.value.hint or "")
    assert os.listdir(directory) == []


def test_a_token_file_in_a_link_to_a_private_dir_is_written_there(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    token_file = TokenFile.open(tmp_path / "link" / "token")
    token_file.write("x")
    token_file.remove()
    assert os.listdir(real) == []


def test_an_unusable_runtime_dir_is_an_environment_problem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    runtime = tmp_path / "run-link"
    runtime.symlink_to(tmp_path)
    monkeypatch.setenv("SHELLAGENT_RUNTIME_DIR", str(runtime))
    with pytest.raises(EnvironmentProblem) as refused:
        TokenFile.open(None)
    assert "it is a symbolic link" in refused.value.message
    assert "SHELLAGENT_RUNTIME_DIR" in (refused.value.hint or "")


def test_the_cli_refuses_a_token_file_others_can_write_in_one_line(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "t", "task": "x", "setup_commands": [], "success_condition": "false"}\n'
    )
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    out = subprocess.run(
        [sys.executable, "-m", "shellagent", "env", "serve", str(tasks), "--port", "0"]
        + ["--token-file", str(shared / "token")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        f"error: will not write the token into {shared}: other users can write it (mode 1777) "
        "(give --token-file a file in a directory only you can write, such as your home)\n"
    )
    assert os.listdir(shared) == []
