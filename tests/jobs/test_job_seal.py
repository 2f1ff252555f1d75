"""The approval seal is keyed (security review L1): an edited job cannot be re-sealed by
whoever edited it, the key is private and invisible inside the sandbox, and jobs sealed
the old, unkeyed way must be approved again."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellagent.jobs import Schedule, install, load, make_job, run_job, save
from shellagent.jobs.seal import PREFIX, key_path
from shellagent.jobs.store import Job
from shellagent.sandbox import Sandbox, get_profile
from tests.jobs.conftest import shellagent
from tests.sandbox.conftest import PROBE
from tests.unprivileged import NOBODY, SYSTEM_PYTHON, unprivileged_site


def new_job(work: Path, commands: list[str] | None = None) -> Job:
    job = make_job(
        "mark", commands or ["touch ran"], Schedule.parse("daily"), workdir=work, writable=[work]
    )
    install(job)
    return job


def unkeyed(job: Job) -> str:
    """The digest an older shellagent wrote (and anyone can recompute)."""
    material = json.dumps(
        [job.commands, job.workdir, sorted(job.writable), job.network, job.profile]
    )
    return hashlib.sha256(material.encode()).hexdigest()


def material(job: Job) -> bytes:
    return json.dumps(
        {
            "v": 1,
            "id": job.id,
            "commands": job.commands,
            "workdir": job.workdir,
            "writable": sorted(job.writable),
            "network": job.network,
            "profile": job.profile,
        },
        sort_keys=True,
    ).encode()


def test_the_key_is_made_private_on_first_use_and_seals_every_job(
    user_home: Path, fake_crontab: Path
) -> None:
    assert not key_path().exists()
    job = new_job(user_home / "work")
    key = key_path()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert len(bytes.fromhex(key.read_text().strip())) == 32
    assert job.approved_digest.startswith(PREFIX) and load(job.id).approved


def test_an_edited_job_resealed_without_the_key_does_not_run(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = new_job(work)
    tampered = job.model_copy(update={"commands": ["touch evil"]})
    # What an attacker who can write the job file can compute: the old unkeyed digest, or
    # an HMAC under a key of their own.
    for forged in (
        unkeyed(tampered),
        PREFIX + hmac.new(b"guess", material(tampered), "sha256").hexdigest(),
    ):
        tampered.approved_digest = forged
        save(tampered)
        result = run_job(load(job.id))
        assert not result.success and "jobs approve" in result.reason
        assert not (work / "evil").exists()
    # Positive control: with the real key the same edit is accepted, so the key is the
    # only thing the forgeries lacked.
    key = bytes.fromhex(key_path().read_text().strip())
    tampered.approved_digest = PREFIX + hmac.new(key, material(tampered), "sha256").hexdigest()
    save(tampered)
    assert run_job(load(job.id)).success and (work / "evil").exists()


def test_a_job_sealed_by_an_older_shellagent_says_so_and_runs_once_approved(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = new_job(work)
    job.approved_digest = unkeyed(job)
    save(job)
    ran = shellagent("jobs", "run", job.id, cwd=work)
    assert ran.returncode == 1 and "older shellagent" in ran.stderr
    assert f"shellagent jobs approve {job.id}" in ran.stderr and not (work / "ran").exists()
    listed = shellagent("jobs", "list", cwd=work)
    assert "NOT APPROVED" in listed.stdout
    shown = shellagent("jobs", "show", job.id, cwd=work)
    assert "NOT APPROVED, it will not run: the job was approved by an older" in shown.stdout
    approved = shellagent("jobs", "approve", job.id, "-y", cwd=work)
    assert approved.returncode == 0 and "touch ran" in approved.stdout
    assert load(job.id).approved_digest.startswith(PREFIX)
    assert shellagent("jobs", "run", job.id, cwd=work).returncode == 0
    assert (work / "ran").exists()


def test_a_key_others_can_read_or_a_link_is_refused_with_the_fix(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = new_job(work)
    key = key_path()
    key.chmod(0o644)
    ran = shellagent("jobs", "run", job.id, cwd=work)
    assert ran.returncode == 3 and f"(chmod 600 {key})" in ran.stderr
    assert ran.stderr.count("\n") == 1
    key.chmod(0o600)
    real = key.with_name("real.key")
    key.rename(real)
    key.symlink_to(real)
    ran = shellagent("jobs", "run", job.id, cwd=work)
    assert ran.returncode == 3 and "cannot read the job key" in ran.stderr
    key.unlink()
    key.write_text("not a key\n")
    key.chmod(0o600)
    ran = shellagent("jobs", "run", job.id, cwd=work)
    assert ran.returncode == 2 and "64 hexadecimal digits" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_concurrent_first_uses_agree_on_one_key(tmp_path: Path) -> None:
    probe = (
        "from shellagent.jobs.seal import seal; import sys; "
        "sys.stdout.write(seal(b'same material'))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    digests = {p.communicate(timeout=60)[0] for p in procs}
    assert len(digests) == 1 and next(iter(digests)).startswith(PREFIX)
    assert [p.name for p in key_path().parent.iterdir() if "key" in p.name] == ["jobs.key"]


def test_the_key_cannot_be_read_inside_the_sandbox_even_under_a_write_grant(
    user_home: Path, fake_crontab: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # shellagent's state dir inside a directory the sandbox may write: the grant covers
    # the key's directory, and the key must still be hidden.
    state = outside_tmp / "granted" / "state"
    monkeypatch.setenv("SHELLAGENT_STATE_DIR", str(state))
    work = user_home / "work"
    new_job(work)
    assert key_path().is_relative_to(outside_tmp / "granted")
    (outside_tmp / "granted" / "beside.txt").write_text("visible")
    profile = get_profile("default", cwd=work).with_options(writable=[outside_tmp / "granted"])
    with Sandbox(profile, timeout=10) as shell:
        beside = shell.run(f"cat {outside_tmp}/granted/beside.txt")
        key = shell.run(f"cat {key_path()}")
        listing = shell.run(f"ls -A {state}")
    assert beside.exit_code == 0 and beside.output.strip() == "visible"  # positive control
    assert key.exit_code != 0 and key_path().read_text().strip() not in key.output
    assert listing.output.strip() == ""


@pytest.fixture
def nobody_root() -> Iterator[Path]:
    """A directory ``nobody`` can traverse. Not under pytest's temp root: a concurrent
    pytest run makes that 0700 again."""
    root = Path(tempfile.mkdtemp(prefix="sa-nobody-", dir="/tmp"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_an_unprivileged_user_cannot_read_their_key_inside_the_sandbox(
    nobody_root: Path,
) -> None:
    """As ``nobody``, with the state dir inside the sandbox's own (visible) workdir."""
    if os.getuid() != 0:
        pytest.skip("already unprivileged: the test above covers this user")
    if not Path(SYSTEM_PYTHON).exists() or not shutil.which("setpriv"):
        pytest.skip(f"needs {SYSTEM_PYTHON} and setpriv to switch to an unprivileged user")
    root = nobody_root
    site = unprivileged_site(root)
    work = root / "work"
    state = work / ".state"
    state.mkdir(parents=True)
    (state / "jobs.key").write_text("ab" * 32 + "\n")
    (work / "visible.txt").write_text("visible")
    (state / "job.toml").write_text("x")
    (work / "sibling").mkdir()
    (work / "sibling" / "job.toml").write_text("x")
    for path in (work, state, state / "jobs.key", state / "job.toml", work / "visible.txt"):
        os.chown(path, NOBODY, NOBODY)
    state.chmod(0o700)
    (state / "jobs.key").chmod(0o600)
    subprocess.run(["chmod", "-R", "a+rX", str(site)], check=True)
    spec = {
        "commands": [
            f"cat {work}/visible.txt",
            f"cat {state}/jobs.key",
            f"ls -A {work}/sibling",
            f"ls -A {state}",
        ],
        "profile": "default",
        "cwd": str(work),
        "timeout": 10,
    }
    proc = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        + [SYSTEM_PYTHON, "-c", PROBE, json.dumps(spec)],
        capture_output=True,
        text=True,
        env={
            "HOME": str(work),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site),
            "SHELLAGENT_STATE_DIR": str(state),
            "SHELLAGENT_CACHE_DIR": str(work / ".cache-sa"),
        },
        cwd=str(work),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    beside, key, sibling, own = json.loads(proc.stdout)
    assert beside["exit_code"] == 0 and "visible" in beside["output"]  # positive control
    assert key["exit_code"] != 0 and "ab" * 32 not in key["output"]
    assert sibling["output"].split() == ["job.toml"]  # positive control
    assert own["output"].split() == []  # the whole state dir is hidden, not just *.key
