"""Review 3's H2: code-running trees of the home directory that the apply used to land with
``-y`` (caches, install trees, ``~/node_modules``, ``~/*.py``, the login shell's PATH). Each
row is written in a real sandbox on overlays and applied by the real apply, as root and as
the unprivileged user ``nobody``: it is read-only in the sandbox or refused by the apply,
never applied unnamed; named, it lands. Data stays data."""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from pathlib import Path

import pytest

from shellagent import loginpath, protected
from shellagent.policy.pathclass import Places
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.protect import refuse_reason
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, apply, held_back
from tests.transaction.code_trees import (
    DATA_ROWS,
    H2_KIN,
    H2_ROWS,
    make_home,
    write_command,
)

# Runs as root in-process and as nobody in a subprocess: one session per row, applied as
# ``-y`` would (nothing named); what became of it.
ROW_SCRIPT = r"""
import dataclasses, json, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, apply
home, rows = Path(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for n, (rel, command) in enumerate(rows):
    ws = Workspace.create(f"row-{n}", [home], workdir=home / "work")
    profile = dataclasses.replace(get_profile("default", cwd=home / "work"), writable=(),
                                  overlays=ws.overlays())
    with Sandbox(profile, timeout=20) as s:
        r = s.run(command)
    if r.exit_code != 0:
        out[rel] = "read-only"
        ws.remove()
        continue
    try:
        apply(ws, compute(ws))
        out[rel] = "applied"
    except ApplyRefused:
        out[rel] = "refused"
    ws.remove()
print(json.dumps(out))
"""


def _run_rows(home: Path, rows: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """``ROW_SCRIPT`` in this process (as root, the user running the tests)."""
    import contextlib
    import io
    import sys

    args = [str(home), json.dumps([(rel, write_command(rel, how)) for rel, how in rows])]
    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["rows", *args]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(ROW_SCRIPT, "rows", "exec"), {"__name__": "rows"})
    finally:
        sys.argv = saved
    result: dict[str, str] = json.loads(out.getvalue())
    return result


@pytest.fixture
def code_home(home: Path) -> Path:
    make_home(home)
    loginpath._memory.clear()
    return home


def test_every_row_of_the_review_and_its_kin_is_never_applied_unnamed(code_home: Path) -> None:
    before = {rel: _state(code_home / rel) for rel, _ in (*H2_ROWS, *H2_KIN)}
    out = _run_rows(code_home, (*H2_ROWS, *H2_KIN))
    assert set(out) == {rel for rel, _ in (*H2_ROWS, *H2_KIN)}
    applied = {rel: what for rel, what in out.items() if what == "applied"}
    assert applied == {}, out
    for rel, state in before.items():
        assert _state(code_home / rel) == state, rel  # nothing landed


def test_install_trees_the_home_already_has_are_read_only_in_the_sandbox(code_home: Path) -> None:
    rows = tuple(r for r in H2_ROWS if r[0].split("/")[0] in ("miniconda3", "perl5"))
    assert set(_run_rows(code_home, rows).values()) == {"read-only"}


def test_a_named_row_lands_and_only_it(code_home: Path) -> None:
    """``--include`` is the way in: each row made in the session lands once named."""
    read_only = ("miniconda3/", "perl5/", "google-cloud-sdk/", "tools/scripts/")  # bound
    rows = [r for r in (*H2_ROWS, *H2_KIN) if not r[0].startswith(read_only)]
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [code_home], workdir=code_home / "work")
    profile = dataclasses.replace(
        get_profile("default", cwd=code_home / "work"), writable=(), overlays=ws.overlays()
    )
    with Sandbox(profile, timeout=20) as s:
        for rel, how in rows:
            assert s.run(write_command(rel, how)).exit_code == 0, rel
    changes = compute(ws)
    held = {r.path for r in held_back(changes)}
    for rel, _ in rows:
        real = protected.real_home(code_home) / rel
        assert real in held, f"{rel} is not held back: {sorted(map(str, held))}"
    with pytest.raises(ApplyRefused, match="name them"):
        apply(ws, changes)
    apply(ws, changes, include=[code_home / rel for rel, _ in rows])
    for rel, how in rows:
        path = code_home / rel
        assert path.is_symlink() if how == "link" else "payload" in path.read_text(), rel


def test_a_tree_the_session_makes_into_an_install_tree_is_held_back_whole(
    code_home: Path,
) -> None:
    """A ``bin/`` alone is a project's; with a prefix's layout beside it (made in the same
    session, seen through the change set's merged view) the whole folder is held back."""
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [code_home], workdir=code_home / "work")
    profile = dataclasses.replace(
        get_profile("default", cwd=code_home / "work"), writable=(), overlays=ws.overlays()
    )
    with Sandbox(profile, timeout=20) as s:
        for rel in ("proj/bin/tool", "sdk/bin/tool", "sdk/etc/profile.d/sdk.sh"):
            assert s.run(write_command(rel, "exec")).exit_code == 0, rel
    held = {r.path.relative_to(protected.real_home(code_home)) for r in held_back(compute(ws))}
    assert {Path("sdk/bin/tool"), Path("sdk/etc/profile.d/sdk.sh")} <= held
    assert not any(p.parts[0] == "proj" for p in held), held


