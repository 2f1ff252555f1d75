"""A repository made during a session (H3, `.git` absent at the start): what git on the host
would run from it is gone after each command, while the repository keeps working."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.sandbox import Sandbox, get_profile

Runner = Callable[..., list[dict[str, Any]]]

PLANT = (
    "git init -q && git config core.fsmonitor 'touch {pwned}; false' && "
    "git config alias.st '!touch {pwned}' && git config include.path /tmp/x.cfg && "
    "git config core.hooksPath .h && git remote add origin https://example.com/r.git && "
    "printf '#!/bin/sh\\ntouch {pwned}\\n' > .git/hooks/post-checkout && "
    "chmod +x .git/hooks/post-checkout && echo planted"
)


def _host_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def test_a_repository_made_in_the_session_loses_what_would_run_on_the_host(
    workspace: Path,
) -> None:
    fresh = workspace / "fresh"
    fresh.mkdir()
    pwned = workspace.parent / "PWNED_fresh_repo"
    with Sandbox(get_profile("default", cwd=fresh), timeout=10) as s:
        planted = s.run(PLANT.format(pwned=pwned))
        assert "planted" in planted.output
        for what in ("hooks/post-checkout", "core.fsmonitor", "alias.st", "include.path"):
            assert what in planted.note, (what, planted.note)
        work = s.run(
            "echo x > f && git add f && git -c user.email=a@b -c user.name=a commit -qm one "
            "&& git log --oneline | wc -l && git remote get-url origin"
        )
        assert work.output == "1\nhttps://example.com/r.git\n", work.output  # still a repo
        assert work.note == ""  # nothing new to remove: everyday git is left alone
    config = (fresh / ".git" / "config").read_text()
    assert "fsmonitor" not in config and "hooksPath" not in config and "include" not in config
    assert not (fresh / ".git" / "hooks" / "post-checkout").exists()
    for args in (("status",), ("st",), ("checkout", "-q", "-b", "topic")):
        _host_git(fresh, *args)
    assert not pwned.exists()


def test_a_gitdir_pointer_made_in_the_session_is_removed(workspace: Path) -> None:
    fresh = workspace / "fresh2"
    fresh.mkdir()
    with Sandbox(get_profile("default", cwd=fresh), timeout=10) as s:
        result = s.run("echo 'gitdir: /tmp/elsewhere' > .git && echo made")
        assert "made" in result.output and ".git" in result.note
        assert s.run("test -e .git").exit_code != 0
        assert s.run("echo plain > notes && cat notes").output == "plain\n"  # the control


def test_the_sweep_never_follows_a_symlink_out_of_the_repository(workspace: Path) -> None:
    fresh, outside = workspace / "fresh3", workspace / "outside"
    fresh.mkdir()
    outside.mkdir()
    (outside / "keep-me").write_text("mine\n")
    with Sandbox(get_profile("default", cwd=fresh), timeout=10) as s:
        s.run("git init -q && rm -rf .git/hooks && ln -s ../../outside .git/hooks")
    assert (outside / "keep-me").read_text() == "mine\n"
    assert not (fresh / ".git" / "hooks").exists()  # the link itself went


def test_a_repository_that_existed_at_the_start_is_not_rewritten(workspace: Path) -> None:
    _host_git(workspace, "config", "alias.lg", "!git log --oneline")
    before = (workspace / ".git" / "config").read_text()
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        result = s.run("echo y > g && git add g && echo staged")
        assert result.output == "staged\n" and result.note == ""
    assert (workspace / ".git" / "config").read_text() == before


def test_an_unprivileged_users_new_repository_is_swept_too(as_nobody: Runner) -> None:
    work: Path = as_nobody.workdir  # type: ignore[attr-defined]
    results = as_nobody([PLANT.format(pwned="/tmp/PWNED_nobody"), "git status --short; true"])
    assert "planted" in results[0]["output"] and "core.fsmonitor" in results[0]["note"]
    assert "fsmonitor" not in (work / ".git" / "config").read_text()
