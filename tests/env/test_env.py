"""``env serve``: episodes over real HTTP on loopback, each in its own real sandbox."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.env import EnvClient, EnvError, EnvServer, Episodes, ShellEnv
from shellagent.env.client import StepReply
from shellagent.errors import InputError
from shellagent.eval import Task

TASKS = {
    "make-x": Task(
        id="make-x",
        task="create /data/x",
        setup_commands=("mkdir -p /data",),
        success_condition="[ -f /data/x ]",
    ),
    "answer": Task(
        id="answer",
        task="how many lines does /data/f have?",
        setup_commands=("mkdir -p /data", "printf 'a\\nb\\nc\\n' > /data/f"),
        success_condition='grep -qx 3 "$ANSWER"',
    ),
}


@pytest.fixture
def served() -> Iterator[tuple[EnvServer, EnvClient]]:
    server = EnvServer(Episodes(TASKS, idle_s=300.0), port=0)
    server.start()
    try:
        yield server, EnvClient(server.url, server.token, timeout_s=120)
    finally:
        server.shutdown()


def raw(url: str, path: str, body: bytes | None, token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_reset_step_close_over_plain_http_solve_a_task_and_reward_it(
    served: tuple[EnvServer, EnvClient],
) -> None:
    server, client = served
    assert sorted(client.tasks()) == ["answer", "make-x"]
    status, started = raw(server.url, "/reset", b'{"task_id": "make-x"}', server.token)
    assert status == 200 and started["observation"] == "create /data/x"
    episode = started["episode"]
    body = json.dumps({"episode": episode, "command": "touch /data/x && echo made"}).encode()
    status, step = raw(server.url, "/step", body, server.token)
    assert status == 200
    assert (step["output"].strip(), step["exit_code"], step["done"]) == ("made", 0, False)
    status, end = raw(server.url, "/close", json.dumps({"episode": episode}).encode(), server.token)
    assert status == 200 and end["done"] is True and end["success"] is True
    assert end["reward"] > 0.5
    assert len(server.episodes) == 0  # closed: its sandbox is gone
    status, gone = raw(server.url, "/step", body, server.token)
    assert status == 404 and "no episode" in gone["error"]


def test_the_answer_reaches_the_check_and_a_wrong_one_fails(
    served: tuple[EnvServer, EnvClient],
) -> None:
    _, client = served
    for answer, solved in (("3", True), ("4", False)):
        episode = client.reset("answer")["episode"]
        assert client.step(episode, "wc -l < /data/f")["output"].strip() == "3"
        end = client.close(episode, answer=answer)
        assert end["success"] is solved
        assert end["reward"] is not None and (end["reward"] > 0) is solved


def test_a_missing_or_wrong_token_is_refused_before_anything_runs(
    served: tuple[EnvServer, EnvClient],
) -> None:
    server, _ = served
    for token in (None, "wrong", server.token + "x"):
        status, reply = raw(server.url, "/reset", b'{"task_id": "make-x"}', token)
        assert status == 401 and "token" in reply["error"]
    assert len(server.episodes) == 0
    with pytest.raises(EnvError) as caught:
        EnvClient(server.url, "nope").tasks()
    assert caught.value.status == 401


def test_bad_requests_get_a_clear_error_and_the_server_goes_on(
    served: tuple[EnvServer, EnvClient],
) -> None:
    server, client = served
    cases = [
        (b"not json", 400, "not JSON"),
        (b"[1]", 400, "JSON object"),
        (b'{"task_id": "nope"}', 400, "no task with id"),
        (b'{"task": {"id": "t"}}', 400, "task:"),
    ]
    for body, status, text in cases:
        got, reply = raw(server.url, "/reset", body, server.token)
        assert got == status and text in reply["error"], (body, reply)
    got, reply = raw(server.url, "/nowhere", b"{}", server.token)
    assert got == 404
    assert client.tasks()  # still serving


def test_two_concurrent_episodes_are_isolated(served: tuple[EnvServer, EnvClient]) -> None:
    _, client = served
    first = client.reset("make-x")["episode"]
    second = client.reset("make-x")["episode"]
    replies: dict[str, StepReply] = {}

    def work(episode: str, command: str) -> None:
        replies[episode] = client.step(episode, command)

    threads = [
        threading.Thread(target=work, args=(first, "touch /data/x; echo one > /data/who")),
        threading.Thread(target=work, args=(second, "sleep 0.5; cat /data/who; ls /data")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "one" not in replies[second]["output"] and "x" not in replies[second]["output"]
    assert client.close(first)["success"] is True
    assert client.close(second)["success"] is False


def test_one_request_at_a_time_per_episode(served: tuple[EnvServer, EnvClient]) -> None:
    _, client = served
    episode = client.reset("make-x")["episode"]
    slow = threading.Thread(target=client.step, args=(episode, "sleep 2"))
    slow.start()
    time.sleep(0.5)
    with pytest.raises(EnvError) as caught:
        client.step(episode, "true")
    slow.join()
    assert caught.value.status == 409 and "already handling" in caught.value.message
    client.close(episode)


def test_concurrent_resets_never_start_more_episodes_than_the_limit() -> None:
    """Review 3 L2: ten resets at once against ``--max-episodes 2`` started ten sandboxes,
    since the limit was checked before the sandbox and the setup and counted after."""
    from shellagent.sandbox import Sandbox

    started: list[Sandbox] = []

    def counted() -> Sandbox:
        started.append(Sandbox("ephemeral"))
        return started[-1]

    slow = Task(
        id="slow",
        task="wait",
        setup_commands=("sleep 0.3",),
        success_condition="false",
    )
    server = EnvServer(Episodes({"slow": slow}, max_live=2, make_shell=counted), port=0)
    server.start()
    go = threading.Barrier(10)
    replies: list[tuple[int, dict[str, Any]]] = []

    def reset() -> None:
        go.wait()
        replies.append(raw(server.url, "/reset", b'{"task_id": "slow"}', server.token))

    try:
        threads = [threading.Thread(target=reset) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        codes = sorted(code for code, _ in replies)
        assert codes == [200, 200] + [409] * 8, replies
        assert len(started) == 2 and len(server.episodes) == 2
        busy = [reply["error"] for code, reply in replies if code == 409]
        assert all("2 episodes are running" in text for text in busy)
        episode = next(reply["episode"] for code, reply in replies if code == 200)
        raw(server.url, "/close", json.dumps({"episode": episode}).encode(), server.token)
        code, _ = raw(server.url, "/reset", b'{"task_id": "slow"}', server.token)
        assert code == 200 and len(started) == 3  # a closed episode frees its slot
    finally:
        server.shutdown()


def test_a_failed_setup_gives_its_slot_back() -> None:
    broken = Task(id="broken", task="x", setup_commands=("false",), success_condition="false")
    episodes = Episodes({"broken": broken, **TASKS}, max_live=1)
    try:
        for _ in range(2):
            with pytest.raises(InputError, match="setup command failed"):
                episodes.reset("broken")
        assert episodes.reset("make-x") is not None and len(episodes) == 1
    finally:
        episodes.shutdown()


def test_denied_commands_do_not_run_and_the_step_limit_ends_the_episode() -> None:
    episodes = Episodes(TASKS, max_steps=2, policy="default")
    try:
        episode = episodes.reset("make-x")
        denied = episode.step("rm -rf --no-preserve-root /")
        assert denied.decision == "deny" and denied.exit_code is None
        assert "denied by the policy" in denied.output
        last = episode.step("touch /data/x")
        assert last.done is True and last.success is True and last.reward is not None
    finally:
        episodes.shutdown()


def test_an_episode_nobody_touches_is_destroyed_with_its_sandbox() -> None:
    episodes = Episodes(TASKS, idle_s=0.5)
    try:
        episode = episodes.reset("make-x")
        pid = episode.shell.pid
        assert len(episodes) == 1 and pid is not None and Path(f"/proc/{pid}").exists()
        deadline = time.monotonic() + 20
        while len(episodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(episodes) == 0 and episode.shell.pid is None
        assert not Path(f"/proc/{pid}").exists()  # the sandbox's processes are gone
        with pytest.raises(InputError, match="no episode"):
            episodes.use(episode.id)
    finally:
        episodes.shutdown()


def test_the_server_refuses_a_non_loopback_address() -> None:
    with pytest.raises(InputError, match="not a loopback address"):
        EnvServer(Episodes({}), host="0.0.0.0", port=0)


def test_the_gym_style_wrapper_runs_an_episode(served: tuple[EnvServer, EnvClient]) -> None:
    _, client = served
    env = ShellEnv(client, "answer")
    observation, info = env.reset()
    assert observation.startswith("how many lines") and info["task_id"] == "answer"
    output, reward, terminated, truncated, _ = env.step("wc -l < /data/f")
    assert output.strip() == "3" and (reward, terminated, truncated) == (0.0, False, False)
    _, reward, terminated, _, end = env.step("done: 3")
    assert terminated and reward > 0 and end["success"] is True


@pytest.mark.slow
def test_the_cli_serves_until_sigterm_and_leaves_no_sandbox(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(TASKS["make-x"].to_line() + "\n")
    token_file = tmp_path / "token"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shellagent",
            "env",
            "serve",
            str(tasks),
            "--port",
            "0",
            "--token-file",
            str(token_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["token_file"] == str(token_file)
        assert oct(token_file.stat().st_mode & 0o777) == "0o600"
        client = EnvClient(ready["url"], token_file.read_text().strip(), timeout_s=120)
        episode = client.reset("make-x")["episode"]
        client.step(episode, "sleep 0.1")
        proc.send_signal(signal.SIGTERM)  # the trainer goes away mid-episode
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "every episode's sandbox is gone" in err and not token_file.exists()
    children = subprocess.run(
        ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
    ).stdout.strip()
    assert children == ""
