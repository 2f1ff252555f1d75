"""What the sandbox lets a command see, write and reach: checklist sections A–E.

Every blocked probe sits beside a positive control, so a sandbox that blocks everything
cannot pass. "exit 0 == breach" for the probes that should fail.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellagent.errors import SandboxUnavailable, UsageError
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.bwrap import find_bwrap
from shellagent.sandbox.driver import interpreter


def run(session: Sandbox, command: str) -> tuple[int, str]:
    result = session.run(command)
    return result.exit_code, result.output


# -- A. filesystem --------------------------------------------------------------------


def test_writes_outside_granted_paths_fail_and_inside_succeed(
    session: Sandbox, workspace: Path, home: Path
) -> None:
    code, _ = run(session, "touch /etc/sa-probe || touch $HOME/sa-probe || touch /usr/sa-probe")
    assert code != 0
    assert not Path("/etc/sa-probe").exists() and not (home / "sa-probe").exists()
    assert run(session, "touch /tmp/host-probe; echo ok")[1] == "ok\n"
    assert not Path("/tmp/host-probe").exists()  # /tmp is private
    assert run(session, "touch ok-file && echo ok")[1] == "ok\n"
    assert (workspace / "ok-file").exists()


def test_a_symlink_in_the_workspace_cannot_redirect_a_write(
    session: Sandbox, workspace: Path, home: Path
) -> None:
    target = home / "outside-target"
    code, _ = run(session, f"ln -s {target} link && echo x > link")
    assert code != 0
    assert not target.exists()


def test_git_hooks_and_config_are_read_only_but_objects_are_writable(
    session: Sandbox, workspace: Path
) -> None:
    for path in (".git/hooks/pre-commit", ".git/config"):
        assert run(session, f"echo evil >> {path}")[0] != 0, path
    assert "evil" not in (workspace / ".git/config").read_text()
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert run(session, "touch .git/objects/probe && echo ok")[1] == "ok\n"
    assert (
        run(
            session,
            "git add README && git -c user.email=a@b -c user.name=a "
            "commit -qm one && echo committed",
        )[1]
        == "committed\n"
    )


def test_protected_paths_that_do_not_exist_yet_cannot_be_created(workspace: Path) -> None:
    subprocess.run(["rm", "-rf", str(workspace / ".git/hooks")], check=True)
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        code, _ = run(s, "mkdir -p .git/hooks && echo x > .git/hooks/post-checkout")
        assert code != 0
        assert run(s, "rm -rf .git/hooks; mv .git/hooks .git/h2")[0] != 0
    assert not (workspace / ".git/hooks/post-checkout").exists()
    # The mount point bwrap needed is removed again once the sandbox is gone.
    assert not (workspace / ".git/hooks").exists()


def test_a_protected_path_replaced_by_a_symlink_is_refused(workspace: Path) -> None:
    hooks = workspace / ".git/hooks"
    subprocess.run(["rm", "-rf", str(hooks)], check=True)
    (workspace / "h").mkdir()
    hooks.symlink_to(workspace / "h")
    with pytest.raises(UsageError, match="symlink"):
        Sandbox(get_profile("default", cwd=workspace))


def test_nested_repositories_are_protected(workspace: Path) -> None:
    nested = workspace / "vendor/x"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        assert run(s, "echo x > vendor/x/.git/hooks/pre-commit")[0] != 0
        assert run(s, "echo x > vendor/x/file && echo ok")[1] == "ok\n"


def test_a_writable_grant_that_resolves_to_a_secret_is_refused(home: Path, workspace: Path) -> None:
    (workspace / "cache").symlink_to(home / ".ssh")
    profile = get_profile("default", cwd=workspace).with_options(writable=[workspace / "cache"])
    with pytest.raises(UsageError, match="protected"):
        Sandbox(profile)


def test_secrets_are_unreadable_and_ordinary_files_readable(session: Sandbox, home: Path) -> None:
    probe = (
        "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc ~/.gnupg/private.key "
        "~/.bash_history .env /etc/shadow 2>/dev/null; ls -A ~/.ssh"
    )
    _, output = run(session, probe)
    for secret in (
        "PRIVATE-KEY-SECRET",
        "AWSSECRET",
        "NETRCSECRET",
        "GPGSECRET",
        "HISTSECRET",
        "DOTENVSECRET",
        "root:",
    ):
        assert secret not in output
    assert run(session, "cat ~/notes.txt")[1] == "ordinary notes"
    assert run(session, "cat README")[1] == "hello\n"


def test_own_state_directories_are_invisible(home: Path, workspace: Path) -> None:
    from shellagent import paths

    data = paths.ensure_private_dir(paths.data_dir())
    (data / "transcript.jsonl").write_text("TRANSCRIPTSECRET")
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        assert "TRANSCRIPTSECRET" not in run(s, f"cat {data}/transcript.jsonl")[1]


def test_no_device_nodes_or_hardlinks_to_protected_files(session: Sandbox) -> None:
    assert run(session, "mknod x c 1 3")[0] != 0
    assert run(session, "ln /etc/passwd hl")[0] != 0


def test_writable_dotfiles_in_the_workspace_are_never_sourced(workspace: Path, home: Path) -> None:
    (workspace / ".bashrc").write_text("echo PWNED\n")
    (workspace / ".profile").write_text("echo PWNED\n")
    (home / ".bashrc").write_text("echo PWNED\n")
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        assert "PWNED" not in run(s, "echo start")[1]
        assert "PWNED" not in run(s, "bash -c 'echo inner'")[1]


def test_granting_the_home_directory_keeps_startup_files_read_only(home: Path) -> None:
    profile = get_profile("default", cwd=home).with_options(writable=[home])
    with Sandbox(profile) as s:
        assert run(s, "echo evil >> ~/.bashrc")[0] != 0
        assert run(s, "echo evil > ~/.zshrc")[0] != 0
        assert run(s, "mkdir -p ~/.config/autostart && touch ~/.config/autostart/x")[0] != 0
        assert run(s, "echo fine > ~/notes2.txt && echo ok")[1] == "ok\n"
    assert "evil" not in (home / ".bashrc").read_text()
    # The mount points bwrap had to create are removed afterwards.
    assert not (home / ".zshrc").exists() and not (home / ".config").exists()


# -- B. network -----------------------------------------------------------------------


@pytest.fixture
def host_listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.sendall(b"HOSTSERVICE\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


CONNECT = (
    'python3 -c \'import socket,sys; s=socket.create_connection(("{host}", {port}), 2);'
    " print(s.recv(64).decode())'"
)


def test_network_is_off_by_default(session: Sandbox) -> None:
    probes = [
        "getent ahosts example.com",
        "bash -c 'echo > /dev/tcp/1.1.1.1/443'",
        CONNECT.format(host="1.1.1.1", port=443),
        "python3 -c 'import urllib.request as u; u.urlopen(\"http://example.com\", timeout=2)'",
    ]
    for probe in probes:
        assert run(session, probe)[0] != 0, probe
    assert run(session, "ip -o link 2>/dev/null | grep -vc ' lo:' || true")[1].strip() in ("0", "")


def test_host_loopback_services_are_unreachable_without_network(
    session: Sandbox, host_listener: int
) -> None:
    code, output = run(session, CONNECT.format(host="127.0.0.1", port=host_listener))
    assert code != 0 and "HOSTSERVICE" not in output


def test_network_option_reaches_host_services(workspace: Path, host_listener: int) -> None:
    profile = get_profile("default", cwd=workspace).with_options(network=True)
    with Sandbox(profile) as s:
        assert "HOSTSERVICE" in run(s, CONNECT.format(host="127.0.0.1", port=host_listener))[1]


def test_abstract_unix_sockets_of_the_host_are_unreachable(session: Sandbox) -> None:
    name = f"shellagent-probe-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen(1)
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect("\0" + name)  # positive control: reachable from the host
        client.close()
        probe = (
            f"python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\")'"
        )
        assert run(session, probe)[0] != 0
    finally:
        server.close()


# -- C. process and kernel surface ----------------------------------------------------


def test_no_terminal_so_tiocsti_injection_fails(session: Sandbox) -> None:
    probe = (
        "python3 -c 'import fcntl,termios,sys\n"
        "for fd in (0,1,2):\n"
        '  try: fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("INJECTED")\n'
        "  except OSError as e: print(e.errno)\n"
        'try: open("/dev/tty"); print("TTY")\n'
        'except OSError as e: print("notty", e.errno)\''
    )
    code, output = run(session, probe)
    assert code == 0 and "INJECTED" not in output and "TTY\n" not in output
    assert "notty" in output
    assert run(session, "ps -o tty= -p $$")[1].strip() == "?"


def test_pid_namespace_hides_host_processes(session: Sandbox) -> None:
    count = int(run(session, "ls /proc | grep -c '^[0-9]'")[1])
    assert count < 12
    assert str(os.getpid()) not in run(session, "ls /proc")[1].split()
    # pid 1 is shellagent's driver (see sandbox/driver.py), not a host process
    assert "shellagent.sandbox.driver" in run(session, "tr '\\0' ' ' < /proc/1/cmdline")[1]


def test_no_capabilities_and_no_new_privileges(session: Sandbox) -> None:
    output = run(session, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status")[1]
    assert "CapEff:\t0000000000000000" in output
    assert "CapBnd:\t0000000000000000" in output
    assert "NoNewPrivs:\t1" in output
    assert run(session, "sudo -n true")[0] != 0


def test_no_namespace_or_mount_games(session: Sandbox) -> None:
    for probe in (
        "unshare -U true",
        "unshare -m true",
        "mount -t tmpfs x /mnt",
        "python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)'",
    ):
        assert run(session, probe)[0] != 0, probe
    assert run(session, "true")[0] == 0


def test_a_command_that_looks_like_bwrap_options_is_just_a_command(session: Sandbox) -> None:
    code, output = run(session, "--bind / / true")
    assert code == 127 and "not found" in output
    code, _ = run(session, "'--ro-bind' /tmp /tmp")
    assert code == 127


def test_killing_the_sandbox_stops_background_work(workspace: Path) -> None:
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        s.run("(while :; do date >> tick; sleep 0.1; done) &")
        time.sleep(0.5)
        assert s.pid is not None
        os.killpg(s.pid, 9)
        time.sleep(0.3)
        size = (workspace / "tick").stat().st_size
        time.sleep(0.5)
        assert (workspace / "tick").stat().st_size == size
        assert s.run("echo again").output.endswith("again\n")


def test_missing_bwrap_fails_closed_with_the_fix(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    find_bwrap.cache_clear()
    monkeypatch.setenv("SHELLAGENT_BWRAP", "/nonexistent/bwrap")
    try:
        with pytest.raises(SandboxUnavailable) as info:
            Sandbox(get_profile("default", cwd=workspace))
        assert "apt-get install bubblewrap" in info.value.show()
    finally:
        find_bwrap.cache_clear()


def test_a_bwrap_that_cannot_start_is_reported_not_bypassed(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.11.0'; exit 0; }\n"
        "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1\n"
    )
    fake.chmod(0o755)
    find_bwrap.cache_clear()
    monkeypatch.setenv("SHELLAGENT_BWRAP", str(fake))
    try:
        with pytest.raises(SandboxUnavailable, match="uid map") as info:
            Sandbox(get_profile("default", cwd=workspace))
        assert "sysctl" in (info.value.hint or "")
    finally:
        find_bwrap.cache_clear()


# -- D. IPC and inherited resources ---------------------------------------------------


def test_host_ipc_sockets_and_their_variables_are_absent(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/0/ssh-agent.sock")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus")
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        output = run(s, 'echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS]"; ls -A /run')[1]
        sockets = run(s, "find /run -type s | wc -l")[1]
    # /run holds only the read-only host view (hostview.py), and no socket anywhere below.
    assert output in ("[][]\n", "[][]\nhost\n") and sockets == "0\n"


def test_the_daemon_socket_is_not_reachable_from_inside(workspace: Path) -> None:
    from shellagent import paths

    runtime = paths.ensure_private_dir(paths.runtime_dir())
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(runtime / "daemon.sock"))
    server.listen(1)
    try:
        with Sandbox(get_profile("default", cwd=workspace)) as s:
            assert run(s, f"test -e {runtime}/daemon.sock")[0] != 0
    finally:
        server.close()


def test_commands_inherit_only_the_standard_file_descriptors(session: Sandbox) -> None:
    output = run(session, "ls /proc/self/fd")[1].split()
    assert set(output) <= {"0", "1", "2", "3"}  # 3 is ls's own directory handle
    assert run(session, "readlink /proc/self/fd/0")[1] == "/dev/null\n"


def test_hostname_and_ipc_are_isolated(session: Sandbox) -> None:
    assert run(session, "hostname")[1] == "sandbox\n"
    assert run(session, "cat /proc/sys/kernel/hostname")[1] != socket.gethostname() + "\n"


# -- E. environment -------------------------------------------------------------------


def test_environment_is_cleared_to_the_allowlist(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "OPENAI_API_KEY",
        "HF_TOKEN",
        "LD_PRELOAD",
        "BASH_ENV",
        "PROMPT_COMMAND",
    ):
        monkeypatch.setenv(key, "LEAKED-VALUE" if key != "LD_PRELOAD" else "")
    with Sandbox(get_profile("default", cwd=workspace)) as s:
        env = run(s, "env")[1]
    assert "LEAKED-VALUE" not in env
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    allowed = {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "PAGER",
        "GIT_PAGER",
        "MANPAGER",
        "SYSTEMD_PAGER",
        "LESS",
        "EDITOR",
        "VISUAL",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_TERMINAL_PROMPT",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "DEBIAN_FRONTEND",
        "PIP_NO_INPUT",
        "TERM",
        "HISTFILE",
        "TMPDIR",
        "PWD",
        "SHLVL",
        "OLDPWD",
        "_",
    }
    assert names <= allowed, names - allowed


def test_a_long_git_log_and_an_editor_commit_do_not_hang(session: Sandbox) -> None:
    make = (
        "for i in $(seq 300); do git -c user.email=a@b -c user.name=a commit -q "
        "--allow-empty -m c$i; done; echo made"
    )
    assert session.run(make, timeout=300).output == "made\n"
    result = session.run("git log", timeout=10)
    assert not result.timed_out and result.exit_code == 0
    result = session.run("git -c user.email=a@b -c user.name=a commit --allow-empty", timeout=10)
    assert not result.timed_out


# -- ephemeral profile ----------------------------------------------------------------


def test_ephemeral_root_is_writable_everywhere_and_vanishes(ephemeral: Sandbox) -> None:
    setup = (
        "mkdir -p /var/log/app /opt/tool /data /home/user/x /etc/app && "
        "echo log > /var/log/app/a.log && echo conf > /etc/app/c && touch /usr/local/bin/t"
        " && echo ok"
    )
    assert run(ephemeral, setup)[1] == "ok\n"
    assert not Path("/var/log/app/a.log").exists() and not Path("/data").exists()
    assert run(ephemeral, "cat /var/log/app/a.log /etc/app/c")[1] == "log\nconf\n"
    with Sandbox("ephemeral") as fresh:
        assert run(fresh, "test -e /var/log/app/a.log")[0] != 0


def test_ephemeral_sees_no_user_files_or_secrets(ephemeral: Sandbox, home: Path) -> None:
    # The only thing below /home or /root is the driver's interpreter, if it lives there
    # (pyenv, uv), bound read-only.
    bound = [Path(p) for p in interpreter()[1]]
    extra = {
        place: {p.relative_to(place).parts[0] for p in bound if p.is_relative_to(place)}
        for place in ("/home", "/root")
    }
    expected = ["/home:", *sorted({"user"} | extra["/home"]), "/root:", *sorted(extra["/root"])]
    assert run(ephemeral, "ls -A /home /root")[1].split() == expected
    assert run(ephemeral, f"ls {home}")[0] != 0
    assert "root:" not in run(ephemeral, "cat /etc/shadow")[1]


# -- seccomp --------------------------------------------------------------------------

SYSCALL_PROBE = """python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *[ctypes.c_ulong(a) for a in args])
    return os.strerror(ctypes.get_errno()) if r == -1 else "ok"
