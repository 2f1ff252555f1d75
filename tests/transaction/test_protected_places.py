"""One list of places that run code later: the policy denies writes there, the sandbox binds
them read-only, the apply holds them back until the user names them; built from the
resolved home directory (review 2: H1, H2, L6, L7)."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

import pytest

from shellagent import protected
from shellagent.policy.pathclass import Places
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.mounts import default_plan
from shellagent.sandbox.profiles import Overlay
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, Baseline, apply, held_back
from shellagent.transaction.guard import Guard


def sample(pattern: str) -> str:
    """A concrete path for a STARTUP pattern (``*`` filled in)."""
    return pattern.rstrip("/").replace("*", "zz")


def reasons_for(home: Path, rel: str) -> str | None:
    why = Guard(home).reason(protected.real_home(home) / rel)
    return None if why is None else why.tier


def test_the_policy_the_sandbox_and_the_apply_protect_the_same_places(
    home: Path, outside_tmp: Path
) -> None:
    real = protected.real_home(home)
    for pattern in protected.STARTUP:
        place = real / sample(pattern)
        place.parent.mkdir(parents=True, exist_ok=True)
        if pattern.endswith("/"):
            place.mkdir(exist_ok=True)
        elif not place.exists():
            place.write_text("x\n")
    upper, work = outside_tmp / "upper", outside_tmp / "work"
    upper.mkdir()
    work.mkdir()
    plan = default_plan((), None, False, overlays=(Overlay(real, upper, work),))
    bound = {plan.args[i + 1] for i, a in enumerate(plan.args[:-2]) if a == "--ro-bind"} | {
        plan.args[i + 1] for i, a in enumerate(plan.args[:-1]) if a == "--tmpfs"
    }
    places = Places(str(home))
    for pattern in protected.STARTUP:
        rel = sample(pattern)
        below = [rel, f"{rel}/zz.conf"] if pattern.endswith("/") else [rel]
        for r in below:
            assert "protected" in places.classify(str(home / r)), f"policy: {r}"
            assert reasons_for(home, r) in ("startup", "workspace"), f"apply: {r}"
        assert str(real / rel) in bound, f"sandbox: {rel}"
    # ... and in any tree: workspace hooks and git's code paths
    for rel in (
        "proj/.envrc",
        "proj/.vscode/tasks.json",
        "proj/.git/hooks/pre-commit",
        "proj/.git/config",
        "proj/.git/info/attributes",
        "proj/.git/commondir",
    ):
        assert "protected" in places.classify(str(home / rel)), rel
        assert reasons_for(home, rel) in ("git", "workspace"), rel
    # ordinary work is none of these
    for rel in ("Documents/notes.txt", "proj/src/main.py", "proj/.git/objects/ab/cd"):
        assert "protected" not in places.classify(str(home / rel)), rel
        assert reasons_for(home, rel) is None, rel


def test_settings_in_home_are_held_back_but_data_directories_are_not(home: Path) -> None:
    for rel in (
        ".config/someapp/settings.ini",
        ".local/share/someapp/plugin.js",
        ".foorc",
        ".cargo/config.toml",
        ".config/pip/pip.conf",
        ".npmrc",
    ):
        assert reasons_for(home, rel) in ("config", "startup", "secret"), rel
    for rel in (".cache/pip/x.whl", ".local/state/app/history", "Documents/.hidden/x"):
        assert reasons_for(home, rel) is None, rel


def test_a_path_that_reaches_home_another_way_is_known_by_its_inode(home: Path) -> None:
    # /proc/self/root/<home> is the home directory under another name: no string test
    # can see it, the (st_dev, st_ino) of the parent does.
    alias = Path("/proc/self/root") / home.resolve().relative_to("/")
    assert Guard(home).reason(alias / ".bash_aliases") is not None
    assert Guard(home).reason(alias / "Documents" / "x.txt") is None


def test_an_unreadable_directory_on_path_never_stops_a_session(
    home: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = outside_tmp / "locked"
    (locked / "bin").mkdir(parents=True)
    locked.chmod(0o000)
    try:
        monkeypatch.setenv("PATH", f"{locked / 'bin'}:/usr/bin:/bin")
        assert protected.path_dirs(home)  # no error
        with Sandbox(get_profile("default", cwd=home / "Documents"), timeout=10) as s:
            assert s.run("echo ok").output == "ok\n"
    finally:
        locked.chmod(0o755)


def _overlay_session(home: Path, cwd: Path) -> tuple[Workspace, Sandbox]:
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [home], workdir=cwd)
    profile = dataclasses.replace(
        get_profile("default", cwd=cwd), writable=(), overlays=ws.overlays()
    )
    return ws, Sandbox(profile, timeout=10)


REVIEW_H1 = (
    ".bash_aliases",
    ".bashrc.d/zz.sh",
    ".local/lib/python3.11/site-packages/zz.pth",
    ".local/lib/python3.11/site-packages/usercustomize.py",
    ".local/share/systemd/user/zz.service",
    ".xsession",
    ".kshrc",
    ".cshrc",
    ".local/share/dbus-1/services/org.zz.service",
    ".ipython/profile_default/startup/00.py",
    ".config/plasma-workspace/env/zz.sh",
    ".vimrc",
    ".tmux.conf",
    ".gdbinit",
    ".mailcap",
    ".cargo/config.toml",
    ".cargo/env",
    ".config/pip/pip.conf",
    ".config/autostart/x.desktop",
    ".envrc",
    ".zz-new-tool-rc",
)


@pytest.mark.parametrize("rel", REVIEW_H1)
def test_every_startup_place_of_the_review_is_held_back_until_named(home: Path, rel: str) -> None:
    ws, s = _overlay_session(home, home / "Documents")
    with s:
        result = s.run(
            f"python3 -c 'import os,sys; p=os.path.expanduser(sys.argv[1]); "
            f'os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "a").write("x\\n")\' '
            f"'~/{rel}' && echo fine > fine.txt"
        )
    changes = compute(ws)
    if result.exit_code != 0:  # read-only in the sandbox already: nothing to apply
        assert not (home / rel).exists()
        return
    Baseline(ws).note(changes)
    lines = changes.render()
    assert any(rel.split("/")[-1] in line for line in lines[:20]), lines
    with pytest.raises(ApplyRefused, match="name them"):
        apply(ws, changes)
    assert not (home / rel).exists() and not (home / "Documents" / "fine.txt").exists()
    # named, it lands (with what it needs), and only then
    apply(ws, changes, include=[home / rel])
    assert (home / rel).read_text() == "x\n"


def test_a_symlinked_home_is_protected_and_refused_like_the_real_one(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = outside_tmp / "var" / "home" / "u"
    (real / "Documents").mkdir(parents=True)
    (real / ".bashrc").write_text("# bashrc\n")
    (real / ".profile").write_text("# profile\n")
    link = outside_tmp / "linkhome"
    link.symlink_to(real)
    monkeypatch.setenv("HOME", str(link))
    ws, s = _overlay_session(link, link / "Documents")
    with s:
        for rel in (".bashrc", ".profile"):
            out = s.run(
                f'python3 -c \'import os; open(os.path.expanduser("~/{rel}"),"a")'
                f'.write("evil\\n")\''
            )
            assert out.exit_code != 0, rel  # bound read-only through the resolved home
        assert (
            s.run(
                "mkdir -p ~/.config/autostart && echo e > ~/.config/autostart/x.desktop"
            ).exit_code
            == 0
        )
    changes = compute(ws)
    assert held_back(changes)
    with pytest.raises(ApplyRefused):
        apply(ws, changes)
    assert (real / ".bashrc").read_text() == "# bashrc\n"
    assert not (real / ".config").exists()
    assert "protected" in Places(str(link)).classify(str(real / ".bashrc"))


def test_a_bare_repository_look_alike_is_held_back_like_dot_git(home: Path) -> None:
    ws, s = _overlay_session(home, home / "Documents")
    with s:
        assert (
            s.run(
                "mkdir -p vend/objects vend/refs && echo 'ref: refs/heads/main' > vend/HEAD && "
                "printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' > vend/config"
            ).exit_code
            == 0
        )
    changes = compute(ws)
    why = [r for r in held_back(changes) if r.path.name == "config"]
    assert why and why[0].tier == "git", held_back(changes)
    with pytest.raises(ApplyRefused):
        apply(ws, changes)
    assert not (home / "Documents" / "vend").exists()


NOBODY_SCRIPT = r"""
import dataclasses, json, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, apply
home = Path(sys.argv[1])
out = {}
for n, rel in enumerate(json.loads(sys.argv[2])):
    ws = Workspace.create(f"nobody-{n}", [home], workdir=home / "work")
    profile = dataclasses.replace(get_profile("default", cwd=home / "work"), writable=(),
                                  overlays=ws.overlays())
    with Sandbox(profile, timeout=10) as s:
        r = s.run(f"mkdir -p \"$(dirname ~/{rel})\" && echo x >> ~/{rel}")
    if r.exit_code != 0:
        out[rel] = "read-only"
        continue
    try:
        apply(ws, compute(ws))
        out[rel] = "applied"
    except ApplyRefused:
        out[rel] = "refused"
