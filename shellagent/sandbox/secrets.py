"""What the sandbox hides: credentials, histories and session stores, by path and by name.

Three sources, all masked (an empty read-only tmpfs over a directory, /dev/null over a
file) in the ``default`` profile:

- ``HOME_SECRETS``: places in the home directory, exact or glob (``snap/*/common/.mozilla``);
- ``SYSTEM_SECRETS``: places outside it (``/etc/shadow``, SSH host keys);
- files whose *name* looks like a credential (``.env``, ``prod.env``, ``id_ed25519``,
  ``terraform.tfstate`` …, matched case-insensitively) found by a bounded scan of the
  workspace, the write grants and the home directory, ``node_modules``-style folders
  included; also any file there that is a hard link to a masked file.

A user adds paths in config.toml (``[sandbox] hide = ["~/work/customer-data"]``). A file
created after the sandbox started is not masked by name: the scan runs at start.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HOME_SECRETS = (
    # keys, tokens and credential stores
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".oci",
    ".kube",
    ".docker",
    ".password-store",
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".pki",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".config/rclone",
    ".config/op",
    ".config/Bitwarden",
    ".config/containers/auth.json",
    ".config/git/credentials",
    ".config/doctl",
    ".config/hcloud",
    ".config/netlify",
    ".config/configstore",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".config/keepassxc",
    ".terraform.d",
    ".terraformrc",
    ".pulumi/credentials.json",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".nuget/NuGet/NuGet.Config",
    ".kaggle",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".huggingface/token",
    ".codex",
    ".claude",
    ".config/claude",
    ".netrc",
    ".authinfo",
    ".authinfo.gpg",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".fly",
    ".wrangler",
    ".config/sops",
    ".config/solana",
    ".ethereum/keystore",
    ".bitcoin/wallets",
    ".bitcoin/wallet.dat",
    ".electrum",
    ".config/stripe",
    ".config/vercel",
    ".local/share/com.vercel.cli",
    ".config/ngrok",
    ".ngrok2",
    ".tsh",
    ".cloudflared",
    ".config/helm/repositories.yaml",
    ".mc",
    ".dbt",
    ".snowsql",
    ".databrickscfg",
    ".config/github-copilot",
    ".gemini",
    ".continue",
    ".sbt/credentials",
    ".ivy2/.credentials",
    ".gradle/gradle.properties",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".bundle/config",
    ".config/keybase",
    ".circleci/cli.yml",
    ".travis/config.yml",
    ".config/filezilla",
    ".config/remmina",
    ".local/share/remmina",
    # mail and chat clients' passwords
    ".msmtprc",
    ".mbsyncrc",
    ".fetchmailrc",
    ".offlineimaprc",
    ".weechat",
    ".irssi",
    # shells' and tools' histories
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    ".ksh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".irb_history",
    ".rediscli_history",
    ".dbshell",
    ".lesshst",
    ".viminfo",
    ".local/share/fish/fish_history",
    ".local/share/atuin",
    ".local/share/recently-used.xbel",
    # browsers, mail and chat: session cookies and saved passwords
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/vivaldi",
    ".config/microsoft-edge",
    ".config/opera",
    ".config/Slack",
    ".config/discord",
    ".config/Signal",
    ".config/Element",
    ".local/share/TelegramDesktop",
    "snap/*/common/.mozilla",
    "snap/*/common/.config",
    "snap/*/*/.mozilla",
    "snap/*/*/.config/chromium",
    ".var/app/*/.mozilla",
    ".var/app/*/config/chromium",
    ".var/app/*/config/google-chrome",
    ".var/app/*/config/BraveSoftware",
    # editors' stored state (tokens of extensions)
    ".config/Code/User/globalStorage",
    ".config/Code - OSS/User/globalStorage",
    ".config/VSCodium/User/globalStorage",
    ".config/Cursor/User/globalStorage",
    ".vscode-server/data/User/globalStorage",
    ".cursor-server/data/User/globalStorage",
)
SYSTEM_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*_key",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/var/lib/private",
    "/var/backups/*shadow*",
    "/etc/security/opasswd",
    "/etc/ipsec.secrets",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/letsencrypt",
    "/etc/wireguard",
    "/etc/openvpn",
    "/etc/mysql/debian.cnf",
    "/etc/docker/key.json",
    "/etc/rancher",
    "/etc/kubernetes",
    "/var/lib/kubelet/pki",
)
# File names that usually hold credentials, compared lower-cased.
SECRET_FILE_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    ".dev.vars",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.p8",
    "*.ppk",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    "credentials",
    "credentials.json",
    "credentials.toml",
    "service-account*.json",
    "*-sa-key.json",
    "*.tfstate",
    "*.tfstate.backup",
    "*.tfvars",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "secrets.y*ml",
    "secrets.json",
    "secrets.toml",
    "*.secret",
    "*.secrets",
)
NOT_SECRET_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")

# Big trees of other people's files: scanned once and cached by their mtime, so a session
# in a project with a node_modules or a .venv does not wait for them every time.
VENDOR_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "target", ".tox", ".cache", "site-packages", "vendor"}
)
SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
SCAN_DEPTH = 8
SCAN_LIMIT = 60_000  # entries looked at per scan
SCAN_BUDGET_S = 0.25  # and no longer than this; the scan says when it stopped early
HOME_SCAN_DEPTH = 4


_SECRET_NAME = re.compile("|".join(fnmatch.translate(p) for p in SECRET_FILE_PATTERNS))


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    if lowered.endswith(NOT_SECRET_SUFFIXES):
        return False
    return _SECRET_NAME.match(lowered) is not None


def home_secrets(home: Path) -> list[Path]:
    """The places of ``HOME_SECRETS`` that exist (a dangling symlink counts)."""
    base = os.fspath(home)
    found: list[Path] = []
    for rel in HOME_SECRETS:
        path = os.path.join(base, rel)
        if any(ch in rel for ch in "*?["):
            if os.path.isdir(os.path.join(base, rel.split("/", 1)[0])):  # ~/snap, ~/.var
                found += [Path(p) for p in glob.glob(glob.escape(base) + "/" + rel)]
        elif os.path.lexists(path):
            found.append(Path(path))
    return found


def system_secrets() -> list[Path]:
    found: list[Path] = []
    for pattern in SYSTEM_SECRETS:
        if any(ch in pattern for ch in "*?["):
            found += [Path(p) for p in glob.glob(pattern)]
        elif os.path.lexists(pattern):
            found.append(Path(pattern))
    return found


def secret_paths(home: Path, extra: list[Path] | None = None) -> list[Path]:
    """Every fixed place to mask that exists: the home's, the system's, the user's list."""
    return home_secrets(home) + system_secrets() + list(extra or [])