print("{name}", call({nr}, {args}))
'"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers are x86_64 here")
@pytest.mark.parametrize(
    ("name", "nr", "args", "expected"),
    [
        ("TIOCSTI", 16, "0, 0x5412, 0", "Operation not permitted"),
        ("TIOCSTI high bits", 16, "0, (0x123 << 32) | 0x5412, 0", "Operation not permitted"),
        ("TIOCLINUX", 16, "0, 0x541C, 0", "Operation not permitted"),
        ("io_uring_setup", 425, "1, 0", "Operation not permitted"),
        ("ptrace", 101, "16, 1, 0, 0", "Operation not permitted"),
        ("bpf", 321, "0, 0, 0", "Operation not permitted"),
        ("keyctl", 250, "0, 0", "Operation not permitted"),
        ("userfaultfd", 323, "0", "Operation not permitted"),
        ("clone3", 435, "0, 0", "Function not implemented"),
        # positive control: an ordinary ioctl reaches the kernel (ENOTTY on /dev/null)
        ("TCGETS", 16, "0, 0x5401, 0", "Inappropriate ioctl for device"),
    ],
)
def test_seccomp_filter_blocks_dangerous_syscalls(
    session: Sandbox, name: str, nr: int, args: str, expected: str
) -> None:
    output = run(session, SYSCALL_PROBE.format(name=name, nr=nr, args=args))[1]
    assert output == f"{name} {expected}\n"


