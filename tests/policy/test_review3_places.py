"""Review 3's policy findings about places: writes to the settings of network tools are
denied like shell startup files (L5), and so are writes to the code-running trees the apply
holds back (H2)."""

from __future__ import annotations

import pytest

from shellagent.policy import PolicyEngine
from tests.policy.conftest import STATE

# Each makes an allowed program write, upload, proxy or run something else.
TOOL_SETTINGS = (
    "~/.curlrc",
    "~/.config/.curlrc",
    "~/.wgetrc",
    "~/.config/wget/wget2rc",
    "~/.netrc",
    "~/.config/aria2/aria2.conf",
    "~/.lftprc",
    "~/.config/httpie/config.json",
    "~/.config/yt-dlp/config",
    "~/.hgrc",
    "~/.subversion/config",
    "~/.aws/config",
    "~/.kube/config",
    "~/.config/nix/nix.conf",
)


@pytest.mark.parametrize("place", TOOL_SETTINGS)
@pytest.mark.parametrize(
    "write",
    ["echo 'output = /tmp/x' >> {p}", "cp settings {p}", "sed -i s/a/b/ {p}", "rm {p}"],
)
def test_writes_to_network_tools_settings_are_denied(
    engine: PolicyEngine, place: str, write: str
) -> None:
    evaluation = engine.check(write.format(p=place), STATE)
    assert evaluation.decision == "deny", evaluation.reasons


@pytest.mark.parametrize(
    "command",
    [
        "echo x > ~/.cache/p10k-instant-prompt-user.zsh",
        "cp pnpm.cjs ~/.cache/node/corepack/v1/pnpm/8.15.0/dist/pnpm.cjs",
        "echo x > ~/.cache/pypoetry/virtualenvs/p-py3.11/lib/python3.11/site-packages/z.pth",
        "cp hooks.yaml ~/.cache/pre-commit/repoab12/.pre-commit-hooks.yaml",
        "echo 'echo hi' > ~/.cache/anything/hook.sh",
        "touch ~/.local/state/mise/trusted-configs/x",
        "cp lib.pm ~/perl5/lib/perl5/local/lib.pm",
        "echo 'export PATH=x' > ~/sdk/path.bash.inc",
        "mkdir -p ~/node_modules/lodash",
        "echo 'import os' > ~/readline.py",
        "touch ~/json/__init__.py",
    ],
)
def test_writes_to_code_running_trees_are_denied(engine: PolicyEngine, command: str) -> None:
    evaluation = engine.check(command, STATE)
    assert evaluation.decision == "deny", evaluation.reasons


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.curlrc",
        "echo x > ~/.cache/someapp/data.json",
        "touch ~/.local/state/app/history",
        "echo x > ~/project/notes.py",
        "mkdir -p ~/project/node_modules",
    ],
)
def test_data_and_projects_are_not_protected(engine: PolicyEngine, command: str) -> None:
    evaluation = engine.check(command, STATE)
    assert evaluation.decision != "deny", evaluation.reasons
