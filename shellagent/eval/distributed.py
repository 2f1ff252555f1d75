"""Running a task set's episodes as Ray tasks (``shellagent eval --ray [ADDRESS]``).

Ray schedules; nothing here does. Each episode (a task and its sample number) is one Ray
task that needs one CPU: the worker makes the agent (once per worker process, from the
picklable ``make_agent`` the driver hands over, so a local model loads once and stays warm),
starts the throwaway sandbox *on the worker*, runs ``runner.run_one`` and sends back the
``TaskResult`` and the episode's transcript, which the driver writes into the same report
as a local run (``results.jsonl``, ``transcripts/``, the summary) as episodes finish.

A worker first checks, once per process, that it can sandbox at all (bwrap, user
namespaces, the throwaway root: the checks ``doctor`` makes). A node that cannot reports
every episode it is given as a harness ``error`` naming the node and the fix, never as a
failed task. Ctrl-C (or ``cancel``) cancels the episodes not finished (``ray.cancel``,
forced: the worker process and so its sandbox die) and returns what finished.

``ray`` is an optional dependency (``pip install -e .[scale]``); it is imported only here.

Trust (docs/eval.md, "Beyond one machine"): a Ray cluster is full trust both ways. The
driver unpickles what workers return (``ray.get``), so whoever can run code on the cluster
can run code in this process; the agent's maker and the tasks travel to the cluster. So:

* the local cluster (no ADDRESS) is started on loopback only, in Ray's single-machine mode
  (a loopback ``_node_ip_address`` alone is turned back into the machine's outward address
  by Ray, and its servers then listen on every interface), and checked to be there;
* Ray's token (``~/.ray/auth_token``, which lets anyone holding it join the cluster) is made
  0600 in a 0700 directory before Ray would write it world-readable, and tightened if it
  already exists;
* an ADDRESS is connected to only with ``trust_cluster`` (``--trust-cluster``): nothing
  makes results from a cluster someone else controls safe to unpickle;
* a transcript name a worker sends must be a plain ``SESSION.jsonl``, or it is not written
  and the episode is a harness error.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import pickle
import re
import secrets
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shellagent.errors import EnvironmentProblem, InputError
from shellagent.eval.agents import EvalAgent
from shellagent.eval.runner import EvalRun, RunConfig, TaskResult, run_one
from shellagent.eval.tasks import Task
from shellagent.jsontypes import JsonObject

__all__ = ["RAY_HINT", "run_eval_ray", "transcript_name_ok"]

RAY_HINT = "install the scale extra: pip install -e '.[scale]' (or ./install.sh --scale)"
TRUST_HINT = (
    "a Ray cluster runs code as you in this process (results are unpickled): pass "
    "--trust-cluster only for a cluster that is yours alone, on a private network"
)
_POLL_S = 0.2
# Ray's single-machine mode (its default on Windows and macOS): every server on loopback.
# Read when ray is imported, by this process and the cluster processes it starts.
_SINGLE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_SESSION_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.jsonl")


@dataclass(frozen=True)
class _Returned:
    result: TaskResult
    transcript: tuple[str, str] | None  # file name, text


_agents: dict[bytes, EvalAgent] = {}


def _agent(make_agent: Callable[[], EvalAgent]) -> EvalAgent:
    key = pickle.dumps(make_agent)
    if key not in _agents:
        _agents[key] = make_agent()
    return _agents[key]


@functools.cache
def _sandbox_problem() -> str | None:
    """Why this worker cannot run episodes (checked once per process), or None."""
    try:
        from shellagent.sandbox import Sandbox

        Sandbox("ephemeral").close()
    except EnvironmentProblem as exc:
        return exc.text()
    except Exception as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return None


def episode(
    task_line: str,
    sample: int,
    make_agent: Callable[[], EvalAgent],
    config: RunConfig,
) -> _Returned:
    """One episode on a Ray worker (a plain function: Ray wraps it in ``run_eval_ray``)."""
    task = Task.model_validate_json(task_line)
    problem = _sandbox_problem()
    if problem is not None:
        detail = f"node {socket.gethostname()} cannot sandbox: {problem}"
        failed = TaskResult(id=task.id, status="error", detail=detail, sample=sample)
        return _Returned(failed, None)
    with tempfile.TemporaryDirectory(prefix="shellagent-episode-") as tmp:
        local = RunConfig(
            setup_timeout=config.setup_timeout,
            check_timeout=config.check_timeout,
            transcripts_dir=Path(tmp),
            max_session_s=config.max_session_s,
        )
        result = run_one(task, _agent(make_agent), local, threading.Event(), sample=sample)
        files = sorted(Path(tmp).glob("*.jsonl"))
        transcript = (files[0].name, files[0].read_text(encoding="utf-8")) if files else None
    return _Returned(result, transcript)


def run_eval_ray(
    tasks: Sequence[Task],
    make_agent: Callable[[], EvalAgent],
    config: RunConfig,
    *,
    address: str | None = None,
    samples: int = 1,
    done: Sequence[TaskResult] = (),
    cancel: threading.Event | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
    runtime_env: JsonObject | None = None,
    trust_cluster: bool = False,
) -> EvalRun:
    """Run every (task, sample) not already in ``done`` as a Ray task on the cluster at
    ``address`` (None: the one this process is connected to, else a new local one, on
    loopback). An ``address`` other than ``"local"`` needs ``trust_cluster``: see the
    module's docstring."""
    if address and address != "local" and not trust_cluster:
        raise InputError(
            f"will not connect to the Ray cluster at {address} without --trust-cluster",
            hint=TRUST_HINT,
        )
    local = not address or address == "local"
    if local and "ray" not in sys.modules:
        os.environ.setdefault(_SINGLE_MACHINE, "0")
    try:
        import ray
    except ImportError:
        raise EnvironmentProblem("--ray needs Ray, which is not installed", hint=RAY_HINT) from None
    if not ray.is_initialized():
        if not local:
            ray.init(address=address, log_to_driver=False)
        else:  # a local cluster: small object store (results are small), no dashboard
            _private_ray_token()
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=100 * 1024 * 1024,
                _node_ip_address="127.0.0.1",
            )
            _private_ray_token()  # one Ray found already there, made before this
            node = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
            if not ipaddress.ip_address(node).is_loopback:
                ray.shutdown()
                raise EnvironmentProblem(
                    f"the local Ray cluster came up on {node}, not on loopback",
                    hint=f"start eval in a fresh process, or set {_SINGLE_MACHINE}=0 "
                    "before Ray is imported",
                )
    cancel = cancel or threading.Event()
    remote = ray.remote(num_cpus=1, max_retries=0)(episode)
    if runtime_env:
        remote = remote.options(runtime_env=runtime_env)
    finished = {(r.id, r.sample) for r in done}
    pending: dict[Any, tuple[str, int]] = {}
    for task in tasks:
        for sample in range(samples):
            if (task.id, sample) in finished:
                continue
            ref = remote.remote(task.model_dump_json(), sample, make_agent, config)
            pending[ref] = (task.id, sample)
    results: list[TaskResult] = list(done)
    started = time.monotonic()
    interrupted = False
    try:
        while pending and not cancel.is_set():
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
            for ref in ready:
                task_id, sample = pending.pop(ref)
                try:
                    returned: _Returned = ray.get(ref)
                except Exception as exc:  # the worker died: a harness error, not a failure
                    result = TaskResult(
                        id=task_id, status="error", detail=f"worker failed: {exc}", sample=sample
                    )
                else:
                    result = _keep(returned, config)
                results.append(result)
                if on_result is not None:
                    on_result(result)
    except KeyboardInterrupt:
        interrupted = True
    if pending and (interrupted or cancel.is_set()):
        for ref in pending:
            ray.cancel(ref, force=True)
    order = {t.id: i for i, t in enumerate(tasks)}
    results.sort(key=lambda r: (order.get(r.id, len(order)), r.sample))
    return EvalRun(
        tasks=tasks,
        results=results,
        interrupted=interrupted or cancel.is_set(),
        wall_s=time.monotonic() - started,
        jobs=int(ray.cluster_resources().get("CPU", 1)),  # type: ignore[no-untyped-call]
        samples=samples,
    )


