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
from tests.unprivileged import make_traversable

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


# --- review 3: `-u user:password` of any program, and the ps options the recipes use ----------


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["wget", "-u", "admin:Wg-Alder-41"], ["wget", "-u", "admin:[hidden]"]),
        (["myclient", "-u", "bob:Mc-Birch-42", "h"], ["myclient", "-u", "bob:[hidden]", "h"]),
        (["myclient", "-ubob:Mc-Cedar-43"], ["myclient", "-ubob:[hidden]"]),
        (["app", "--user=ann:Ap-Dune-44"], ["app", "--user=ann:[hidden]"]),
        (["app", "--user", "ann:Ap-Elm-45"], ["app", "--user", "ann:[hidden]"]),
        (["app", "--proxy-user", "p:Ap-Fern-46"], ["app", "--proxy-user", "p:[hidden]"]),
        (["app", "-U", "DOM\\bob%Ap-Gorse-47"], ["app", "-U", "DOM\\bob%[hidden]"]),
        (["lftp", "-u", "bob,Lf-Heath-48", "h"], ["lftp", "-u", "bob,[hidden]", "h"]),
        (["rsync", "bob:Rs-Iris-49@host:/x"], ["rsync", "bob:[hidden]@host:/x"]),
        (["sqlplus", "scott/Sq-Kelp-50@db"], ["sqlplus", "scott/[hidden]@db"]),
        # what is not a password stays
        (
            ["git", "push", "-u", "origin", "main:main"],
            ["git", "push", "-u", "origin", "main:main"],
        ),
        (["sort", "-u", "-t:", "f"], ["sort", "-u", "-t:", "f"]),
        (["date", "-u", "+%Y-%m"], ["date", "-u", "+%Y-%m"]),
        (["ps", "-u", "root"], ["ps", "-u", "root"]),
        (["ssh", "git@github.com:org/repo"], ["ssh", "git@github.com:org/repo"]),
    ],
)
def test_the_password_after_a_user_option_is_hidden_whatever_the_program(
    args: list[str], shown: list[str]
) -> None:
    assert hide_secrets(args) == shown


_USER_PASS_VALUES = ("Up-Larch-51", "Up-Moss-52", "Up-Nettle-53", "Up-Oak-54")


def _user_pass_argvs(tag: str) -> list[list[str]]:
    a, b, c, d = _USER_PASS_VALUES
    return [
        ["bash", "-c", f"exec -a 'fetcher -u admin:{a} http://h {tag}' sleep 300"],
        ["bash", "-c", "sleep 300; :", tag, "--user", f"svc:{b}"],
        ["bash", "-c", "sleep 300; :", tag, f"-uroot:{c}"],
        ["bash", "-c", f"exec -a 'rsync -a bob:{d}@backup:/srv {tag}' sleep 300"],
    ]


@pytest.fixture
def user_pass_processes() -> Iterator[str]:
    tag = f"sa-up-{uuid.uuid4().hex[:8]}"
    procs = [subprocess.Popen(a, env={"PATH": "/usr/bin:/bin"}) for a in _user_pass_argvs(tag)]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until each ``exec -a`` has given its title
        if not any(b"exec -a" in Path(f"/proc/{p.pid}/cmdline").read_bytes() for p in procs):
            break
        time.sleep(0.02)
    yield tag
    for proc in procs:
        proc.kill()
        proc.wait()


_USER_PASS_VIEWS = ("ps auxww", "ps -ef", "ps -eo pid,args", "pgrep -af sa-up-")


def _check_user_pass(outputs: list[tuple[int, str]], tag: str) -> None:
    for view, (code, out) in zip(_USER_PASS_VIEWS, outputs, strict=True):
        assert code == 0, (view, out)
        assert out.count(tag) >= 4, (view, out)
        left = [v for v in _USER_PASS_VALUES if v in out]
        assert not left, (view, left, out)
        assert "admin:[hidden]" in out and "bob:[hidden]@backup" in out, (view, out)


def test_user_password_options_are_hidden_in_the_host_view(
    workspace: Path, user_pass_processes: str
) -> None:
    tag = user_pass_processes
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        outputs = [s.run(f"{view} | grep -F {tag} | grep -v grep") for view in _USER_PASS_VIEWS]
    _check_user_pass([(r.exit_code, r.output) for r in outputs], tag)


def test_user_password_options_are_hidden_for_an_unprivileged_user(
    as_nobody: Runner, user_pass_processes: str
) -> None:
    tag = user_pass_processes
    results = as_nobody([f"{view} | grep -F {tag} | grep -v grep" for view in _USER_PASS_VIEWS])
    _check_user_pass([(r["exit_code"], r["output"]) for r in results], tag)


@pytest.fixture
def named_processes(tmp_path: Path) -> Iterator[str]:
    """Two host processes of a program with a name of its own (``ps -C`` matches the
    program's name, not its arguments), and a TCP listener on a free port."""
    name = f"saq{uuid.uuid4().hex[:8]}"
    program = tmp_path / name
    program.write_bytes(Path("/bin/sleep").read_bytes())
    program.chmod(0o755)
    make_traversable(tmp_path)
    procs = [subprocess.Popen([str(program), "300"]) for _ in range(2)]
    yield name
    for proc in procs:
        proc.kill()
        proc.wait()


