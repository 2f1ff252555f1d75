"""Review 3's M4 and L6: the credential files the sandbox did not hide, and the class they
stand for (a tool's settings file holding a token), are hidden by path, by name and by
content; the policy does not allow a read of what the sandbox hides. Through a real sandbox,
as root and as the unprivileged user ``nobody``; the content scan stays bounded."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from shellagent import credentials
from shellagent.policy import PolicyEngine, ShellState, default_policy_path
from shellagent.sandbox import Sandbox, get_profile, secrets

# The review's 18 stores, each with a fake token in the form it used.
M4_FILES = {
    ".passwd-s3fs": "bucket:AKIAFAKE0001:TOKEN-M4-01",
    ".config/gspread/service_account.json": '{"private_key": "TOKEN-M4-02"}',
    ".config/pypoetry/auth.toml": '[http-basic.x]\npassword = "TOKEN-M4-03"',
    ".netlify/config.json": '{"token": "TOKEN-M4-04"}',
    ".vercel/auth.json": '{"token": "TOKEN-M4-05"}',
    ".wakatime.cfg": "[settings]\napi_key = TOKEN-M4-06",
    ".sbt/.credentials": "password=TOKEN-M4-07",
    ".config/openvpn/work.ovpn": "<key>\nTOKEN-M4-08\n</key>",
    ".config/syncthing/config.xml": "<apikey>TOKEN-M4-09</apikey>",
    ".config/transmission/settings.json": '{"rpc-password": "TOKEN-M4-10"}',
    ".config/yt-dlp/config": "--password TOKEN-M4-11",
    ".config/JetBrains/PyCharm2024.1/options/security.xml": "token=TOKEN-M4-12",
    ".config/heroku/config.json": '{"token": "TOKEN-M4-13"}',
    ".config/firebase/creds.json": '{"refresh_token": "TOKEN-M4-14"}',
    ".config/tailscale/state": "token=TOKEN-M4-15",
    ".remmina/work.remmina": "password=TOKEN-M4-16",
    ".config/lab/lab.toml": 'token = "TOKEN-M4-17"',
    ".config/spotify/prefs": 'autologin.blob="TOKEN-M4-18"',
}
# Tools no list knows, keeping a token the same ways: hidden by what the file holds.
UNKNOWN_TOOLS = {
    ".config/newtool/settings.json": '{"theme": "dark", "api_key": "TOKEN-NEW-1a2b3c"}',
    ".config/other/deep/er/conf.ini": "[auth]\npassword = TOKEN-NEW-2x9y",
    ".newtool/config.yml": "server: x\nauth_token: TOKEN-NEW-3Zq8",
    ".newtoolrc": "user bob\napikey TOKEN-NEW-4k2k",
    ".config/chat/account.xml": '<option name="password" value="TOKEN-NEW-5p0p"/>',
    ".config/gh-like/hosts.yml": "github.com:\n  oauth: ghp_TOKENNEW6abcdefghijklmnopqrstuvwxyz01",
    ".config/keeper/key": "TOKENNEW7a8f9c0d1e2b3a4958677c8d9e0f1",  # one opaque word
    ".config/cli/token": "opaqueTOKENNEW8",  # by its name
    ".tool/auth_token": "TOKENNEW9",
}
ORDINARY = {
    ".config/editor/settings.json": '{"theme": "dark", "fontSize": 14, "autoSave": true}',
    ".config/app/app.conf": "[ui]\nlanguage = en\npassword_prompt = never\n",
    ".toolrc": "color = auto\ntoken_file = ~/.tool/token\n",
}


def _write(home: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")


def test_the_reviews_stores_and_unknown_tools_tokens_are_hidden(
    home: Path, workspace: Path
) -> None:
    _write(home, {**M4_FILES, **UNKNOWN_TOOLS, **ORDINARY})
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        for rel in (*M4_FILES, *UNKNOWN_TOOLS):
            out = s.run(f"cat ~/'{rel}' 2>&1").output
            assert "TOKEN" not in out, (rel, out)
        for rel, text in ORDINARY.items():  # settings without a credential stay readable
            assert s.run(f"cat ~/'{rel}'").output == text + "\n", rel


def test_the_policy_asks_before_reading_what_the_sandbox_hides(home: Path) -> None:
    _write(home, {**M4_FILES, **UNKNOWN_TOOLS, **ORDINARY})
    engine = PolicyEngine.load([default_policy_path()], home=home, workspace=home / "project")
    state = ShellState(cwd=home)
    for rel in (*M4_FILES, *UNKNOWN_TOOLS):
        for command in (f"cat ~/'{rel}'", f"grep -r . ~/'{rel}'", f"head -c 100 ~/'{rel}'"):
            assert engine.check(command, state).decision != "allow", command
    # the review's L6 rows
    _write(home, {".kaggle/kaggle.json": "{}", ".databrickscfg": "", ".dbt/profiles.yml": ""})
    for command in (
        "cat ~/.kaggle/kaggle.json",
        "cat ~/.databrickscfg",
        "cat ~/.dbt/profiles.yml",
        "cat ~/.snowsql/config",
        "grep -r . ~/.aws",
        "tail ~/.zsh_history",
        "cat ~/.*_history",
        "less ~/.python_history",
    ):
        assert engine.check(command, state).decision != "allow", command
    for rel in ORDINARY:
        assert engine.check(f"cat ~/'{rel}'", state).decision == "allow", rel
    assert engine.check("cat ~/.ssh/id_ed25519.pub", state).decision == "allow"


def test_a_changed_file_is_judged_again(home: Path) -> None:
    path = home / ".config" / "late" / "settings.ini"
    _write(home, {".config/late/settings.ini": "colour = blue"})
    first = secrets.content_scan(home)
    assert path not in first.secrets and str(path) in first.verdicts
    again = secrets.content_scan(home, known=first.verdicts)
    assert again.read == 0  # nothing changed: nothing read
    time.sleep(0.01)
    path.write_text("colour = blue\nsecret = TOKEN-LATE-9f8e\n")
    later = secrets.content_scan(home, known=first.verdicts)
    assert later.read == 1 and path in later.secrets


def test_the_content_scan_is_bounded_and_picks_up_where_it_stopped(home: Path) -> None:
    """A home with thousands of settings files: one scan reads at most CONTENT_READS of
    them within its budget; the next ones go on from the verdicts kept."""
    many = home / ".config" / "many"
    for i in range(1500):
        d = many / f"d{i // 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.conf").write_text(f"option{i} = value{i}\n")
    (many / "d9" / "zz.conf").write_text("password = TOKEN-DEEP-77aa\n")
    (home / ".config" / "big.json").write_text('"token": "TOKEN-BIG-1"\n' + " " * 70_000)
    deep = home / ".config" / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "x.conf").write_text("password = TOKEN-TOO-DEEP-1\n")
    start = time.monotonic()
    first = secrets.content_scan(home)
    took = time.monotonic() - start
    assert first.read <= secrets.CONTENT_READS and not first.complete
    assert took < secrets.CONTENT_BUDGET_S + 0.5, took
    known, scans = first.verdicts, 1
    found = set(first.secrets)
    while scans < 10:
        nxt = secrets.content_scan(home, known=known)
        known = {**known, **nxt.verdicts}
        found |= set(nxt.secrets)
        scans += 1
        if nxt.complete:
            break
    assert many / "d9" / "zz.conf" in found
    assert home / ".config" / "big.json" not in found  # over CONTENT_SIZE_MAX: data
    assert deep / "x.conf" not in found  # deeper than CONTENT_DEPTH


def test_the_table_is_one_for_the_sandbox_and_the_policy() -> None:
    assert secrets.HOME_SECRETS is credentials.HOME_SECRETS
    assert secrets.is_secret_name is credentials.is_secret_name
    for rel in M4_FILES:
        name = rel.rsplit("/", 1)[-1]
        assert credentials.home_secret(rel) or credentials.is_secret_name(name), rel


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_tokens_are_hidden_for_an_unprivileged_user(request: pytest.FixtureRequest) -> None:
    import shutil

    from tests.sandbox.conftest import PROBE
    from tests.unprivileged import SYSTEM_PYTHON, give_to_nobody, nobody_site, run_as_nobody

    root = Path("/srv") / f"shellagent-test-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o755)
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    site = nobody_site(root)
    home = root / "home"
    (home / "work").mkdir(parents=True)
    _write(home, {**M4_FILES, **UNKNOWN_TOOLS, **ORDINARY})
    give_to_nobody(home)
    rels = [*M4_FILES, *UNKNOWN_TOOLS, *ORDINARY]
    spec = {
        "commands": [f"cat ~/'{rel}' 2>&1" for rel in rels],
        "profile": "default",
        "cwd": str(home / "work"),
        "timeout": 10,
    }
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(site),
        "SHELLAGENT_CACHE_DIR": str(home / ".cache-sa"),
    }
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", PROBE, json.dumps(spec)], env, cwd=home / "work")
    assert proc.returncode == 0, proc.stderr[-3000:]
    outs = {rel: r["output"] for rel, r in zip(rels, json.loads(proc.stdout), strict=True)}
    for rel in (*M4_FILES, *UNKNOWN_TOOLS):
        assert "TOKEN" not in outs[rel], (rel, outs[rel])
    for rel, text in ORDINARY.items():
        assert outs[rel] == text + "\n", rel
