"""The host's processes seen from the sandbox: listed (ps, pgrep, pidof), with secrets in
their command lines hidden, but never reachable: no environment, no fds, no signals."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.hostview import hide_secrets

Runner = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def host_process() -> Iterator[tuple[int, str]]:
    tag = f"sa-probe-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        ["bash", "-c", "sleep 300; :", tag, "--password", "hunter2"],
        env={"PATH": "/usr/bin:/bin", "PROBE_SECRET": "ENV-SECRET-VALUE"},
    )
    yield proc.pid, tag
    proc.kill()
    proc.wait()


def _probes(pid: int, tag: str) -> list[str]:
    return [
        f"ps aux | grep -F {tag} | grep -v grep",
        f"pgrep -af {tag}",
        f"ps -eo pid,comm,%mem --sort=-%mem | grep -w {pid}",
        f"cat /proc/{pid}/environ; ls /proc/{pid}/fd; kill -9 {pid}",
        "ps -p 1 -o comm=",
    ]


def _check(outputs: list[tuple[int, str]], pid: int, tag: str) -> None:
    listed, pgrep, columns, reach, own = outputs
    assert listed[0] == 0 and tag in listed[1] and str(pid) in listed[1]
    assert "hunter2" not in listed[1] and "--password [hidden]" in listed[1]
    assert pgrep[0] == 0 and pgrep[1].startswith(str(pid))
    assert columns[0] == 0 and "bash" in columns[1]
    assert reach[0] != 0 and "ENV-SECRET-VALUE" not in reach[1]
    assert own[0] == 0 and own[1].startswith("python")  # other uses see the sandbox's own pid 1


def test_host_processes_are_listed_but_out_of_reach(
    workspace: Path, host_process: tuple[int, str]
) -> None:
    pid, tag = host_process
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        outputs = [(r.exit_code, r.output) for r in (s.run(p) for p in _probes(pid, tag))]
    _check(outputs, pid, tag)
    os.kill(pid, 0)  # still alive: the kill inside never reached it


def test_host_processes_are_listed_for_an_unprivileged_user(
    as_nobody: Runner, host_process: tuple[int, str]
) -> None:
    pid, tag = host_process
    results = as_nobody(_probes(pid, tag))
    _check([(r["exit_code"], r["output"]) for r in results], pid, tag)
    os.kill(pid, 0)


def test_a_host_command_line_longer_than_awk_buffers_is_cut_not_fatal(workspace: Path) -> None:
    # A build tool's command line of tens of kilobytes broke `ps aux` (mawk: "sprintf buffer").
    tag = f"sa-long-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        [
            "bash",
            "-c",
            "sleep 300; :",
            tag,
            *(f"/build/objects/unit-{i:05d}.o" for i in range(1000)),
        ]
    )
    try:
        with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
            aux = s.run(f"ps aux | grep -F {tag} | grep -v grep")
            custom = s.run(f"ps -eo args,pid | grep -F {tag} | grep -v grep")
    finally:
        proc.kill()
        proc.wait()
    assert aux.exit_code == 0 and str(proc.pid) in aux.output, aux.output[:300]
    assert aux.output.rstrip().endswith("..."), aux.output[-200:]
    assert len(aux.output) < 4096 + 200
    assert custom.exit_code == 0 and str(proc.pid) in custom.output, custom.output[:300]


def test_a_throwaway_root_has_no_host_view(ephemeral: Sandbox) -> None:
    assert ephemeral.run("ls /run/host").exit_code != 0


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["mysql", "-pS3cret", "db"], ["mysql", "-p[hidden]", "db"]),
        (["app", "--token", "abc"], ["app", "--token", "[hidden]"]),
        (["app", "--api-key=xyz"], ["app", "--api-key=[hidden]"]),
        (["env", "DB_PASSWORD=x", "run"], ["env", "DB_PASSWORD=[hidden]", "run"]),
        (["curl", "https://u:p@host/x"], ["curl", "https://[hidden]@host/x"]),
        (["sleep", "300"], ["sleep", "300"]),
        (["python3", "-m", "http.server", "8080"], ["python3", "-m", "http.server", "8080"]),
    ],
)
def test_secret_looking_arguments_are_hidden(args: list[str], shown: list[str]) -> None:
    assert hide_secrets(args) == shown


# --- review 2's M6: credentials on host command lines -----------------------------------------

# (the argv of a host process, the secrets in it); ``exec -a`` gives a process one argv[0]
# string with spaces, as setproctitle does for postgres, nginx, sshd …
_M6_VALUES = {
    "client-secret": "Cs-Aster-11",
    "access-token": "At-Birch-12",
    "bearer": "Br-Cedar-13",
    "private-key": "Pk-Dune-14",
    "db-password": "Dp-Elm-15",
    "jwt": "Jw-Fern-16",
    "pw": "Pw-Gorse-17",
    "auth-header": "Ah-Heath-18",
    "api-key-header": "Ak-Iris-19",
    "mysql-pwd": "Mp-Juniper-20",
    "cookie": "Ck-Kelp-21",
    "redis": "Rc-Larch-22",
    "sshpass": "Sp-Moss-23",
    "curl-user": "Cu-Nettle-24",
    "openssl": "Os-Oak-25",
    "zip": "Zp-Pine-26",
    "proctitle": "Pt-Quince-27",
    "mysql-attached": "Ma-Reed-28",
}
_AWS = "AKIA" + "Q3XV7PLMN2RT5WZB"  # built from parts: no key-shaped literal in the file
_SLACK = "xoxb-" + "1234567890-" + "Abc123Def456"
_ANTHROPIC = "sk-ant-" + "a1B2c3"
_M6_TOKENS = (_AWS, _SLACK, _ANTHROPIC)


def _m6_argvs(tag: str) -> list[list[str]]:
    v = _M6_VALUES
    sleeper = ["bash", "-c", "sleep 300; :", tag]
    return [
        [*sleeper, "--client-secret", v["client-secret"], "--access-token", v["access-token"],
         "--bearer", v["bearer"], "--private-key", v["private-key"], "--db-password",
         v["db-password"], "--jwt", v["jwt"], "--pw", v["pw"]],
        [*sleeper, "-H", f"Authorization: Bearer {v['auth-header']}", "--header",
         f"X-Api-Key: {v['api-key-header']}", f"MYSQL_PWD={v['mysql-pwd']}", "-H",
         f"Cookie: session={v['cookie']}", _AWS, _SLACK, _ANTHROPIC],
        ["bash", "-c", f"exec -a 'redis-cli -a {v['redis']} ping {tag}' sleep 300"],
        ["bash", "-c", f"exec -a 'sshpass -p {v['sshpass']} ssh pi@h {tag}' sleep 300"],
        ["bash", "-c", f"exec -a 'curl -u admin:{v['curl-user']} http://h {tag}' sleep 300"],
        ["bash", "-c", f"exec -a 'openssl enc -k {v['openssl']} {tag}' sleep 300"],
        ["bash", "-c", f"exec -a 'zip -P {v['zip']} a.zip {tag}' sleep 300"],
        ["bash", "-c", f"exec -a 'mysql -u root -p{v['mysql-attached']} {tag}' sleep 300"],
        # a daemon that rewrote its title into one string with a secret option in it
        ["bash", "-c", f"exec -a 'myd: worker --password {v['proctitle']} {tag}' sleep 300"],
    ]  # fmt: skip


def start_m6_processes(tag: str) -> list[subprocess.Popen[bytes]]:
    """The processes of ``_m6_argvs``, once each ``exec -a`` has given its title."""
    procs = [subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin"}) for argv in _m6_argvs(tag)]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = [Path(f"/proc/{p.pid}/cmdline").read_bytes() for p in procs]
        if not any(b"exec -a" in line for line in lines):
            break
        time.sleep(0.02)
    return procs


@pytest.fixture
def m6_processes() -> Iterator[str]:
    tag = f"sa-m6-{uuid.uuid4().hex[:8]}"
    procs = start_m6_processes(tag)
    yield tag
    for proc in procs:
        proc.kill()
        proc.wait()


_M6_KEPT = (
    "--client-secret [hidden]",
    "Authorization: Bearer [hidden]",
    "redis-cli -a",
    "X-Api-Key: [hidden]",
    "MYSQL_PWD=[hidden]",
    "curl -u admin:[hidden]",
)


def _check_m6(listed: tuple[int, str], tag: str) -> None:
    code, out = listed
    assert code == 0, out
    assert out.count(tag) >= 9, out  # every process is listed
    left = [v for v in (*_M6_VALUES.values(), *_M6_TOKENS) if v in out]
    assert not left, (left, out)
    # what stays readable: the option names, the programs, the header names and schemes
    for kept in _M6_KEPT:
        assert kept in out, (kept, out)


def test_credentials_on_host_command_lines_are_hidden(workspace: Path, m6_processes: str) -> None:
    tag = m6_processes
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        r = s.run(f"ps auxww | grep -F {tag} | grep -v grep")
    _check_m6((r.exit_code, r.output), tag)


def test_credentials_on_host_command_lines_are_hidden_for_an_unprivileged_user(
    as_nobody: Runner, m6_processes: str
) -> None:
    tag = m6_processes
    (result,) = as_nobody([f"ps auxww | grep -F {tag} | grep -v grep"])
    _check_m6((result["exit_code"], result["output"]), tag)


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["postgres: alice shop [local] idle"], ["postgres:", "alice", "shop", "[local]", "idle"]),
        (["myd --token abc --port 80"], ["myd", "--token", "[hidden]", "--port", "80"]),
        (["curl", "-k", "https://a.example"], ["curl", "-k", "https://a.example"]),
        (["app", "--no-password", "run"], ["app", "--no-password", "run"]),
        (
            ["curl", "-H", "Cookie: a=X1; b=X2", "u"],
            ["curl", "-H", "Cookie:", "[hidden]", "[hidden]", "u"],
        ),  # fmt: skip
        (["mysql", "-p", "shop"], ["mysql", "-p", "shop"]),  # -p alone: asks for it
        # a script of ``bash -c``: its words are read without their quotes
        (
            ["bash", "-c", "sshpass -p 'Qx-Vetch-33' ssh h"],
            ["bash", "-c", "sshpass", "-p", "'[hidden]'", "ssh", "h"],
        ),
        (
            ["bash", "-c", "exec -a 'redis-cli -a Rx-Wold-34 ping' sleep 9"],
            ["bash", "-c", "exec", "-a", "'[hidden]", "-a", "[hidden]", "ping'", "sleep", "9"],
        ),
    ],
)
def test_single_string_command_lines_are_split_and_options_read(
    args: list[str], shown: list[str]
) -> None:
    assert hide_secrets(args) == shown


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["app", "-k", "Kx-Tern-31"], ["app", "-k", "[hidden]"]),
        (["app", "-P", "Px-Umber-32"], ["app", "-P", "[hidden]"]),
        (["sort", "-k", "2", "data.csv"], ["sort", "-k", "2", "data.csv"]),
        (["xargs", "-P", "4", "gzip"], ["xargs", "-P", "4", "gzip"]),
        (["curl", "-k", "https://a.example"], ["curl", "-k", "https://a.example"]),
    ],
)
def test_the_value_after_k_and_p_is_hidden_unless_a_number_path_or_url(
    args: list[str], shown: list[str]
) -> None:
    assert hide_secrets(args) == shown