def transcript_name_ok(name: object) -> bool:
    """Whether a transcript name from a worker is a plain ``SESSION.jsonl``: one file name,
    no directory, no ``..``, nothing hidden."""
    return isinstance(name, str) and bool(_SESSION_FILE.fullmatch(name)) and ".." not in name


def _keep(returned: _Returned, config: RunConfig) -> TaskResult:
    """The worker's result, its transcript written into the report when the name is plain;
    a worker that sends another name gets its episode counted as a harness error."""
    result = returned.result
    if returned.transcript is None or config.transcripts_dir is None:
        return result
    name, text = returned.transcript
    if not transcript_name_ok(name):
        detail = f"a worker sent a transcript named {str(name)[:80]!r}: not written"
        return TaskResult(id=result.id, status="error", detail=detail, sample=result.sample)
    config.transcripts_dir.mkdir(parents=True, exist_ok=True)
    (config.transcripts_dir / name).write_text(text, encoding="utf-8")
    return result


def _private_ray_token() -> None:
    """Ray's default token, ``~/.ray/auth_token``, lets whoever reads it join the cluster;
    Ray writes it with the default umask (0644). Made here first, 0600 in a 0700 directory,
    when Ray would make it (token auth not turned off, no token given another way), and
    tightened when it is already there and ours."""
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return  # the user's own arrangement
    home_ray = Path.home() / ".ray"
    token = home_ray / "auth_token"
    with contextlib.suppress(OSError):  # best effort: what fails here is tightened below
        with contextlib.suppress(FileExistsError):
            home_ray.mkdir(mode=0o700)
        if os.environ.get("RAY_AUTH_MODE", "token").lower() == "token":
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with contextlib.suppress(FileExistsError):
                fd = os.open(token, flags, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(secrets.token_hex(32))  # what Ray's own generator makes
    for path, mode in ((home_ray, 0o700), (token, 0o600)):
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            loose = stat.S_IMODE(st.st_mode) & ~mode
            if loose and st.st_uid == os.getuid() and not stat.S_ISLNK(st.st_mode):
                os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
