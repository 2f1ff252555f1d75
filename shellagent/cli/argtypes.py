"""What the command modules share with argparse: the value types their options take
(each refuses bad input with argparse's one-line usage error) and a subcommand parser
whose ``--help`` is its function's docstring."""

from __future__ import annotations

import argparse
import inspect
from typing import Any


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """A whole number, 1 or more (``--jobs``, ``--samples``)."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def count(text: str) -> int:
    """A whole number, 0 or more (``--offset``)."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def positive_float(text: str) -> float:
    """A number of seconds (or any quantity) above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def subcommand(sub: Any, name: str, func: Any, text: str) -> argparse.ArgumentParser:
    """A subcommand ``name`` that runs ``func``; its description is ``func``'s docstring."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=text,
        description=inspect.cleandoc(func.__doc__ or text),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser
