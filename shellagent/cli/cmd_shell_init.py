"""``shellagent shell-init bash|zsh|fish``: a key binding that turns what you typed into a
proposed command in your own prompt, to edit and run yourself.

Add to your shell's startup file, e.g. ``eval "$(shellagent shell-init bash)"`` in
~/.bashrc. Type a description ("largest files here"), press the key (Ctrl-G unless
``shell.key`` in config.toml says otherwise): the line is replaced by the proposed command,
with the policy's verdict shown beside it. Nothing runs until you press Enter.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import sys
from typing import Any

from shellagent.errors import UsageError

SHELLS = ("bash", "zsh", "fish")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "shell-init",
        help="print a key binding for bash, zsh or fish (Ctrl-G: describe -> command)",
        description=(__doc__ or "").strip() + '\n\nexample: eval "$(shellagent shell-init bash)"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", choices=SHELLS)
    parser.add_argument(
        "--key", default=None, help="the key, e.g. ctrl-g or ctrl-x (default: config)"
    )
    parser.set_defaults(func=run)


def _key(spec: str) -> str:
    match = re.fullmatch(r"(?:ctrl|c)-([a-z])", spec.strip().lower())
    if not match:
        raise UsageError(f"unsupported key {spec!r}", hint="use ctrl-LETTER, e.g. ctrl-g")
    return match.group(1)


def snippet(shell: str, letter: str, ask: str) -> str:
    ask_q = shlex.quote(ask)
    head = f"# shellagent: Ctrl-{letter.upper()} turns the line into a proposed command"
    if shell == "bash":
        return f"""{head} (nothing runs)
__shellagent_propose() {{
  [ -n "$READLINE_LINE" ] || return
  local __sa_out
  __sa_out=$({ask_q} --propose -- "$READLINE_LINE") || return
  READLINE_LINE=$__sa_out
  READLINE_POINT=${{#READLINE_LINE}}
}}
bind -x '"\\C-{letter}": __shellagent_propose'
"""
    if shell == "zsh":
        return f"""{head} (nothing runs)
__shellagent_propose() {{
  [[ -n $BUFFER ]] || return
  local __sa_out __sa_err
  __sa_err=$(mktemp) || return
  __sa_out=$({ask_q} --propose -- "$BUFFER" 2>"$__sa_err")
  if [[ -n $__sa_out ]]; then
    BUFFER=$__sa_out
    CURSOR=$#BUFFER
  fi
  zle reset-prompt
  zle -M "$(head -c 300 "$__sa_err")"
  rm -f "$__sa_err"
}}
zle -N __shellagent_propose
bindkey '^{letter.upper()}' __shellagent_propose
"""
    return f"""{head} (nothing runs)
function __shellagent_propose
    set -l line (commandline)
    test -n "$line"; or return
    set -l out ({ask_q} --propose -- "$line")
    and commandline -r -- "$out"
    commandline -f repaint
end
bind \\c{letter} __shellagent_propose
"""


def run(args: argparse.Namespace) -> int:
    key = args.key
    if key is None:
        from shellagent import paths

        settings = paths.config_dir() / "config.toml"
        key = "ctrl-g"
        if settings.exists():
            from shellagent import config

            key = config.load(settings).shell.key
    ask = shutil.which("ask") or str(_sibling_ask())
    sys.stdout.write(snippet(args.shell, _key(key), ask))
    return 0


def _sibling_ask() -> str:
    from pathlib import Path

    return str(Path(sys.argv[0]).resolve().with_name("ask"))
