"""``shellagent config show|edit|set|path``: the user's settings in config.toml."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from typing import Any

from shellagent.errors import ConfigError, UsageError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "config",
        help="show or change your settings (config.toml)",
        description="Show or change the settings in config.toml: the default model, policy "
        "preset, review mode, colors.\n\nexample: shellagent config set model.default "
        "qwen2.5-coder-1.5b",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser(
        "show",
        help="every setting: its value, where it comes from, what it means",
        description="Print every setting with its value and whether it is set in the file "
        "or a default.\n\nexample: shellagent config show --json",
    )
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=run_show)
    edit = sub.add_parser(
        "edit",
        help="open config.toml in $VISUAL / $EDITOR (created from a commented template)",
        description="Open config.toml in your editor and check it when you are done.\n\n"
        "example: EDITOR=nano shellagent config edit",
    )
    edit.set_defaults(func=run_edit)
    set_ = sub.add_parser(
        "set",
        help="set one setting (keeps your comments); `default` removes it",
        description="Set KEY (section.name) to VALUE in config.toml, keeping comments. The "
        "file is written only if the result is valid. VALUE `default` removes the key.\n\n"
        "example: shellagent config set ask.confirm false",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    set_.add_argument("key", metavar="KEY")
    set_.add_argument("value", metavar="VALUE")
    set_.set_defaults(func=run_set)
    path = sub.add_parser("path", help="print where config.toml is")
    path.set_defaults(func=run_path)


def run_show(args: argparse.Namespace) -> int:
    from shellagent import config

    path = config.config_path()
    settings = config.load(path).model_dump()
    explicit = _explicit_keys(path)
    rows = []
    for key, default, description in config.describe():
        section, name = key.split(".", 1)
        value = settings[section][name]
        rows.append(
            {
                "key": key,
                "value": value,
                "source": "file" if key in explicit else "default",
                "default": default,
                "description": description,
            }
        )
    if args.json:
        print(json.dumps({"path": str(path), "exists": path.exists(), "settings": rows}))
        return 0
    print(f"# {path}" + ("" if path.exists() else " (not created yet: all defaults)"))
    for row in rows:
        shown = "(auto)" if row["value"] is None else json.dumps(row["value"])
        mark = "" if row["source"] == "file" else "  [default]"
        print(f"{row['key']:<16} = {shown:<22}{mark}")
        print(f"{'':16}   # {row['description']}")
    return 0


def _explicit_keys(path: Any) -> set[str]:
    import tomllib

    if not path.exists():
        return set()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {
        f"{section}.{name}"
        for section, table in data.items()
        if isinstance(table, dict)
        for name in table
    }


def run_edit(args: argparse.Namespace) -> int:
    from shellagent import config, paths

    path = config.config_path()
    if not path.exists():
        paths.ensure_private_dir(path.parent)
        config.write_text(path, config.TEMPLATE)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        status = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
    except FileNotFoundError:
        raise UsageError(
            f"editor {editor!r} not found", hint="set EDITOR, e.g. EDITOR=nano"
        ) from None
    if status != 0:
        print(f"the editor exited with {status}; {path} is as the editor left it", file=sys.stderr)
    try:
        config.load(path)
    except ConfigError as exc:
        print(exc.show(), file=sys.stderr)
        print(
            "the file was kept as you wrote it; run `shellagent config edit` to fix it",
            file=sys.stderr,
        )
        return exc.exit_code
    print(f"{path}: valid")
    return 0


def run_set(args: argparse.Namespace) -> int:
    from shellagent import config

    config.set_value(args.key, args.value)
    section, name = args.key.split(".", 1)
    value = config.load().model_dump()[section][name]
    print(f"{args.key} = {'(auto)' if value is None else json.dumps(value)}")
    return 0


def run_path(args: argparse.Namespace) -> int:
    from shellagent import config

    print(config.config_path())
    return 0
