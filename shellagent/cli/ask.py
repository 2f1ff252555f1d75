"""ask: give the shell agent a task; it proposes commands, you approve the risky ones.

example: ask "how much space do the log files in /var/log take?"

Every command is checked by the policy first: allowed ones run, denied ones never do, and
for the rest you are asked (y run, n refuse, e edit, a always allow, q quit). -y approves
what the policy asks about, never what it denies. Commands run in a sandboxed bash whose
working directory is this one. Exit status: 0 finished, 1 failed or out of turns, 2 usage,
3 environment (sandbox or model missing).

This module imports only the standard library at import time, so ``ask`` starts fast;
everything heavy (model, policy, sandbox) is imported in ``_run_local``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from shellagent.errors import ShellagentError, UsageError


def build_parser() -> argparse.ArgumentParser:
    doc = (__doc__ or "").split("\n\nThis module")[0]
    parser = argparse.ArgumentParser(
        prog="ask", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("task", nargs="+", metavar="TASK", help="what to do, in plain words")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="approve what the policy asks about (not denies)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show the proposed commands without running them"
    )
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument(
        "--model", metavar="NAME|PATH", default=None, help="model name, GGUF path or openai:URL"
    )
    parser.add_argument(
        "--no-daemon", action="store_true", help="run in this process instead of the daemon"
    )
    parser.add_argument(
        "--max-turns", type=int, default=15, metavar="N", help="stop after N model replies"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.max_turns < 1:
            raise UsageError("--max-turns must be at least 1")
        task = " ".join(args.task).strip()
        if not task:
            raise UsageError("the task is empty", hint='ask "what to do"')
        args.task = task
        if args.no_daemon:
            return _run_local(args)
        from shellagent.cli.ask_client import run_via_daemon

        return run_via_daemon(args)
    except ShellagentError as exc:
        print(exc.show(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _run_local(args: argparse.Namespace) -> int:
    """Run the task in this process: embedded model, default policy, default sandbox."""
    from pathlib import Path

    from shellagent.agent import AgentConfig, AutoApprover, RefuseApprover, run_task
    from shellagent.model import load_backend
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Session, get_profile
    from shellagent.transcript import Redactor, TranscriptWriter

    config = AgentConfig(max_turns=args.max_turns, dry_run=args.dry_run)
    cwd = Path.cwd()
    backend = load_backend(args.model)
    policy = PolicyEngine.load(workspace=cwd)
    approver: Any
    if args.yes:
        approver = AutoApprover()
    elif sys.stdin.isatty():
        approver = TerminalApprover()
    else:
        approver = RefuseApprover("stdin is not a terminal, so nobody could approve it")
        print(
            "note: stdin is not a terminal: commands that need approval will be refused "
            "(use -y to approve them)",
            file=sys.stderr,
        )
    view = Renderer(json_lines=args.json)
    cancel = threading.Event()
    with (
        Session(get_profile("default", cwd=cwd), timeout=config.command_timeout) as shell,
        TranscriptWriter(redactor=Redactor.from_environment()) as sink,
        _CtrlC(cancel, approver),
    ):
        outcome = run_task(
            args.task,
            backend=backend,
            shell=shell,
            policy=policy,
            approver=approver,
            sink=sink,
            config=config,
            cancel=cancel,
            on_event=view.event,
            on_output=None if args.json else view.output,
            source="ask",
            model_name=str(getattr(backend, "name", "")),
        )
    view.summary(outcome)
    return int(outcome.exit_code)


class TerminalApprover:
    """Asks on the terminal with a plain prompt: y run, n refuse, e edit, a always, q quit."""

    def __init__(self) -> None:
        self.prompting = False

    def __call__(self, request: Any) -> Any:
        from shellagent.agent import Approval

        decision = request.decision
        out = sys.stderr
        print(f"\nThe agent wants to run:\n    {request.command}", file=out)
        if request.why:
            print(f"  why: {request.why}", file=out)
        print(f"  policy: {decision.decision}", file=out)
        for reason in decision.reasons:
            print(f"    - {reason}", file=out)
        self.prompting = True
        try:
            while True:
                key = _read("Run it? [y]es [n]o [e]dit [a]lways [q]uit: ").lower()[:1]
                if key == "y":
                    return Approval("approve")
                if key == "n":
                    return Approval("refuse", reason=_read("Why not (optional, told to it): "))
                if key == "e":
                    edited = _read("Command to run instead: ", default=request.command)
                    return Approval("edit", command=edited) if edited else Approval("refuse")
                if key == "a":
                    scope = _read("Always allow where? [s]ession [d]irectory [e]verywhere: ")
                    scopes = {"s": "session", "d": "directory", "e": "everywhere"}
                    if scope[:1].lower() in scopes:
                        return Approval("always", scope=scopes[scope[:1].lower()])  # type: ignore[arg-type]
                    continue
                if key == "q":
                    return Approval("quit")
        except (EOFError, KeyboardInterrupt):
            print(file=out)
            return Approval("quit")
        finally:
            self.prompting = False


def _read(prompt: str, default: str = "") -> str:
    if default:
        try:
            import readline

            readline.set_startup_hook(lambda: readline.insert_text(default))
        except ImportError:  # pragma: no cover - readline is missing on some builds
            prompt = f"{prompt}[{default}] "
        try:
            return input(prompt).strip() or ""
        finally:
            if "readline" in sys.modules:
                sys.modules["readline"].set_startup_hook()
    return input(prompt).strip()


class _CtrlC:
    """First Ctrl-C cancels the task (stopping a running command); the second kills ask."""

    def __init__(self, cancel: threading.Event, approver: Any) -> None:
        self.cancel = cancel
        self.approver = approver
        self.previous: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        print("\ncancelling (Ctrl-C again to force)", file=sys.stderr)
        if getattr(self.approver, "prompting", False):
            raise KeyboardInterrupt


class Renderer:
    """Shows the session as it happens: plain text for people, or one JSON object a line."""

    def __init__(self, *, json_lines: bool) -> None:
        self.json_lines = json_lines
        self.session = ""
        self.ran = 0
        self.streamed = False
        self.ended_line = True

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "session_start":
            self.session = str(event.get("session", ""))
        if self.json_lines:
            print(json.dumps(event, ensure_ascii=False, default=str), flush=True)
            return
        if kind == "model_turn":
            action = event.get("action") or {}
            if "cmd" in action:
                why = f"  # {action['why']}" if action.get("why") else ""
                print(f"[{event['turn']}] $ {action['cmd']}{why}", flush=True)
            elif not event.get("valid", True):
                from shellagent.cli.ask_ui import not_an_action

                print(f"[{event['turn']}] ({not_an_action(event)})", flush=True)
        elif kind == "policy" and event["decision"] == "deny":
            print(f"    denied: {'; '.join(event.get('reasons') or [])}", flush=True)
        elif kind == "approval" and event["decision"] in ("refuse", "quit"):
            print(f"    {event['decision']}d", flush=True)
        elif kind == "message" and str(event.get("content", "")).startswith("Dry run:"):
            print("    (dry run: not run)", flush=True)
        elif kind == "execution":
            self.ran += 1
            if not self.streamed and event.get("output"):
                body = str(event["output"]).split("\n", 1)
                if len(body) > 1:
                    print(body[1], flush=True)
            elif self.streamed and not self.ended_line:
                print(flush=True)
            self.streamed = False
            extra = ", timed out" if event.get("timed_out") else ""
            print(f"    [exit {event['exit_code']}{extra}]", flush=True)

    def output(self, text: str) -> None:
        self.streamed = True
        self.ended_line = text.endswith("\n")
        sys.stdout.write(text)
        sys.stdout.flush()

    def summary(self, outcome: Any) -> None:
        if self.json_lines:
            return
        verdict = {
            "finished": "done",
            "turn_limit": "out of turns",
            "repeated_failure": "gave up",
            "user_quit": "quit",
            "cancelled": "cancelled",
            "error": "error",
        }.get(outcome.reason, outcome.reason)
        print(f"\n{verdict}: {outcome.summary}" if outcome.summary else f"\n{verdict}")
        if outcome.error:
            print(f"  {outcome.error}", file=sys.stderr)
        print(
            f"  {outcome.turns} replies, {len(outcome.commands)} commands run; "
            f"transcript {outcome.session_id} (shellagent logs show {outcome.session_id})"
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