print(json.dumps(out))
"""


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_startup_places_are_held_back_for_an_unprivileged_user(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    import json

    from tests.unprivileged import (
        SYSTEM_PYTHON,
        give_to_nobody,
        nobody_dirs,
        nobody_site,
        run_as_nobody,
    )

    root = tmp_path_factory.mktemp("places-nobody")
    site = nobody_site(root)
    home = root / "home"
    (home / "work").mkdir(parents=True)
    (home / ".profile").write_text("# profile\n")
    give_to_nobody(home)
    # $HOME through a symlink (H2), as on Fedora Silverblue; outside /tmp, which the
    # sandbox replaces with its own
    link = Path("/srv") / f"shellagent-test-home-{uuid.uuid4().hex[:8]}"
    link.symlink_to(home)
    request.addfinalizer(link.unlink)
    env = {"HOME": str(link), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= nobody_dirs(root, ("state", "cache", "workspaces", "config", "data"))
    places = [
        ".profile",
        ".bash_aliases",
        ".bashrc.d/zz.sh",
        ".config/autostart/x.desktop",
        ".local/share/systemd/user/zz.service",
        ".vimrc",
    ]
    proc = run_as_nobody(
        [SYSTEM_PYTHON, "-c", NOBODY_SCRIPT, str(link), json.dumps(places)], env, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out.pop(".profile") == "read-only", out  # bound read-only via the resolved home
    assert set(out.values()) == {"refused"}, out
    assert (home / ".profile").read_text() == "# profile\n"
    assert not any((home / p).exists() for p in places if p != ".profile")


def test_deep_in_ordinary_folders_names_still_count(home: Path, outside_tmp: Path) -> None:
    """The per-folder shortcut (only a name can matter below an ordinary folder) keeps
    every name-based reason."""
    repo = home / "Documents" / "proj" / "vend"
    for d in ("objects", "refs"):
        (repo / d).mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    expected = {
        "Documents/proj/.envrc": "workspace",
        "Documents/proj/.vscode/tasks.json": "workspace",
        "Documents/proj/.git": "git",
        "Documents/proj/.git/hooks/post-checkout": "git",
        "Documents/proj/id_rsa": "secret",
        "Documents/proj/vend/config": "git",
        "Documents/proj/vend/objects/ab": None,
        "Documents/proj/src/main.py": None,
    }
    guard = Guard(home)
    for rel, tier in expected.items():
        why = guard.reason(protected.real_home(home) / rel)
        assert (why.tier if why else None) == tier, rel
    outside = outside_tmp / "elsewhere" / "deep"
    assert guard.reason(outside / ".envrc") is not None
    assert guard.reason(outside / "notes.txt") is None
