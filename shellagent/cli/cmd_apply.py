"""``shellagent apply SESSION`` and ``shellagent undo [SESSION] [--list]``: land the change
set a session kept, or take back what an apply landed."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from shellagent.cli.display import shown


def add_parser(subparsers: Any) -> None:
    apply = subparsers.add_parser(
        "apply",
        help="apply the changes a session kept (shown first)",
        description="Show the change set a session kept, then apply it: exactly those "
        "files, atomically per file, refusing files that changed on your machine meanwhile. "
        "Changes to places that run code later (shell startup files, autostart, git hooks "
        "…) and to settings in your home directory are held back unless you name each "
        "with --include. What it replaces can be undone. With --diff it shows the diff and "
        "asks before applying anything.\n\n"
        "example: shellagent apply 20261123T010203-ab12cd --include ~/.bash_aliases",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    apply.add_argument("session", metavar="SESSION")
    apply.add_argument(
        "--diff",
        action="store_true",
        help="show the full diff, then ask: apply, discard or keep (without a terminal "
        "nothing is applied)",
    )
    apply.add_argument("--discard", action="store_true", help="throw the changes away instead")
    apply.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATH",
        help="also apply this held-back change (a startup file, a setting in your home "
        "directory, git's config, a symlink to one …); name each path, repeat as needed",
    )
    apply.add_argument("--json", action="store_true", help="print one JSON object")
    apply.set_defaults(func=run_apply)
    undo = subparsers.add_parser(
        "undo",
        help="take back the newest apply (of SESSION); --list shows what can be undone",
        description="Restore what the newest apply replaced or deleted, only if those files "
        "are still as the apply left them.\n\nexample: shellagent undo --list",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    undo.add_argument("session", nargs="?", metavar="SESSION")
    undo.add_argument("--list", action="store_true", help="list what can be undone")
    undo.add_argument("--json", action="store_true", help="print one JSON object")
    undo.set_defaults(func=run_undo)


def run_apply(args: argparse.Namespace) -> int:
    from pathlib import Path

    from shellagent.transaction import Workspace, compute
    from shellagent.transaction.apply import ApplyStopped, Baseline, apply

    workspace = Workspace.open(args.session)
    workspace.hold()  # refused while a task still works on it
    try:
        changes = compute(workspace)
        if args.discard:
            workspace.remove()
            print(f"discarded: {changes.summary()}")
            return 0
        if not changes:
            print("nothing to apply: the session changed nothing")
            workspace.remove()
            return 0
        # File names and contents were written inside the sandbox: shown, never obeyed.
        if not args.json:
            print(shown("\n".join(changes.render()), lines=True))
        if args.diff:
            if args.json:
                print(json.dumps({"applied": 0, "diff": changes.diff(), **changes.to_dict()}))
                return 0
            print(shown(changes.diff(), lines=True), end="")
            decision = _after_the_diff()
            if decision == "discard":
                workspace.remove()
                print(f"discarded: {changes.summary()}; your files are as they were")
                return 0
            if decision != "apply":
                why = "kept" if decision == "keep" else "nobody to ask here (not a terminal)"
                print(
                    f"not applied ({why}): `shellagent apply {args.session}` applies it, "
                    "`--discard` drops it"
                )
                return 0
        Baseline(workspace).note(changes)
        include = [Path(p) for p in args.include]
        try:
            result = apply(workspace, changes, include=include)
        except ApplyStopped as exc:
            if args.json:
                print(json.dumps({"applied": len(exc.landed), "landed": exc.landed}))
            raise
        workspace.remove()
    finally:
        workspace.release()
    if args.json:
        print(
            json.dumps(
                {
                    "applied": result.applied,
                    "bytes": result.bytes,
                    "undo": str(result.record),
                    **changes.to_dict(),
                }
            )
        )
    else:
        n = result.applied
        print(
            f"applied {n} change{'' if n == 1 else 's'}; undo with `shellagent undo {args.session}`"
        )
    return 0


def _after_the_diff() -> str | None:
    """Ask what to do with the change set just shown, as the end of ``ask`` does: "apply",
    "discard" or "keep" (Ctrl-D keeps); None without a terminal to ask on."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    from prompt_toolkit import PromptSession

    from shellagent.cli.ask_ui import read_key

    key = read_key(
        PromptSession(), "apply these changes? [a]pply [n]o, discard [k]eep for later ", "ank"
    )
    return {"a": "apply", "n": "discard"}.get(key, "keep")


_UNDO_WORDS = {
    "created": "remove {path} (the apply created it)",
    "modified": "restore {path} as it was",
    "mode": "restore the mode of {path}",
    "deleted": "put back {path}",
    "renamed": "rename {path} back to {from}",
}


def _say_what_undo_restores(session: str | None) -> None:
    """Before anything is touched: which apply is taken back, and what each change becomes."""
    from shellagent.cli.display import shown
    from shellagent.transaction.apply import undoable

    records = [r for r in undoable() if session is None or r.session == session]
    if not records:
        return  # undo() says there is nothing to undo
    r = records[0]
    when = dt.datetime.fromtimestamp(r.at).strftime("%Y-%m-%d %H:%M")
    steps = [r.staged[i] for i in sorted(r.done)]
    print(f"taking back the apply of session {r.session} ({when}):")
    for entry in steps[:20]:
        words = _UNDO_WORDS.get(entry["kind"], "restore {path}")
        print("  " + shown(words.format(path=entry["path"], **{"from": entry.get("from", "?")})))
    if len(steps) > 20:
        print(f"  … and {len(steps) - 20} more")


def run_undo(args: argparse.Namespace) -> int:
    from shellagent.transaction.apply import undo, undoable

    if args.list:
        records = undoable()
        if args.json:
            print(
                json.dumps(
                    [
                        {
                            "session": r.session,
                            "at": r.at,
                            "changes": len(r.done),
                            "finished": r.finished,
                        }
                        for r in records
                    ]
                )
            )
            return 0
        if not records:
            print("nothing to undo")
        for r in records:
            when = dt.datetime.fromtimestamp(r.at).strftime("%Y-%m-%d %H:%M")
            state = "" if r.finished else "  (interrupted: partly applied)"
            print(f"{r.session}  {when}  {len(r.done)} changes{state}")
        return 0
    if not args.json:
        _say_what_undo_restores(args.session)
    record = undo(args.session)
    if args.json:
        print(json.dumps({"undone": record.session, "changes": len(record.done)}))
    else:
        n = len(record.done)
        print(f"undone: {n} change{'' if n == 1 else 's'} of session {record.session}")
    return 0
