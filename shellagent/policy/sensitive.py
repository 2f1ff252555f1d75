"""Reads that reveal secrets beyond the ``secret`` path class: judged like ``cat`` of the file.

``pathclass`` names private keys and credential files. A command also reveals secrets when
it reads:

- anything under ``~/.ssh`` or ``~/.gnupg`` (the directories themselves too: a listing
  names the keys), except public keys;
- a project's environment file (``.env``, ``.env.local`` …; not ``.env.example``), and the
  other files that hold tokens (``.npmrc``, ``.pypirc``, ``.vault-token``, cloud clients'
  credentials);
- anything the sandbox hides (``shellagent/credentials.py``, the sandbox's own table):
  credential stores, histories, browser profiles and tools' token files in the home
  directory, their system counterparts, files named like keys or credentials, and a tool's
  settings file whose content holds a credential (read at most once per change of the
  file: its first kilobytes). A command the policy allows must not show, in the user's
  own shell (``shell-init``, ``ask --propose``), what the sandbox hides from the model;
- a disk or memory device (``/dev/sda``, ``/dev/mem``): raw bytes of every file;
- the shadow databases through ``getent shadow`` / ``getent gshadow``;
- a glob that can match any of these, or any secret path (``cat /proc/*/environ``,
  ``cat ~/.ssh/*``): a pattern is judged like the paths it can name. Bash's rules are
  followed: ``*``, ``?`` and ``[…]`` never match ``/``, nor a leading dot.

``classes`` returns ``{"secret"}`` for such a read, so the presets' ``reads-secrets`` rule
decides (ask, or deny in the strict preset).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from shellagent import credentials
from shellagent.policy.pathclass import Places

_HOME_SECRET_DIRS = (".ssh", ".gnupg")
_TOKEN_FILES = re.compile(
    r"(^|/)(\.env(\.(?!example$|sample$|template$|dist$|defaults?$)[A-Za-z0-9_.-]+)?"
    r"|\.envrc|\.npmrc|\.pypirc|\.vault-token|\.git-credentials|\.netrc|\.pgpass|\.my\.cnf"
    r"|credentials(\.json|\.toml|\.db)?|\.dockercfg|secrets?\.(ya?ml|json|toml))$"
)
_CLOUD = (
    ".config/gcloud/",
    ".azure/",
    ".cargo/credentials",
    ".gem/credentials",
    ".terraform.d/credentials",
    ".config/hub",
    ".local/share/keyrings",
)
# the same places in anyone's home (/root, /home/bob), and the system's copies of secrets
_ANY_HOME = re.compile(
    r"/(\.ssh|\.gnupg|\.password-store|\.local/share/keyrings)(/|$)"
    r"|/\.(aws/credentials|netrc|git-credentials|pgpass|kube/config|docker/config\.json)$"
    r"|^/proc/kcore$|^/etc/security/opasswd$|^/var/backups/.*shadow|^/etc/(g?shadow|passwd)[-~]$"
    # raw devices beyond disks and memory: keyboards and mice (keystrokes), SCSI generic,
    # tapes, TPM, NVRAM
    r"|^/dev/(input/|hidraw|sg[0-9]|st[0-9]|nst[0-9]|tpm|nvram|uinput|mtd|ubi)"
)
GETENT_FILES = {"shadow": "/etc/shadow", "gshadow": "/etc/gshadow"}
# Paths a glob is tried against: one of each kind of secret (``~`` is the home directory).
_SAMPLES = (
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.ssh/config",
    "~/.gnupg/private-keys-v1.d/k.key",
    "~/.aws/credentials",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.pgpass",
    "~/.config/gh/hosts.yml",
    "~/.config/shellagent/config.toml",
    "~/.password-store/x.gpg",
    "~/.config/gcloud/credentials.db",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_ed25519_key",
    "/proc/1/environ",
    "/proc/self/environ",
    "/proc/1/mem",
    "/proc/1/fd/0",
    "/proc/1/fd",
    "/proc/1/maps",
    "/proc/1/task/1/environ",
    "/dev/sda",
    "/dev/nvme0n1",
    "/dev/mem",
)


def classes(path: str, places: Places, *, glob: bool = False) -> frozenset[str]:
    """``{"secret"}`` when reading ``path`` (a glob when ``glob``) can reveal a secret. A
    brace expansion (``~/.ssh/id_rsa{,.pub}``) is judged by every word it makes."""
    words = _braces(path)
    if len(words) > 1:
        found = [classes(w, places, glob=glob or "*" in w) for w in words[:64]]
        return frozenset().union(*found)
    if path.startswith("~/"):
        path = places.home.rstrip("/") + path[1:]
    if glob and re.search(r"(?<!\\)[*?\[]", path):
        return frozenset({"secret"}) if _glob_reaches_secret(path, places) else frozenset()
    resolved = places.resolve(path)
    if resolved is None:
        return frozenset({"secret"}) if _TOKEN_FILES.search(path) else frozenset()
    return frozenset({"secret"}) if _secret(resolved, places) else frozenset()


def _secret(resolved: str, places: Places) -> bool:
    for home in _homes(places.home):
        if resolved == home or resolved.startswith(home + "/"):
            rel = resolved[len(home) + 1 :]
            top = rel.split("/", 1)[0]
            if top in _HOME_SECRET_DIRS and not rel.endswith(".pub"):
                return True
            if rel.startswith(_CLOUD):
                return True
            if credentials.home_secret(rel) and not rel.endswith(".pub"):
                return True  # a public key in ~/.ssh reveals nothing
            if credentials.content_candidate(Path(home), Path(resolved)) and _holds(resolved):
                return True
    if _TOKEN_FILES.search(resolved) or credentials.is_secret_name(os.path.basename(resolved)):
        return True
    if credentials.system_secret(resolved):
        return True
    if _ANY_HOME.search(resolved) and not resolved.endswith(".pub"):
        return True
    return bool({"secret", "device"} & places.classify(resolved))


@lru_cache(maxsize=8)
def _homes(home: str) -> tuple[str, ...]:
    """The home directory as written and as resolved (``$HOME`` may be a symlink)."""
    home = home.rstrip("/")
    try:
        real = os.path.realpath(home)
    except OSError:
        real = home
    return tuple(dict.fromkeys((home, real)))


_HOLDS_MAX = 512
_held: dict[tuple[str, int, int, int], bool] = {}


def _holds(path: str) -> bool:
    """``credentials.holds_secret``, once per state of the file (inode, size, time)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    found = _held.get(key)
    if found is None:
        if len(_held) >= _HOLDS_MAX:
            _held.clear()
        found = _held[key] = credentials.holds_secret(path)
    return found