@dataclass
class Scan:
    secrets: list[Path] = field(default_factory=list)
    repos: list[Path] = field(default_factory=list)  # .git directories (or files) found
    complete: bool = True


def scan(
    root: Path,
    *,
    depth: int = SCAN_DEPTH,
    masked_inodes: set[tuple[int, int]] | None = None,
    deadline: float | None = None,
    masked: frozenset[Path] = frozenset(),
    vendor: Callable[[Path], Scan] | None = None,
) -> Scan:
    """Secret-looking files, hard links to masked files, and nested ``.git`` under ``root``.

    Bounded by ``depth``, ``SCAN_LIMIT`` entries and a deadline; symlinks are not followed;
    directories in ``masked`` (hidden already) are not entered; a ``VENDOR_DIRS`` directory
    is handed to ``vendor`` (a cached scan of its own) when one is given.
    """
    result = Scan()
    deadline = deadline if deadline is not None else time.monotonic() + SCAN_BUDGET_S
    masked_inodes = masked_inodes or set()
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        here, level = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            name = entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if Path(entry.path) in masked or name in SKIP_DIRS:
                        continue
                    if vendor is not None and name in VENDOR_DIRS:
                        inner = vendor(Path(entry.path))
                        result.secrets += inner.secrets
                        result.repos += inner.repos
                        continue
                    if name == ".git":
                        result.repos.append(Path(entry.path))
                    elif level + 1 < depth:
                        stack.append((Path(entry.path), level + 1))
                    continue
                if name == ".git":
                    result.repos.append(Path(entry.path))  # a gitdir: file
                    continue
                if is_secret_name(name):
                    result.secrets.append(Path(entry.path))
                elif masked_inodes:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_nlink > 1 and (st.st_dev, st.st_ino) in masked_inodes:
                        result.secrets.append(Path(entry.path))
            except OSError:
                continue
        if seen > SCAN_LIMIT or time.monotonic() > deadline:
            result.complete = False
            break
    return result


INODE_LIMIT = 2000  # files looked at inside masked directories
# The directories whose files are worth a hard-link check: keys, not browser caches.
KEY_STORES = (".ssh", ".gnupg", ".aws", ".password-store", ".config/gcloud", ".kube", ".docker")


def inodes_of(files: list[Path]) -> set[tuple[int, int]]:
    """(device, inode) of the masked files that have other names (hard links), looking at
    the files among ``files`` and, bounded, those below the directories."""
    found: set[tuple[int, int]] = set()
    budget = INODE_LIMIT

    def note(st: os.stat_result) -> None:
        if st.st_nlink > 1:
            found.add((st.st_dev, st.st_ino))

    for path in files:
        try:
            if path.is_dir() and not path.is_symlink():
                for dirpath, _, names in os.walk(path):
                    for name in names[:budget]:
                        note(os.lstat(os.path.join(dirpath, name)))
                    budget -= len(names)
                    if budget <= 0:
                        break
            elif path.is_file():
                note(path.stat())
        except OSError:
            continue
    return found
