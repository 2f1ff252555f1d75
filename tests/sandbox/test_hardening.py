"""The second-pass sandbox findings, each probe beside its positive control, as root and as
an unprivileged user: kernel tunables (C1), the caller's environment (H1), a throwaway root
isolated from the host (item 9) and without root-only host files (M1)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.errors import UsageError
from shellagent.sandbox import Sandbox, get_profile

Runner = Callable[..., list[dict[str, Any]]]

# A harmless write: core_pattern's own value, written back. Exit 0 is a breach.
WRITE_SYSCTL = (
    'v=$(cat /proc/sys/kernel/core_pattern) && printf "%s\\n" "$v" > '
    "/proc/sys/kernel/core_pattern && echo WRITE-OK"
)
KERNEL_VIEWS = (
    "cat /proc/keys /proc/timer_list 2>/dev/null | wc -c; ls /proc/acpi 2>/dev/null | wc -l"
)
READS_OK = "cat /proc/sys/kernel/ostype; cat /proc/self/stat | cut -d' ' -f1 | grep -c ."


@pytest.fixture(params=["default", "ephemeral"])
def any_profile(request: pytest.FixtureRequest, workspace: Path) -> Sandbox:
    profile = get_profile(request.param, cwd=workspace)
    session = Sandbox(profile, timeout=10)
    request.addfinalizer(session.close)
    return session


def test_kernel_tunables_are_read_only_and_debug_views_hidden(any_profile: Sandbox) -> None:
    write = any_profile.run(WRITE_SYSCTL)
    assert write.exit_code != 0 and "WRITE-OK" not in write.output
    assert "Read-only file system" in write.output
    for trigger in ("/proc/sysrq-trigger", "/proc/sys/vm/drop_caches"):
        if Path(trigger).exists():
            assert any_profile.run(f"echo 1 > {trigger}").exit_code != 0
    views = any_profile.run(KERNEL_VIEWS)
    assert views.output.split() == ["0", "0"]
    reads = any_profile.run(READS_OK)  # positive control: /proc still works
    assert reads.exit_code == 0 and reads.output.split() == ["Linux", "1"]


def test_kernel_tunables_are_read_only_for_an_unprivileged_user(as_nobody: Runner) -> None:
    for profile in ("default", "ephemeral"):
        write, reads = as_nobody([WRITE_SYSCTL, READS_OK], profile=profile)
        assert write["exit_code"] != 0 and "WRITE-OK" not in write["output"]
        assert reads["exit_code"] == 0 and reads["output"].split() == ["Linux", "1"]


ENVIRON_PROBE = (
    "for p in /proc/[0-9]*; do { tr '\\0' '\\n' < $p/environ; } 2>/dev/null; done "
    "| grep -c -E 'sk-FAKE|AWSFAKE' || true"
)


def test_no_process_in_the_sandbox_holds_the_callers_environment(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-0123456789")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "AWSFAKE0123456789")
    for name in ("default", "ephemeral"):
        with Sandbox(get_profile(name, cwd=workspace), timeout=10) as s:
            own = s.run("env")
            assert own.exit_code == 0 and "PATH=" in own.output  # readable: the control
            assert "sk-FAKE" not in own.output and "AWSFAKE" not in own.output
            pid1 = s.run("tr '\\0' '\\n' < /proc/1/environ")  # the driver: not even readable
            assert pid1.exit_code != 0 and "FAKE" not in pid1.output
            assert s.run(ENVIRON_PROBE).output.strip() == "0"


# -- a throwaway root that does not change under a session (item 9) ------------------------


@pytest.fixture
def host_files() -> Any:
    """Files created in the host's /etc and /var by the test, removed afterwards."""
    made: list[Path] = []

    def make(path: str, text: str, mode: int = 0o644) -> Path:
        p = Path(path)
        p.write_text(text)
        p.chmod(mode)
        made.append(p)
        return p

    yield make
    for p in made:
        p.unlink(missing_ok=True)


