"""``shellagent model``: list the catalog, pull a model, print a model's path."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from shellagent.errors import ModelUnavailable


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "model",
        help="list, download and locate models",
        description=(
            "List, download and locate models.\n\nexample: shellagent model pull qwen2.5-coder-1.5b"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="model_command", metavar="ACTION", required=True)

    p_list = sub.add_parser(
        "list",
        help="show the catalog and what is installed",
        description="Show the catalog and what is installed.\n\nexample: shellagent model list",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_list.add_argument("--json", action="store_true", help="one JSON object per model")
    p_list.set_defaults(func=cmd_list)

    p_pull = sub.add_parser(
        "pull",
        help="download a catalog model (resumes, verifies sha256)",
        description=(
            "Download a catalog model into the data dir, resuming an interrupted download\n"
            "and verifying its sha256.\n\nexample: shellagent model pull qwen3-1.7b"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_pull.add_argument("name", metavar="NAME")
    p_pull.add_argument("--url", help="download from this URL instead of the catalog's")
    p_pull.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p_pull.set_defaults(func=cmd_pull)

    p_path = sub.add_parser(
        "path",
        help="print where a model's file is (default: the embedded model)",
        description=(
            "Print the path of a model's GGUF file (default: the embedded model).\n\n"
            "example: shellagent model path qwen2.5-coder-1.5b"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_path.add_argument("name", metavar="NAME", nargs="?", default=None)
    p_path.set_defaults(func=cmd_path)


def cmd_list(args: argparse.Namespace) -> int:
    from shellagent.model.catalog import installed_path, load_catalog
    from shellagent.model.embedded import DEFAULT_ADAPTER, DEFAULT_SPEC, EMBEDDED_NAME

    rows = []
    for entry in load_catalog().values():
        try:
            present = installed_path(entry).is_file()
        except ModelUnavailable:
            present = False
        status = (
            ("embedded" if present else "missing")
            if entry.embedded
            else ("installed" if present else "-")
        )
        rows.append((entry, status))
    if args.json:
        for entry, status in rows:
            print(
                json.dumps(
                    {
                        "name": entry.name,
                        "status": status,
                        "size_bytes": entry.size_bytes,
                        "context": entry.context,
                        "chat_format": entry.chat_format,
                        "sha256": entry.sha256 or None,
                        "url": entry.url,
                        "description": entry.description,
                        "kind": entry.kind,
                        "base": entry.base or None,
                        "part_of_default": entry.name in (EMBEDDED_NAME, DEFAULT_ADAPTER),
                    }
                )
            )
        return 0
    width = max(len(e.name) for e, _ in rows)
    print(f"{'NAME':<{width}}  {'STATUS':<9}  {'SIZE':>8}  {'CTX':>5}  DESCRIPTION")
    for entry, status in rows:
        size = f"{entry.size_bytes / 1e9:.2f} GB" if entry.size_bytes else "?"
        what = entry.description
        if entry.kind == "adapter":
            what = f"[adapter for {entry.base}: --model {entry.base}+{entry.name}] {what}"
        print(f"{entry.name:<{width}}  {status:<9}  {size:>8}  {entry.context:>5}  {what}")
    print(
        f"\n`--model default` (or none) loads {DEFAULT_SPEC}; "
        f"the base alone: `--model {EMBEDDED_NAME}`"
    )
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    from shellagent.model.catalog import installed_path, lookup
    from shellagent.model.download import pull
    from shellagent.paths import models_dir

    entry = lookup(args.name)
    if entry.embedded:
        print(f"{entry.name} is embedded: nothing to pull ({installed_path(entry)})")
        return 0
    target = installed_path(entry)
    if target.is_file() and not args.url:
        print(f"{entry.name} is already installed: {target}")
        return 0
    result = pull(entry, models_dir(), url=args.url, progress=None if args.quiet else sys.stderr)
    if result.verified:
        print(f"sha256 verified: {result.sha256}", file=sys.stderr)
    else:
        print(
            f"sha256 {result.sha256} (the catalog has no digest for {entry.name}; compare it "
            "with the publisher's listing and add it to catalog.toml)",
            file=sys.stderr,
        )
    print(result.path)
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from shellagent.model.catalog import installed_path, lookup
    from shellagent.model.embedded import embedded_model_path

    if args.name is None:
        print(embedded_model_path())
        return 0
    entry = lookup(args.name)
    path = installed_path(entry)
    if not path.is_file():
        raise ModelUnavailable(
            f"model {entry.name} is not downloaded (would be {path})",
            hint=f"run `shellagent model pull {entry.name}`",
        )
    print(path)
    return 0
