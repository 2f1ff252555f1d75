"""``eval --ray`` and what a cluster may do to the driver (security review 3, M6).

A Ray cluster is full trust both ways: the driver unpickles the workers' results. So the
local cluster listens on loopback only and its token is private, an ADDRESS needs
``--trust-cluster``, and a transcript name from a worker is written only when it is a plain
``SESSION.jsonl``.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.eval import RunConfig, TaskResult
from shellagent.eval.distributed import (
    _keep,
    _private_ray_token,
    _Returned,
    run_eval_ray,
    transcript_name_ok,
)

from .conftest import make_task


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("20261128T145058-2b2956.jsonl", True),
        ("t-1_s2.jsonl", True),
        ("../evil.jsonl", False),
        ("../../home/user/.bashrc", False),
        ("/etc/cron.d/x.jsonl", False),
        ("sub/dir.jsonl", False),
        ("a..b.jsonl", False),
        (".hidden.jsonl", False),
        ("x.jsonl\n", False),
        ("x.txt", False),
        ("", False),
        ("a" * 300 + ".jsonl", False),
        (None, False),
    ],
)
def test_only_a_plain_session_file_name_from_a_worker_is_accepted(name: object, ok: bool) -> None:
    assert transcript_name_ok(name) is ok


def test_a_worker_naming_a_path_outside_the_report_writes_nothing_and_is_an_error(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report" / "transcripts"
    solved = TaskResult(id="t-1", status="solved", sample=3)
    config = RunConfig(transcripts_dir=report)
    kept = _keep(_Returned(solved, ("../../planted.jsonl", "{}\n")), config)
    assert (kept.id, kept.sample, kept.status) == ("t-1", 3, "error")
    assert "'../../planted.jsonl': not written" in kept.detail
    assert not (tmp_path / "planted.jsonl").exists() and not report.exists()
    fine = _keep(_Returned(solved, ("20261128T145058-2b2956.jsonl", "{}\n")), config)
    assert fine == solved and (report / "20261128T145058-2b2956.jsonl").read_text() == "{}\n"


def test_a_cluster_address_needs_trust_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(make_task().to_line() + "\n")
    out = tmp_path / "out"
    args = ["eval", str(tasks), "--agent", "nothing", "--out", str(out)]
    assert main([*args, "--ray", "10.1.2.3:6379"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: will not connect to the Ray cluster at 10.1.2.3:6379 without --trust-cluster"
    )
    assert "runs code as you" in err and err.count("\n") == 1
    assert not out.exists()  # refused before anything was made
    with pytest.raises(Exception, match="without --trust-cluster"):
        run_eval_ray([make_task()], object, RunConfig(), address="ray://10.1.2.3:10001")  # type: ignore[arg-type]


def test_a_world_readable_ray_token_of_ours_is_made_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    home_ray = tmp_path / ".ray"
    home_ray.mkdir(mode=0o755)
    home_ray.chmod(0o755)
    (home_ray / "auth_token").write_text("abc")
    (home_ray / "auth_token").chmod(0o644)
    _private_ray_token()
    assert stat.S_IMODE(home_ray.stat().st_mode) == 0o700
    token = home_ray / "auth_token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and token.read_text() == "abc"


def test_with_token_auth_off_no_token_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    _private_ray_token()
    assert not (tmp_path / ".ray" / "auth_token").exists()


# A fresh driver (Ray is read as it is first imported): one episode on a new local cluster,
# then every listening socket of the driver and the cluster's processes, and the token.
DRIVER = r"""
import json, os, sys, pathlib
import psutil
from shellagent.eval import NothingAgent, RunConfig, Task
from shellagent.eval.distributed import run_eval_ray

task = Task(id="t", task="x", setup_commands=(), success_condition="false")
run = run_eval_ray([task], NothingAgent, RunConfig(transcripts_dir=pathlib.Path(sys.argv[1])))
import ray
me = psutil.Process()
listening = set()
for proc in [me, *me.children(recursive=True)]:
    try:
        for conn in proc.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                listening.add((proc.name(), conn.laddr.ip))
    except psutil.Error:
        pass
token = pathlib.Path.home() / ".ray" / "auth_token"
print(json.dumps({
    "statuses": [r.status for r in run.results],
    "node": ray.util.get_node_ip_address(),
    "listening": sorted(listening),
    "token_mode": oct(token.stat().st_mode & 0o777),
    "dir_mode": oct(token.parent.stat().st_mode & 0o777),
}))
ray.shutdown()
"""


@pytest.mark.slow
def test_the_local_cluster_listens_on_loopback_only_and_its_token_is_private(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ray")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path / "transcripts")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["statuses"] == ["failed"]  # the episode ran on the cluster
    assert seen["node"] == "127.0.0.1"
    names = {name for name, _ in seen["listening"]}
    assert {"gcs_server", "raylet"} <= names, seen["listening"]
    outward = [
        (n, ip) for n, ip in seen["listening"] if ip not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")
    ]
    assert outward == [], seen["listening"]
    assert (seen["token_mode"], seen["dir_mode"]) == ("0o600", "0o700")