@pytest.mark.skipif(os.getuid() != 0, reason="writes to the host's /etc and /var")
def test_a_host_write_during_a_session_does_not_show_in_the_throwaway_root(
    host_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_ROOTFS_DIR", str(tmp_path / "rootfs"))
    tag = uuid.uuid4().hex[:8]
    host_files(f"/etc/sa-before-{tag}", "there before\n")
    with Sandbox("ephemeral", timeout=10) as s:
        assert s.run(f"ls /etc/sa-later-{tag}").exit_code != 0  # looked up before it exists
        host_files(f"/etc/sa-later-{tag}", "host wrote this\n")
        host_files(f"/var/lib/sa-later-{tag}", "host wrote this\n")
        later = s.run(f"cat /etc/sa-later-{tag} /var/lib/sa-later-{tag}; ls /etc | grep -c {tag}")
        assert "host wrote this" not in later.output
        assert later.output.strip().endswith("1")  # only the file that was there before
        before = s.run(f"cat /etc/sa-before-{tag}")  # positive control
        assert before.exit_code == 0 and before.output == "there before\n"
        edit = s.run(f"echo more >> /etc/sa-before-{tag} && cat /etc/sa-before-{tag}")
        assert edit.output == "there before\nmore\n"  # writable in place, inside only
    assert Path(f"/etc/sa-before-{tag}").read_text() == "there before\n"


@pytest.mark.skipif(os.getuid() != 0, reason="makes root-only files in the host's /etc")
def test_files_only_root_may_read_are_not_in_the_throwaway_root(
    host_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_ROOTFS_DIR", str(tmp_path / "rootfs"))
    tag = uuid.uuid4().hex[:8]
    host_files(f"/etc/sa-secret-{tag}", "ROOT-ONLY-SECRET\n", mode=0o600)
    host_files(f"/etc/sa-public-{tag}", "public\n", mode=0o644)
    with Sandbox("ephemeral", timeout=10) as s:
        secret = s.run(f"cat /etc/sa-secret-{tag}; stat -c %s /etc/sa-secret-{tag}")
        assert "ROOT-ONLY-SECRET" not in secret.output and secret.output.strip() == "0"
        assert s.run(f"cat /etc/sa-public-{tag}").output == "public\n"
        passwords = s.run("cat /var/cache/debconf/passwords.dat 2>/dev/null | wc -c")
        assert passwords.output.strip() == "0"


def test_a_snapshot_in_use_is_kept_and_an_unused_old_one_removed(tmp_path: Path) -> None:
    from shellagent.sandbox import snapshot

    first = snapshot.acquire(tmp_path, now=1000.0)
    again = snapshot.acquire(tmp_path, now=1000.0 + snapshot.MAX_AGE_S / 2)
    assert again.root == first.root  # fresh enough: reused
    again.release()
    newer = snapshot.acquire(tmp_path, now=1000.0 + snapshot.MAX_AGE_S * 2)
    assert newer.root != first.root and first.root.exists()  # held by a running session
    first.release()
    latest = snapshot.acquire(tmp_path, now=1000.0 + snapshot.MAX_AGE_S * 2 + 1)
    assert latest.root == newer.root and not first.root.exists()
    for held in (newer, latest):
        held.release()


# -- persistence in the workspace (H3, M5) ----------------------------------------------


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True)


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / "notes.txt").write_text("hello\n")
    _git(workspace, "add", "notes.txt")
    _git(workspace, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    sm = workspace / ".git" / "modules" / "sm"
    (sm / "hooks").mkdir(parents=True)
    (sm / "config").write_text("[core]\n")
    return workspace


def test_everyday_git_works_but_git_code_paths_stay_read_only(repo: Path) -> None:
    with Sandbox(get_profile("default", cwd=repo), timeout=10) as s:
        everyday = s.run(
            "git checkout -qb topic && echo x >> notes.txt && git add notes.txt && "
            "git -c user.email=a@b -c user.name=a commit -qm two && git stash list && "
            "git tag v1 && git branch && echo EVERYDAY-OK"
        )
        assert "EVERYDAY-OK" in everyday.output, everyday.output
        for probe in (
            "echo x > .git/modules/sm/hooks/post-checkout",
            "printf '[core]\\n\\tfsmonitor=touch P\\n' >> .git/modules/sm/config",
            "echo '*' > .git/info/exclude",
            "mkdir -p .git/worktrees/evil",
            "echo x > .git/hooks/pre-commit",
            "echo '[core]' >> .git/config",
            "mv .git .gitx",
            "touch .envrc",
            "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
            "mkdir .devcontainer/x",
            "touch .idea/workspace.xml",
        ):
            result = s.run(probe)
            assert result.exit_code != 0, probe
        assert (repo / ".git" / "HEAD").exists() and not (repo / ".gitx").exists()
    for name in (".envrc", ".vscode", ".devcontainer", ".idea"):
        assert not (repo / name).exists(), name  # mount points are removed afterwards


def test_a_commondir_redirect_is_removed_and_never_reaches_host_git(repo: Path) -> None:
    attack = (
        "mkdir evilcommon && cp -r .git/objects .git/refs evilcommon/ && "
        "printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' > evilcommon/config && "
        "echo ../evilcommon > .git/commondir && echo planted"
    )
    pwned = repo.parent / "PWNED_commondir"
    with Sandbox(get_profile("default", cwd=repo), timeout=10) as s:
        result = s.run(attack % pwned)
        assert "planted" in result.output  # the write itself is possible ...
        assert "removed" in result.note and "commondir" in result.note  # ... and undone
    assert not (repo / ".git" / "commondir").exists()
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=True)
    assert not pwned.exists()