# Every fixed place of the sandbox's table, as a sample a glob may name (``cat ~/.*_history``).
_TABLE_SAMPLES = tuple(
    f"~/{p}" for p in credentials.HOME_SECRETS if not any(c in p for c in "*?[")
) + tuple(f"~/{p}/x" for p in credentials.HOME_SECRETS if not any(c in p for c in "*?["))


def _glob_reaches_secret(pattern: str, places: Places) -> bool:
    resolved = places.resolve(pattern)
    if resolved is None:
        return False
    regex = _glob_regex(resolved)
    home = places.home.rstrip("/")
    for sample in (*_SAMPLES, *_TABLE_SAMPLES):
        path = home + sample[1:] if sample.startswith("~/") else sample
        if regex.fullmatch(path):
            return True
    # a pattern whose last part is a glob inside a secret directory: ~/.ssh/*, /proc/1/*
    head = resolved.rsplit("/", 1)[0]
    return not re.search(r"(?<!\\)[*?\[]", head) and _secret(head, places) and head != home


def _braces(word: str) -> list[str]:
    """The words ``a{b,c}d`` expands to (the first group, recursively); ``[word]`` when it
    has none."""
    m = re.search(r"(?<!\\)\{([^{}]*,[^{}]*)\}", word)
    if not m:
        return [word]
    out: list[str] = []
    for part in m.group(1).split(","):
        out += _braces(word[: m.start()] + part + word[m.end() :])
    return out


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Bash's pathname expansion as a regular expression over a whole path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    start_of_part = True
    while i < n:
        ch = pattern[i]
        lead = "(?!\\.)" if start_of_part else ""
        if ch == "*":
            out.append(lead + "[^/]*")
        elif ch == "?":
            out.append(lead + "[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in "!^":
                    body = "^" + body[1:]
                out.append(lead + "[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        start_of_part = ch == "/"
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return re.compile(".*")