# (command, check of its output) for the ps forms of the recipes (procs.toml) and friends
def _ps_forms(name: str) -> list[tuple[str, Callable[[str], bool]]]:
    def rows(out: str) -> list[list[str]]:
        return [line.split() for line in out.splitlines() if line.strip()]

    def descending(column: int) -> Callable[[str], bool]:
        def check(out: str) -> bool:
            values = [int(r[column]) for r in rows(out)]
            return len(values) == 5 and values == sorted(values, reverse=True)

        return check

    return [
        # top_memory / top_cpu: --no-headers, so the first line is a process
        (
            "ps -eo pid,user,rss,comm --sort=-rss --no-headers | sed -n '1,5p'",
            descending(2),
        ),
        ("ps -eo pid,user,%cpu,comm --sort=-%cpu --no-headers | sed -n '1,5p'", lambda o: all(
            r[0].isdigit() for r in rows(o)) and len(rows(o)) == 5),
        ("ps aux --sort=-rss | sed -n '1,6p' | tail -n 5", descending(5)),
        ("ps aux --sort=-rss | head -n 1", lambda o: o.split()[:2] == ["USER", "PID"]),
        # count_processes, process_memory, process_threads, process_user, process_runtime
        (f"{{ ps -C {name} --no-headers || true; }} | wc -l", lambda o: o.strip() == "2"),
        (f"ps h -C {name} -o pid", lambda o: len(rows(o)) == 2 and all(
            r[0].isdigit() for r in rows(o))),
        (f"ps -C {name} -o rss= | awk '{{s += $1}} END {{print (s > 0)}}'", lambda o: o.strip()
         == "1"),
        (f"ps -o pid=,nlwp=,comm= -C {name}", lambda o: [r[1:] for r in rows(o)] == [
            ["1", name]] * 2),
        (f"ps -o user=,pid=,comm= -C {name}", lambda o: len(rows(o)) == 2 and rows(o)[0][2]
         == name),
        (f"ps -o pid,etime,lstart,comm -C {name}", lambda o: rows(o)[0] == [
            "PID", "ELAPSED", "STARTED", "COMMAND"] and len(rows(o)) == 3 and len(
            rows(o)[1]) == 8),
        (f"ps -o ni= -C {name}", lambda o: [r for r in rows(o)] == [["0"]] * 2),
        (f"ps -fC {name}", lambda o: rows(o)[0][0] == "UID" and rows(o)[1][-1] == "300"),
        # processes_of_user, process_tree, zombie_processes, count_all_processes
        ("ps -u root -o pid,etime,args | head -n 2", lambda o: rows(o)[0] == [
            "PID", "ELAPSED", "COMMAND"]),
        ("ps -ef --forest | grep -c '\\\\_ '", lambda o: int(o.strip()) > 0),
        ("ps -e --no-headers | wc -l", lambda o: int(o.strip()) > 5),
        ("ps -C nosuchprogram-sa; echo rc=$?", lambda o: o.strip().endswith("rc=1")),
        # pgrep and pidof
        (f"pgrep -c -x {name}", lambda o: o.strip() == "2"),
        (f"pgrep -o -x {name}; pgrep -n -x {name}", lambda o: len(set(o.split())) == 2),
        (f"pidof {name} | wc -w", lambda o: o.strip() == "2"),
        # the sandbox's own processes for what the view does not answer
        ("ps -p 1 -o comm=", lambda o: o.startswith("python")),
    ]  # fmt: skip


def _check_ps_forms(forms: list[tuple[str, Callable[[str], bool]]], outputs: list[str]) -> None:
    wrong = [(cmd, out) for (cmd, check), out in zip(forms, outputs, strict=True) if not check(out)]
    assert not wrong, wrong


def test_the_ps_options_the_recipes_use_are_honoured(workspace: Path, named_processes: str) -> None:
    forms = _ps_forms(named_processes)
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        outputs = [s.run(cmd).output for cmd, _ in forms]
    _check_ps_forms(forms, outputs)


def test_the_ps_options_the_recipes_use_are_honoured_for_an_unprivileged_user(
    as_nobody: Runner, named_processes: str
) -> None:
    forms = _ps_forms(named_processes)
    results = as_nobody([cmd for cmd, _ in forms], timeout=10)
    _check_ps_forms(forms, [r["output"] for r in results])


@pytest.fixture
def listener() -> Iterator[int]:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def test_ss_filters_and_headers_are_honoured(workspace: Path, listener: int) -> None:
    port = listener
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        plain = s.run("ss -Hltn | awk '{print $4}' | sort -u").output.split()
        used = s.run(f"ss -Hltn 'sport = :{port}' | grep -q . && echo used || echo free")
        free = s.run(f"ss -Hltn 'sport = :{port + 1}' | grep -q . && echo used || echo free")
        headed = s.run("ss -ltn").output.splitlines()[0]
        netstat = s.run(f"netstat -tln | grep -w 127.0.0.1:{port}").output.split()
    assert f"127.0.0.1:{port}" in plain and "Local" not in plain
    assert used.output.strip() == "used"
    assert free.output.strip() == ("used" if port + 1 in _host_ports() else "free")
    assert headed.startswith("State") and "Local Address:Port" in headed
    assert netstat[:1] == ["tcp"] and netstat[-1] == "LISTEN"


def _host_ports() -> set[int]:
    out = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True).stdout
    return {int(line.split()[3].rsplit(":", 1)[1]) for line in out.splitlines() if line.strip()}