def test_a_nested_repository_cannot_be_renamed_away_and_replaced(workspace: Path) -> None:
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        assert s.run("mv vendor/lib vendor/lib2").exit_code != 0
        assert s.run("mv vendor vendor2").exit_code != 0
        assert s.run("echo x > vendor/lib/.git/hooks/post-checkout").exit_code != 0
        assert s.run("echo ok > vendor/lib/file && cat vendor/lib/file").output == "ok\n"


def test_startup_places_refuse_grants_or_stay_read_only(home: Path) -> None:
    config = home / ".config"
    (config / "autostart").mkdir(parents=True)
    with Sandbox(get_profile("default", cwd=config), timeout=10) as s:
        write = s.run("mkdir -p systemd/user && echo '[Desktop Entry]' > autostart/x.desktop")
        assert write.exit_code != 0
        assert s.run("ls autostart && echo readable").exit_code == 0  # still readable
    assert not (config / "autostart" / "x.desktop").exists()
    local_bin = home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    for grant in (local_bin, config):
        with pytest.raises(UsageError, match="refusing to make"):
            Sandbox(get_profile("default", cwd=home).with_options(writable=[grant]))
    project = home / "project2"
    (project / "bin").mkdir(parents=True)
    path_dirs = f"{project / 'bin'}:/usr/bin:/bin"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", path_dirs)
        with Sandbox(get_profile("default", cwd=project), timeout=10) as s:
            assert s.run("echo x > bin/ls").exit_code != 0  # a bin directory on PATH
            assert s.run("echo x > other && echo ok").output == "ok\n"


def test_remove_created_never_follows_a_symlinked_parent(tmp_path: Path) -> None:
    from shellagent.sandbox.mounts import MountPlan

    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (elsewhere / "victim").mkdir(parents=True)
    ws.mkdir()
    (ws / "dir").symlink_to(elsewhere)  # was a real directory when the plan was made
    plan = MountPlan(created=[ws / "dir" / "victim"])
    plan.remove_created()
    assert (elsewhere / "victim").is_dir()


# -- secrets that were not masked (M1) ----------------------------------------------------