def test_raw_packet_sockets_are_refused(session: Sandbox) -> None:
    probe = "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'"
    assert run(session, probe)[0] != 0
    assert run(session, "python3 -c 'import socket; socket.socket()' && echo inet")[1] == "inet\n"


@pytest.mark.skipif(os.getuid() != 0, reason="only root may map every id")
def test_ephemeral_run_by_root_maps_every_id_for_task_setups(ephemeral: Sandbox) -> None:
    setup = (
        "touch /usr/local/bin/s && chown nobody:nogroup /usr/local/bin/s && "
        "stat -c %U:%G /usr/local/bin/s && mkdir -p /etc/postgresql/14/main && "
        "touch -d '100 days ago' /var/spool/mail/user1 && echo ok"
    )
    assert run(ephemeral, setup) == (0, "nobody:nogroup\nok\n")
    assert not Path("/usr/local/bin/s").exists()


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers are x86_64 here")
@pytest.mark.parametrize("profile", ["default", "ephemeral"])
def test_no_profile_can_create_a_nested_user_namespace(workspace: Path, profile: str) -> None:
    probe = SYSCALL_PROBE.format(name="clone-newuser", nr=56, args="0x10000000 | 17, 0, 0, 0, 0")
    with Sandbox(get_profile(profile, cwd=workspace)) as s:
        output = run(s, probe)[1]
        assert output == "clone-newuser Operation not permitted\n"
        assert run(s, "unshare -U true")[0] != 0
