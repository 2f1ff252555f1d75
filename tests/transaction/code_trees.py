"""Review 3's H2 rows and their kin: places in the home directory that run code later
although no dot file is involved, or that hide in a cache; and a home that has them.

Shared by the apply tests (``test_code_trees.py``) and the daemon's ``-y --apply`` test
(``tests/daemon/test_apply_walls.py``). A row is (path relative to the home, what the
session makes there: ``file``, ``exec`` or ``link``)."""

from __future__ import annotations

import os
from pathlib import Path

# The review's table, row for row.
H2_ROWS: tuple[tuple[str, str], ...] = (
    (".cache/p10k-instant-prompt-root.zsh", "file"),
    (".cache/node/corepack/v1/pnpm/8.15.0/dist/pnpm.cjs", "file"),
    (".cache/pypoetry/virtualenvs/proj-Xy12-py3.11/lib/python3.11/site-packages/zz.pth", "file"),
    (".cache/pre-commit/repoab12cd/.pre-commit-hooks.yaml", "file"),
    (".local/state/mise/trusted-configs/work-.mise.toml", "link"),
    (".local/state/nix/profiles/profile", "link"),
    ("miniconda3/bin/conda", "exec"),
    ("miniconda3/etc/profile.d/conda.sh", "file"),
    ("perl5/lib/perl5/local/lib.pm", "file"),
    ("google-cloud-sdk/path.bash.inc", "file"),
    ("node_modules/lodash/index.js", "file"),
    ("readline.py", "file"),
)
# The same classes in places the review did not try.
H2_KIN: tuple[tuple[str, str], ...] = (
    (".cache/someapp/hook.sh", "file"),  # a shell file in any cache
    (".cache/tool/run", "exec"),  # an executable without a suffix
    (".cache/hatch/env/virtual/p/lib/python3.12/site-packages/a/__init__.py", "file"),
    (".cache/whatever/venv/lib/python3.12/site-packages/zz_data.txt", "file"),
    (".local/state/anything/current", "link"),  # a symlink in state
    (".local/state/tool/plugin.js", "file"),
    ("newsdk/path.zsh.inc", "file"),  # an install tree the session makes
    ("sdk2/lib/python3.12/site-packages/sdk2.py", "file"),
    ("homevenv/pyvenv.cfg", "file"),
    ("homevenv/lib/python3.12/site-packages/evil.pth", "file"),
    ("json/__init__.py", "file"),  # a package that shadows the standard library's
    ("__pycache__/readline.cpython-311.pyc", "file"),
    ("site.so", "file"),
    ("tools/scripts/ls", "exec"),  # a folder only the login shell's PATH holds
    ("work/env.sh", "file"),  # a file ~/.bashrc sources (~/work is an ordinary folder)
)
# Data in caches and ordinary folders: lands with -y as before.
DATA_ROWS: tuple[str, ...] = (
    ".cache/thumbnails/normal/ab12.png",
    ".cache/pip/http-v2/a/b/c/abcdef",
    ".cache/someapp/data.json",
    ".local/state/app/history",
    "projects/site/node_modules/left-pad/index.js",  # a project's own dependencies
    "projects/site/bin/build.sh",
    "Documents/notes.txt",
)

BASHRC = """# bashrc
export PATH="$HOME/tools/scripts:$PATH"
# >>> conda initialize >>>
__conda_setup="$('{home}/miniconda3/bin/conda' 'shell.bash' 'hook' 2> /dev/null)"
# <<< conda initialize <<<
[ -f '{home}/google-cloud-sdk/path.bash.inc' ] && . '{home}/google-cloud-sdk/path.bash.inc'
[ -f "$HOME/work/env.sh" ] && . "$HOME/work/env.sh"
"""


def make_home(home: Path) -> None:
    """Install trees as an installer leaves them, and a ``~/.bashrc`` that uses them."""
    files = {
        "miniconda3/conda-meta/history": "# conda\n",
        "miniconda3/bin/conda": "#!/bin/sh\nexit 0\n",
        "miniconda3/etc/profile.d/conda.sh": "# conda.sh\n",
        "perl5/lib/perl5/.keep": "",
        "google-cloud-sdk/bin/gcloud": "#!/bin/sh\nexit 0\n",
        "google-cloud-sdk/path.bash.inc": "# gcloud\n",
        "tools/scripts/hello": "#!/bin/sh\necho hello\n",
        "work/notes.txt": "notes\n",
        "Documents/notes.txt": "notes\n",
        "projects/site/package.json": "{}\n",
    }
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    (home / ".bashrc").write_text(BASHRC.format(home=os.path.realpath(home)))


def write_command(rel: str, how: str) -> str:
    """The shell command that makes ``~/REL`` in a session."""
    make = f'mkdir -p "$(dirname ~/{rel})" && '
    if how == "link":
        return make + f"ln -sfn ~/work/notes.txt ~/{rel}"
    command = make + f"printf 'payload\\n' >> ~/{rel}"
    if how == "exec":
        command += f" && chmod +x ~/{rel}"
    return command