HOME_FAKES = (
    ".config/git/credentials",
    ".cache/huggingface/token",
    ".config/containers/auth.json",
    ".m2/settings.xml",
    ".config/glab-cli/config.yml",
    ".codex/auth.json",
    ".authinfo",
    ".s3cfg",
    ".boto",
    ".zhistory",
    ".histfile",
    ".local/share/atuin/history.db",
    ".lesshst",
    ".node_repl_history",
    ".sqlite_history",
    ".viminfo",
    "snap/firefox/common/.mozilla/firefox/p/cookies.sqlite",
    ".var/app/org.chromium.Chromium/config/chromium/Default/Cookies",
    ".config/Code/User/globalStorage/state.vscdb",
    "backup/.ssh/id_ed25519",
    # age keys of sops, wallets, AI and cloud clients' tokens, mail passwords
    ".config/sops/age/keys.txt",
    ".config/solana/id.json",
    ".config/github-copilot/apps.json",
    ".gemini/oauth_creds.json",
    ".databrickscfg",
    ".gradle/gradle.properties",
    ".config/pip/pip.conf",
    ".msmtprc",
    ".vscode-server/data/User/globalStorage/state.vscdb",
)
WORKSPACE_FAKES = (
    "a/b/c/d/.env",
    "node_modules/x/.env",
    "prod.env",
    "credentials.json",
    "service-account.json",
    "terraform.tfstate",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "secrets.yaml",
    ".dev.vars",
    "key.PEM",
    "ID_RSA",
)


def test_more_secrets_are_masked_by_place_and_by_name(home: Path, workspace: Path) -> None:
    for rel in HOME_FAKES:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET-{rel}\n")
    for rel in WORKSPACE_FAKES:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(f"SECRET-{rel}\n")
    os.link(home / ".ssh" / "id_rsa", workspace / "innocent.txt")  # a hard link to a key
    (workspace / "ordinary.txt").write_text("ordinary\n")
    files = [home / rel for rel in HOME_FAKES] + [workspace / rel for rel in WORKSPACE_FAKES]
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        for path in [*files, workspace / "innocent.txt"]:
            out = s.run(f"cat '{path}' 2>/dev/null").output
            assert "SECRET" not in out and "PRIVATE-KEY" not in out, path
        assert s.run("cat ordinary.txt").output == "ordinary\n"  # positive control
        assert s.run("cat ~/notes.txt").output == "ordinary notes"


def test_git_code_paths_stay_read_only_for_an_unprivileged_user(as_nobody: Runner) -> None:
    work: Path = as_nobody.workdir  # type: ignore[attr-defined]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["chown", "-R", "65534:65534", str(work)], check=True)
    probes = [
        "echo x > .git/hooks/pre-commit",
        "echo '[core]' >> .git/config",
        "mv .git .gitx",
        "touch .envrc",
        "echo ../x > .git/commondir; echo planted",
        "git status --short && echo x > f && git add f && echo GIT-OK",
    ]
    results = as_nobody(probes)
    assert all(r["exit_code"] != 0 for r in results[:4]), results
    assert "removed" in results[4]["note"] and not (work / ".git" / "commondir").exists()
    assert "GIT-OK" in results[5]["output"]


def test_paths_the_user_lists_in_config_are_hidden_too(home: Path, workspace: Path) -> None:
    from shellagent import config

    (home / "clients").mkdir()
    (home / "clients" / "contract.txt").write_text("CONFIDENTIAL\n")
    (home / "public.txt").write_text("public\n")
    config.set_value("sandbox.hide", '["~/clients"]')
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        assert "CONFIDENTIAL" not in s.run("cat ~/clients/contract.txt").output
        assert s.run("cat ~/public.txt").output == "public\n"
    with pytest.raises(UsageError, match="protected"):
        Sandbox(get_profile("default", cwd=workspace).with_options(writable=[home / "clients"]))
