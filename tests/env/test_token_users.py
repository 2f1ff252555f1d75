"""The review's H3 attack between two real unprivileged users, through the real CLI.

``nobody`` (the victim) runs ``shellagent env serve`` with no ``XDG_RUNTIME_DIR``, as under
cron or ssh without a login session; uid 4242 (the attacker) made the predictable
``/tmp/shellagent-65534`` (777) and an empty ``env-token`` (666) in it first. Before the
fix the victim's token landed in the attacker's file and the attacker started episodes
whose setup commands ran as the victim. Now the victim's server uses a private directory
of its own, the attacker's file stays empty, the attacker can read nothing and is refused,
and the victim's next start (after a SIGKILL, L11) finds the same directory and replaces
the stale token.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unprivileged import AS_NOBODY, NOBODY, SYSTEM_PYTHON, runnable_site

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.getuid() != 0 or not shutil.which("setpriv") or not Path(SYSTEM_PYTHON).exists(),
        reason="needs root, setpriv and the system Python to act as two other users",
    ),
]

ATTACKER = 4242
AS_ATTACKER = ["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups"]
TASK = (
    '{"id": "t", "task": "x", "setup_commands": ["id -u > /tmp/who"], "success_condition": "false"}'
)


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    """The package for the victim (with what it runs on), a home of theirs and a task set.
    Not under pytest's temp root: a concurrent pytest run makes that 0700 again."""
    root = Path(tempfile.mkdtemp(prefix="sa-env-users-", dir="/tmp"))
    root.chmod(0o755)
    runnable_site(root)
    home = root / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    (root / "tasks.jsonl").write_text(TASK + "\n")
    (root / "tasks.jsonl").chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def squat() -> Iterator[Path]:
    """The attacker's directory and empty token where the victim's would go by default."""
    default = Path(f"/tmp/shellagent-{NOBODY}")
    if Path(f"/run/user/{NOBODY}").exists() or os.path.lexists(default):
        pytest.skip(f"{default} is in use or not the default here")
    plant = f"mkdir -m 777 {default} && : > {default}/env-token && chmod 666 {default}/env-token"
    made = subprocess.run([*AS_ATTACKER, "sh", "-c", plant], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    try:
        yield default
    finally:
        for left in [default, *Path("/tmp").glob(f"shellagent-{NOBODY}-*")]:
            shutil.rmtree(left, ignore_errors=True)


def serve(place: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    env = {"HOME": str(place / "home"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(place / "site")}
    argv = [SYSTEM_PYTHON, "-m", "shellagent", "env", "serve", str(place / "tasks.jsonl")]
    proc = subprocess.Popen(
        [*AS_NOBODY, *argv, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=place / "home",
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise AssertionError(proc.communicate()[1])
    return proc, json.loads(line)


def status(url: str, token: str, body: bytes | None = None) -> int:
    path = "/reset" if body is not None else "/tasks"
    request = urllib.request.Request(
        url + path, data=body, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_another_users_runtime_dir_never_gets_the_token(place: Path, squat: Path) -> None:
    proc, ready = serve(place)
    try:
        token_file = Path(ready["token_file"])
        private = token_file.parent
        assert private != squat and private.name.startswith(f"shellagent-{NOBODY}-")
        for path, perms in ((private, 0o700), (token_file, 0o600)):
            st = os.lstat(path)
            assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, perms)
        token = token_file.read_text().strip()
        # The attacker: its own file is empty, the real one cannot be read, and what it
        # holds opens nothing.
        assert (squat / "env-token").read_text() == ""
        peek = subprocess.run([*AS_ATTACKER, "cat", str(token_file)], capture_output=True)
        assert peek.returncode != 0 and b"Permission denied" in peek.stderr
        assert status(ready["url"], "", b'{"task_id": "t"}') == 401
        assert status(ready["url"], token) == 200  # the victim's own client is served
        first = (private, token)
    finally:
        proc.kill()  # SIGKILL: the token file stays behind (L11)
        proc.communicate()
    assert token_file.read_text().strip() == token

    proc, ready = serve(place)
    try:
        token_file = Path(ready["token_file"])
        assert token_file.parent == first[0]  # the pointer: the same private directory
        fresh = token_file.read_text().strip()
        assert fresh != first[1] and stat.S_IMODE(os.lstat(token_file).st_mode) == 0o600
        assert status(ready["url"], first[1]) == 401 and status(ready["url"], fresh) == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert not token_file.exists() and (squat / "env-token").read_text() == ""
