"""A new user's trial: each request of a set asked from a fresh account (``ask -y --apply``).

Issue 40's measure, without a person at the keyboard: a new unprivileged account (made
here, removed at the end unless ``--keep``) runs the installed ``ask`` (the checkout's
``.venv``) with its own daemon, config and cache, in its own home, as a user would after
the README's install. For each request: the home is emptied (dotfiles and the daemon's
state stay, as they would for a user), the request's setup runs as the user, ``ask -y
--apply --json`` asks it from the home folder, and its check runs as the user on the real files
with ``$ANSWER`` the answer ``ask`` gave and ``$LAST_OUTPUT`` the last command's output.

Counted: solved (the check passed), claimed (``ask`` presented it as done), false lines (a
claim whose check failed: the screen said done and it was not), exit codes (0 must mean
done), seconds per request. ``--busy`` runs two CPU spinners beside it ("with both cores
busy"). Run it alone (one model process at a time) and as root (it makes the account).

Two more ways to ask, through ``scripted_user.py`` (a person at the keyboard, scripted):

- ``--person``: every question answered yes, a job to install included (``-y`` never
  installs one: the readme set's "back up Documents weekly" needs it), changes applied;
- ``--refuse``: the first answer refused (a command: "no, that is not what I asked"; a
  "did that do it?": no; an unsure result: not kept), then the alternatives offered picked
  one by one, each from the setup again, until one solves the request: "a refusal led to
  a solution" when one does. ``--first ROWS`` (an earlier run's ``--out``, or an eval's
  records.jsonl) splits the refusals by whether the first answer was right.

    flock /tmp/shellagent-model.lock python bench/newuser_trial.py --set earlier
    flock /tmp/shellagent-model.lock python bench/newuser_trial.py --set newcomer --busy
    flock /tmp/shellagent-model.lock python bench/newuser_trial.py --set readme --person
    flock /tmp/shellagent-model.lock python bench/newuser_trial.py --set newcomer --refuse \
        --first /tmp/nu-newcomer.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import pwd
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPTED_USER = Path(__file__).resolve().parent / "scripted_user.py"
SETS = {
    "earlier": ROOT / "bench" / "data" / "earlier-requests.jsonl",
    "newcomer": ROOT / "bench" / "data" / "newcomer-requests.jsonl",
    "everyday": ROOT / "shellagent" / "taskgen" / "data" / "everyday-answers.jsonl",
    # the requests README's "Using it" shows, as written there
    "readme": ROOT / "bench" / "data" / "readme-requests.jsonl",
}


def as_user(
    user: str, script: str, *, cwd: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``script`` run by bash as ``user`` with a login's environment (HOME, PATH)."""
    return subprocess.run(
        [
            "runuser",
            "-u",
            user,
            "--",
            "env",
            "-i",
            f"HOME={cwd}",
            f"USER={user}",
            f"LOGNAME={user}",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
            "bash",
            "-c",
            script,
        ],  # fmt: skip
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextlib.contextmanager
def account(keep: bool) -> Iterator[tuple[str, str]]:
    """A fresh account (name, home); removed with its home afterwards unless ``keep``."""
    name = f"satrial{os.getpid()}"
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    home = pwd.getpwnam(name).pw_dir
    try:
        yield name, home
    finally:
        subprocess.run(["crontab", "-r", "-u", name], check=False, capture_output=True)
        subprocess.run(["pkill", "-u", name], check=False)
        time.sleep(1)
        if not keep:
            subprocess.run(["userdel", "-r", name], check=False, capture_output=True)


def spin() -> None:
    while True:
        pass


def events(stdout: str) -> list[dict[str, object]]:
    out = []
    for line in stdout.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                out.append(event)
    return out


def prepare(task: dict[str, Any], user: str, home: str) -> str:
    """Empty the home (dotfiles and the daemon's state stay, as a user's would) and run the
    request's setup as the user; what went wrong, or ``""``."""
    as_user(user, "find ~ -mindepth 1 -maxdepth 1 ! -name '.*' -exec rm -rf {} +", cwd=home,
            timeout=60)  # fmt: skip
    setup = " && ".join(str(c) for c in task.get("setup_commands", []) or ["true"])
    made = as_user(user, setup, cwd=home, timeout=120)
    return "" if made.returncode == 0 else made.stderr[-300:] or "the setup failed"


def checked(task: dict[str, Any], user: str, home: str, answer: str, last: str) -> bool:
    """The request's check, as the user on the real files, with ``$ANSWER`` and
    ``$LAST_OUTPUT`` files holding what ``ask`` answered and the last command printed."""
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o755)
        for name, text in (("answer", answer), ("last_output", last)):
            path = Path(scratch) / name
            path.write_text(text)
            path.chmod(0o644)
        check = as_user(
            user,
            f'ANSWER={scratch}/answer LAST_OUTPUT={scratch}/last_output; '
            f'export ANSWER LAST_OUTPUT; {task["success_condition"]}',
            cwd=home, timeout=60,
        )  # fmt: skip
    return check.returncode == 0