def test_data_in_caches_and_projects_lands_with_yes(code_home: Path) -> None:
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [code_home], workdir=code_home / "work")
    profile = dataclasses.replace(
        get_profile("default", cwd=code_home / "work"), writable=(), overlays=ws.overlays()
    )
    with Sandbox(profile, timeout=20) as s:
        for rel in DATA_ROWS:
            assert s.run(write_command(rel, "file")).exit_code == 0, rel
    changes = compute(ws)
    assert held_back(changes) == []
    apply(ws, changes)
    assert all("payload" in (code_home / rel).read_text() for rel in DATA_ROWS)


def test_emptying_a_cache_lands_with_yes(code_home: Path) -> None:
    """Deleting runs nothing: clearing caches, code trees included, is not held back."""
    for rel in (".cache/pre-commit/repo1/hook.py", ".cache/p10k-instant-prompt-u.zsh"):
        (code_home / rel).parent.mkdir(parents=True, exist_ok=True)
        (code_home / rel).write_text("x\n")
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [code_home], workdir=code_home / "work")
    profile = dataclasses.replace(
        get_profile("default", cwd=code_home / "work"), writable=(), overlays=ws.overlays()
    )
    with Sandbox(profile, timeout=20) as s:
        assert s.run("rm -rf ~/.cache/pre-commit ~/.cache/p10k-*.zsh").exit_code == 0
    changes = compute(ws)
    assert changes.count("deleted") >= 2 and held_back(changes) == []
    apply(ws, changes)
    assert not (code_home / ".cache" / "pre-commit").exists()


def test_the_login_shells_path_is_protected_not_this_processs(
    code_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.bashrc puts ~/tools/scripts on PATH; this process's PATH does not have it."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    scripts = protected.real_home(code_home) / "tools" / "scripts"
    login = loginpath.login_path(code_home)
    assert str(code_home / "tools" / "scripts") in login.dirs and not login.note
    assert scripts in protected.path_dirs(code_home)
    assert refuse_reason(scripts, code_home) is not None  # never a write grant
    places = Places(str(code_home))
    assert "protected" in places.classify(str(code_home / "tools/scripts/ls"))
    assert "protected" not in places.classify(str(code_home / "tools/notes.txt"))


def test_without_a_login_shell_this_processs_path_stands_in_with_a_note(
    code_home: Path, monkeypatch: pytest.MonkeyPatch, outside_tmp: Path
) -> None:
    fake = outside_tmp / "bash"  # named like a shell, never prints a PATH
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setattr(loginpath, "_shell", lambda: str(fake))
    loginpath._memory.clear()
    monkeypatch.setenv("PATH", f"{outside_tmp}/only-here:/usr/bin")
    found = loginpath.login_path(code_home)
    assert found.dirs == (f"{outside_tmp}/only-here", "/usr/bin")
    assert "did not print its PATH" in found.note and "this process's PATH" in found.note


def test_the_policy_denies_writes_to_what_the_apply_holds_back(code_home: Path) -> None:
    places = Places(str(code_home))
    for rel, _ in (*H2_ROWS, *H2_KIN):
        if rel.startswith((".local/state/anything", ".cache/tool/run")):
            continue  # a symlink or an executable: what the command makes, not the name
        assert "protected" in places.classify(str(code_home / rel)), rel
    for rel in DATA_ROWS:
        assert "protected" not in places.classify(str(code_home / rel)), rel


def _state(path: Path) -> tuple[str, str] | None:
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_file():
        return ("file", path.read_text())
    return None


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_no_row_is_applied_unnamed_for_an_unprivileged_user(
    request: pytest.FixtureRequest,
) -> None:
    import shutil

    from tests.unprivileged import (
        SYSTEM_PYTHON,
        give_to_nobody,
        nobody_dirs,
        nobody_site,
        run_as_nobody,
    )

    # Not under pytest's own /tmp/pytest-of-root, which a concurrent pytest run closes
    # (0700) while this one runs; not under /tmp or /var/tmp, which the sandbox replaces.
    root = Path("/srv") / f"shellagent-test-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o755)
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    site = nobody_site(root)
    home = root / "home"
    (home / "work").mkdir(parents=True)
    make_home(home)
    give_to_nobody(home)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= {"SHELL": "/bin/bash"}  # nobody's login shell is nologin
    env |= nobody_dirs(root, ("state", "cache", "workspaces", "config", "data"))
    rows = (*H2_ROWS, *H2_KIN)
    commands = [(rel, write_command(rel, how)) for rel, how in rows]
    proc = run_as_nobody(
        [SYSTEM_PYTHON, "-c", ROW_SCRIPT, str(home), json.dumps(commands)], env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert set(out) == {rel for rel, _ in rows}
    assert {rel: what for rel, what in out.items() if what == "applied"} == {}, out
    assert not (home / "readline.py").exists() and not (home / "node_modules").exists()
    assert (home / "miniconda3/bin/conda").read_text() == "#!/bin/sh\nexit 0\n"
