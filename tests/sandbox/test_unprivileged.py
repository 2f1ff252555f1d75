"""The sandbox run by an ordinary user (``nobody``), the way the product is used.

Root-run bwrap keeps capabilities unless told otherwise, so passing as root proves little
about an ordinary user and vice versa: these probes run the real package in a separate,
unprivileged Python process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Runner = Callable[..., list[dict[str, Any]]]


def outputs(results: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(r["exit_code"], r["output"]) for r in results]


def test_unprivileged_default_profile_confines_writes_and_drops_privileges(
    as_nobody: Runner,
) -> None:
    results = outputs(
        as_nobody(
            [
                "id -u",
                "touch /etc/probe",
                "touch granted && echo ok",
                "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status",
                "cp /bin/bash ./suid && chmod u+s ./suid && ./suid -p -c 'id -u'",
                "unshare -U true",
                "ls /proc | grep -c '^[0-9]'",
                "bash -c 'echo > /dev/tcp/1.1.1.1/443'",
                "env | cut -d= -f1 | sort | tr '\\n' ' '",
            ]
        )
    )
    assert results[0] == (0, "65534\n")
    assert results[1][0] != 0
    assert results[2] == (0, "ok\n")
    assert "CapEff:\t0000000000000000" in results[3][1] and "NoNewPrivs:\t1" in results[3][1]
    assert results[4][1].strip() == "65534"
    assert results[5][0] != 0
    assert int(results[6][1]) < 12
    assert results[7][0] != 0
    assert "PYTHONPATH" not in results[8][1] and "PATH" in results[8][1]
    assert (as_nobody.workdir / "granted").exists()  # type: ignore[attr-defined]


def test_unprivileged_timeouts_kill_every_process_and_keep_the_shell(as_nobody: Runner) -> None:
    results = as_nobody(
        [
            "sleep 600 & setsid sleep 600 & sleep 600",
            # the sandbox's own pid namespace; a killed process may stay a zombie until its
            # parent reaps it, and a zombie is dead: count only the living
            "/usr/bin/pgrep -c -r R,S,D,T,t sleep || true",
            "exit 4",
            "echo alive",
        ],
        timeout=1,
    )
    assert results[0]["timed_out"]
    assert results[1]["output"].strip() == "0"
    assert results[2]["exit_code"] == 4 and "were not kept" in results[2]["note"]
    assert results[3]["output"] == "alive\n"


def test_unprivileged_ephemeral_root_is_writable_below_system_directories(
    as_nobody: Runner,
) -> None:
    results = outputs(
        as_nobody(
            [
                "id -u",
                "mkdir -p /var/log/app /etc/app /opt/x /data /home/user/d && "
                "echo a > /var/log/app/l && echo b > /etc/app/c && cat /var/log/app/l /etc/app/c",
                "grep CapEff /proc/self/status",
            ],
            profile="ephemeral",
        )
    )
    assert results[0] == (0, "0\n")
    assert results[1] == (0, "a\nb\n")
    assert "0000000000000000" in results[2][1]