def trial(task: dict[str, Any], user: str, home: str, bindir: Path) -> dict[str, object]:
    """One request, from an emptied home: setup, ``ask -y --json``, check."""
    problem = prepare(task, user, home)
    if problem:
        return {"id": task["id"], "status": "invalid", "detail": problem}
    began = time.monotonic()
    asked = as_user(
        user,
        f"{shlex.quote(str(bindir / 'ask'))} -y --apply --json {shlex.quote(str(task['task']))}",
        cwd=home, timeout=600,
    )  # fmt: skip
    seconds = time.monotonic() - began
    seen = events(asked.stdout)
    summary = next((e for e in reversed(seen) if e.get("type") == "summary"), {})
    ran = [e for e in seen if e.get("type") == "result"]
    answer = str(summary.get("summary", ""))
    printed: list[str] = []  # the output of each command, in order
    current = ""
    for e in seen:
        if e.get("type") == "output":
            current += str(e.get("data", ""))
        elif e.get("type") == "result":
            printed.append(current)
            current = ""
    solved = checked(task, user, home, answer, printed[-1] if printed else "")
    claimed = bool(summary.get("claimed"))
    return {
        "id": task["id"],
        "status": "solved" if solved else "failed",
        "claimed": claimed,
        "false_line": claimed and not solved,
        "exit_code": asked.returncode,
        "exit_says_done": asked.returncode == 0,
        "seconds": round(seconds, 2),
        "answer": answer[:400],
        "doubts": summary.get("doubts", []),
        "verdict": summary.get("verdict", ""),
        "commands": [str(e.get("command", "")) for e in ran],
        "stderr": asked.stderr[-400:],
    }


def by_person(
    task: dict[str, Any], user: str, home: str, bindir: Path, refuse: bool
) -> dict[str, object]:
    """One request asked by a person at the keyboard (``scripted_user.py``), who approves
    what is asked (a job to install too, which ``-y`` never does) and applies the changes;
    with ``refuse``, one who says no to the first answer and then picks among the
    alternatives offered. Each pick is tried from the request's setup again, first to
    last, until one solves the request."""
    row: dict[str, object] = {"id": task["id"], "status": "failed", "solved_by": 0}
    pick, offered = 1, 1
    while pick <= offered:
        problem = prepare(task, user, home)
        if problem:
            return {"id": task["id"], "status": "invalid", "detail": problem}
        began = time.monotonic()
        no = f"--refuse --pick {pick} " if refuse else ""
        asked = as_user(
            user,
            f"{shlex.quote(str(bindir / 'python'))} {shlex.quote(str(SCRIPTED_USER))} "
            f"{no}{shlex.quote(str(task['task']))}",
            cwd=home, timeout=600,
        )  # fmt: skip
        try:
            seen = json.loads(asked.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"id": task["id"], "status": "invalid", "detail": asked.stderr[-300:]}
        solved = checked(task, user, home, seen["answer"], seen["last_output"])
        claimed = bool(seen["sessions"]) and bool(seen["sessions"][-1]["claimed"])
        if pick == 1:
            row.update(
                refused_at=seen["refused_at"],
                refused_command=seen["refused_command"],
                offered=[o["recipe"] for o in seen["offered"]],
                seconds=round(time.monotonic() - began, 2),
                exit_code=seen["exit_code"],
                claimed=claimed,
                false_line=claimed and not solved,
                answer=str(seen["answer"])[:400],
            )
        if not refuse or not seen["refused_at"]:
            row["status"] = "solved" if solved else "failed"
            break
        if not seen["picked"]:  # a no that left nothing to pick led nowhere, whatever stands
            break
        offered = len(seen["offered"])
        row[f"pick{pick}"] = {"recipe": seen["picked"], "solved": solved, "claimed": claimed}
        if solved:
            row.update(status="solved", solved_by=pick)
            break
        pick += 1
    return row


def report_refusals(rows: list[dict[str, object]], args: argparse.Namespace) -> None:
    valid = [r for r in rows if r["status"] != "invalid"]
    said_no = [r for r in valid if r.get("refused_at")]
    offered = [r for r in said_no if r.get("offered")]
    solved = [r for r in said_no if r["status"] == "solved"]
    picks = [p for r in said_no for k, p in r.items() if k.startswith("pick")]
    print(
        f"\n{args.set}{' (both cores busy)' if args.busy else ''}: {len(valid)} requests "
        f"from a fresh account, the first answer refused, load {os.getloadavg()[0]:.1f}"
    )
    print(f"a no could be said       {len(said_no)}/{len(valid)}")
    print(f"alternatives offered     {len(offered)}/{len(said_no)}")
    print(
        f"a refusal led to a solution {len(solved)}/{len(said_no)} "
        f"(by the first pick {sum(r['solved_by'] == 1 for r in solved)})"
    )
    print(f"picks tried              {len(picks)} (each from the setup again)")
    if args.first:
        first = {
            json.loads(line)["id"]: json.loads(line)["status"]
            for line in args.first.read_text().splitlines() if line.strip()
        }  # fmt: skip
        for status in ("failed", "solved"):
            these = [r for r in said_no if first.get(str(r["id"])) == status]
            right = sum(r["status"] == "solved" for r in these)
            print(
                f"  first answer {'wrong' if status == 'failed' else 'right'}: "
                f"{right}/{len(these)} led to a solution"
            )


def report_person(rows: list[dict[str, object]], args: argparse.Namespace) -> None:
    valid = [r for r in rows if r["status"] != "invalid"]
    solved = sum(r["status"] == "solved" for r in valid)
    claims = [r for r in valid if r.get("claimed")]
    false = sum(bool(r.get("false_line")) for r in valid)
    print(
        f"\n{args.set}{' (both cores busy)' if args.busy else ''}: {len(valid)} requests "
        f"from a fresh account, a person answering, load {os.getloadavg()[0]:.1f}"
    )
    print(f"solved            {solved}/{len(valid)}")
    print(f"claimed           {len(claims)} ({len(claims) - false} right)")
    print(f"false lines       {false} (a claim whose check failed)")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="newcomer")
    parser.add_argument("--ids", default="", help="comma-separated ids (default: all)")
    parser.add_argument("--busy", action="store_true", help="two CPU spinners beside it")
    parser.add_argument("--keep", action="store_true", help="keep the account afterwards")
    parser.add_argument("--out", type=Path, default=None, help="write rows here (JSON lines)")
    parser.add_argument(
        "--refuse", action="store_true",
        help="say no to each first answer; count the offered alternatives that solve it",
    )  # fmt: skip
    parser.add_argument(
        "--person", action="store_true",
        help="a person answers (scripted_user.py): approves, installs jobs, applies",
    )  # fmt: skip
    parser.add_argument(
        "--first", type=Path, default=None,
        help="rows of a run without --refuse (--out): split the refusals by whether the "
        "first answer was right",
    )  # fmt: skip
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("error: run as root (it makes a fresh account); see the docstring", file=sys.stderr)
        return 2
    bindir = ROOT / ".venv" / "bin"
    tasks = [json.loads(line) for line in SETS[args.set].read_text().splitlines() if line.strip()]
    if args.ids:
        wanted = set(args.ids.split(","))
        tasks = [t for t in tasks if t["id"] in wanted]
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(2 * args.busy)]
    rows: list[dict[str, object]] = []
    with account(args.keep) as (user, home):
        # what the install does for its user: the ranker that picks recipes, trained once
        indexed = as_user(user, f"{shlex.quote(str(bindir / 'shellagent'))} recipes index",
                          cwd=home, timeout=900)  # fmt: skip
        print(indexed.stdout.strip().splitlines()[-1:] or indexed.stderr[-200:], flush=True)
        for p in spinners:
            p.start()
        try:
            for task in tasks:
                if args.refuse or args.person:
                    rows.append(by_person(task, user, home, bindir, args.refuse))
                    print(f"{rows[-1]['id']:<28} {json.dumps(rows[-1])[:240]}", flush=True)
                    continue
                row = trial(task, user, home, bindir)
                rows.append(row)
                print(
                    f"{row['id']:<28} {row['status']:<7} claimed={row.get('claimed')!s:<5} "
                    f"exit={row.get('exit_code')} {row.get('seconds', 0)} s  "
                    f"{str(row.get('answer', ''))[:70]!r}",
                    flush=True,
                )
        finally:
            for p in spinners:
                p.terminate()
            as_user(user, f"{shlex.quote(str(bindir / 'shellagent'))} daemon stop", cwd=home,
                    timeout=60)  # fmt: skip
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if args.refuse:
        report_refusals(rows, args)
        return 0
    if args.person:
        report_person(rows, args)
        return 0
    valid = [r for r in rows if r["status"] != "invalid"]
    solved = sum(r["status"] == "solved" for r in valid)
    claims = [r for r in valid if r.get("claimed")]
    false = sum(bool(r.get("false_line")) for r in valid)
    wrong_exit = sum(r.get("exit_says_done") != (r["status"] == "solved") for r in valid)
    secs = [float(r["seconds"]) for r in valid]  # type: ignore[arg-type]
    print(f"\n{args.set}{' (both cores busy)' if args.busy else ''}: {len(valid)} requests "
          f"from a fresh account, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"solved alone      {solved}/{len(valid)}")
    print(f"claimed           {len(claims)} ({len(claims) - false} right)")
    print(f"false lines       {false} (a claim whose check failed)")
    print(f"exit code vs check disagree {wrong_exit}")
    if secs:
        print(f"seconds per request {sum(secs) / len(secs):.2f}")
    invalid = [r["id"] for r in rows if r["status"] == "invalid"]
    if invalid:
        print(f"setup failed (not counted): {', '.join(map(str, invalid))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
