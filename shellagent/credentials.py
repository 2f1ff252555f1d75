"""Where credentials are: one table for the sandbox, which hides them, and the policy, which
asks before a read of them (review 3: M4, L6).

- ``HOME_SECRETS``: places in the home directory, exact or glob (``snap/*/common/.mozilla``);
- ``SYSTEM_SECRETS``: places outside it (``/etc/shadow``, SSH host keys);
- ``SECRET_FILE_PATTERNS``: file names that hold credentials anywhere (``.env``,
  ``id_ed25519``, ``*.ovpn`` …), compared lower-cased (``is_secret_name``);
- by content (``holds_secret``): a tool's settings file in the home directory (under
  ``~/.config`` or a ``~/.TOOL`` folder, or a ``~/.TOOL`` file; small, text) whose first
  kilobytes match a token's shape the redaction knows (``shellagent/redaction``: ``ghp_…``,
  ``AKIA…``, a private key …) or name a password, token, secret, API key, private key or
  ``auth…`` beside a value that looks like one. That is the class the paths stand for: a
  tool no list knows keeps its token the same way.

Standard library and ``shellagent.redaction`` only: the sandbox and the policy import this.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from pathlib import Path

from shellagent.redaction import find

SHAPE = 1  # the rank of a token's shape among the redaction's hits (``redaction/scan.py``)

__all__ = [
    "CONTENT_READ_BYTES",
    "CONTENT_SIZE_MAX",
    "HOME_SECRETS",
    "NOT_SECRET_SUFFIXES",
    "SECRET_FILE_PATTERNS",
    "SYSTEM_SECRETS",
    "content_candidate",
    "holds_secret",
    "home_secret",
    "is_secret_name",
    "looks_secret",
    "system_secret",
]

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
    ".config/lab",
    ".config/tea",
    ".config/hut",
    ".config/rclone",
    ".config/op",
    ".config/1Password",
    ".config/Bitwarden",
    ".config/Bitwarden CLI",
    ".config/containers/auth.json",
    ".config/git/credentials",
    ".config/doctl",
    ".config/hcloud",
    ".config/linode-cli",
    ".config/scw",
    ".config/vultr-cli.yaml",
    ".config/netlify",
    ".netlify",
    ".config/heroku",
    ".config/firebase",
    ".config/configstore",
    ".config/gspread",
    ".config/pypoetry/auth.toml",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".config/keepassxc",
    ".config/KeePass",
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
    ".passwd-s3fs",
    ".boto",
    ".fly",
    ".wrangler",
    ".config/.wrangler",
    ".doppler",
    ".sentryclirc",
    ".twilio-cli",
    ".railway",
    ".supabase",
    ".vercel",
    ".wakatime.cfg",
    ".config/sops",
    ".config/age",
    ".config/borg/keys",
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
    ".config/tailscale",
    ".local/share/tailscale",
    ".config/openvpn",
    ".config/helm/repositories.yaml",
    ".mc",
    ".dbt",
    ".snowsql",
    ".databrickscfg",
    ".config/github-copilot",
    ".gemini",
    ".continue",
    ".sbt/credentials",
    ".sbt/.credentials",
    ".ivy2/.credentials",
    ".gradle/gradle.properties",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".bundle/config",
    ".config/keybase",
    ".circleci/cli.yml",
    ".travis/config.yml",
    ".config/.jira",
    ".jira.d",
    ".config/filezilla",
    ".config/remmina",
    ".local/share/remmina",
    ".remmina",
    ".config/JetBrains/*/options/security.xml",
    ".config/syncthing",
    ".local/state/syncthing",
    ".local/share/syncthing",
    ".config/transmission",
    ".config/transmission-daemon",
    ".config/yt-dlp/config",
    ".config/youtube-dl/config",
    ".config/spotify/prefs",
    ".config/spotify/Users",
    # mail and chat clients' passwords
    ".msmtprc",
    ".mbsyncrc",
    ".fetchmailrc",
    ".offlineimaprc",
    ".getmail",
    ".config/aerc/accounts.conf",
    ".config/himalaya",
    ".config/hexchat",
    ".purple",
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
    "/etc/passwd-s3fs",
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
    "*.keytab",
    "*.kdbx",
    "*.ovpn",
    "*.remmina",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    "*private_key*",
    "*private-key*",
    "credentials",
    "credentials.json",
    "credentials.toml",
    ".credentials",
    "service-account*.json",
    "service_account*.json",
    "*-sa-key.json",
    "client_secret*.json",
    "authorized_user.json",
    "token",
    "token.json",
    "token.pickle",
    "*.token",
    "*_token",
    "*-token",
    "access_token*",
    "refresh_token*",
    "api_key",
    "api-key",
    "apikey",
    "*.apikey",
    "*_secret",
    "*.tfstate",
    "*.tfstate.backup",
    "*.tfvars",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    ".passwd-s3fs",
    "passwd-s3fs",
    "secrets.y*ml",
    "secrets.json",
    "secrets.toml",
    "*.secret",
    "*.secrets",
)
NOT_SECRET_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")

_SECRET_NAME = re.compile("|".join(fnmatch.translate(p) for p in SECRET_FILE_PATTERNS))


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    if lowered.endswith(NOT_SECRET_SUFFIXES):
        return False
    return _SECRET_NAME.match(lowered) is not None


# The places by their first component (a policy check tries every path it reads): a path
# is only compared with the places that can match its first component.
_BY_FIRST: dict[str, list[tuple[str, ...]]] = {}
for _place in HOME_SECRETS:
    _parts = tuple(_place.split("/"))
    _BY_FIRST.setdefault(_parts[0], []).append(_parts)


def home_secret(rel: str) -> bool:
    """Whether ``rel`` (relative to the home directory) is, or is inside, a place of
    ``HOME_SECRETS``."""
    parts = tuple(p for p in rel.split("/") if p)
    if not parts:
        return False
    for place in _BY_FIRST.get(parts[0], ()):
        n = len(place)
        if len(parts) >= n and all(
            a == b or (("*" in b or "?" in b) and fnmatch.fnmatchcase(a, b))
            for a, b in zip(parts[1:n], place[1:], strict=False)
        ):
            return True
    return False


_SYSTEM = re.compile("|".join(f"{fnmatch.translate(p)[:-2]}(?:/.*)?\\Z" for p in SYSTEM_SECRETS))


def system_secret(path: str) -> bool:
    """Whether ``path`` (absolute) is, or is inside, a place of ``SYSTEM_SECRETS``."""
    return _SYSTEM.match(path) is not None


# -- by content --------------------------------------------------------------------------

CONTENT_READ_BYTES = 4096  # the first kilobytes of a file are read
CONTENT_SIZE_MAX = 64 * 1024  # larger files are data, not settings
# Top-level entries of the home directory whose files are not a tool's settings: caches,
# data, installed software, and places hidden by path already.
NOT_SETTINGS = frozenset(
    {
        ".cache",
        ".local",
        ".npm",
        ".nvm",
        ".pyenv",
        ".rbenv",
        ".rustup",
        ".cargo",
        ".conda",
        ".sdkman",
        ".gradle",
        ".m2",
        ".ivy2",
        ".gem",
        ".oh-my-zsh",
        ".vscode",
        ".vscode-server",
        ".cursor-server",
        ".var",
        ".git",
        ".dotnet",
        ".android",
        ".java",
        ".mozilla",
        ".thunderbird",
        ".wine",
        ".steam",
        ".nix-defexpr",
        ".nix-profile",
        ".Trash",
    }
)
# File names whose content is not settings (pictures, fonts, compiled code, databases).
NOT_SETTINGS_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".ico", ".svg", ".webp", ".bmp", ".ttf", ".otf",
    ".woff", ".woff2", ".so", ".pyc", ".mo", ".gz", ".zip", ".xz", ".zst", ".bz2", ".jar",
    ".wasm", ".sqlite", ".db", ".log", ".lock", ".md", ".html", ".css", ".js",
)  # fmt: skip

_KEYWORD = (
    r"private[_-]?key|passw(?:or)?d|passwd|passphrase|pass(?![a-z])|pwd(?![a-z])|token"
    r"|secret|api[_-]?key|apikey|access[_-]?key|credential|auth(?!or)"
)
_ANY_KEYWORD = re.compile(_KEYWORD, re.IGNORECASE)
# Every keyword holds one of these (``str`` search is far cheaper than the pattern's).
_WORDS = ("pass", "pwd", "token", "secret", "key", "credential", "auth")
_KEY = rf"[a-z0-9_.-]*(?:{_KEYWORD})[a-z0-9_.-]*"
# In a line of just ``key value`` the key must end with the word (``imap_password v``; a
# services table's ``kpasswd 464/tcp`` does not count).
_BARE = r"[a-z0-9_.-]*(?:private[_-]?key|password|passphrase|secret|token|api[_-]?key|apikey)"
# A key that names a secret, then its value: ``key = v``, ``"key": "v"``, ``key: v``,
# ``key => v``, ``<key>v</key>``, ``--key v`` or ``--key=v`` (a file of options), a line of
# just ``key v``, ``name="key" value="v"``.
_VALUE = r"""["']?(?P<value>[^\s"'<>,;\\]{6,})"""
_NEAR = tuple(
    re.compile(form.format(key=_KEY, bare=_BARE, value=_VALUE), re.IGNORECASE)
    for form in (
        r"""(?<![a-z0-9_])["']?{key}["']?\s*(?:[:=]|=>)\s*{value}""",
        r"<{key}>\s*{value}",
        r"(?:^|\s)--{key}(?:\s+|=){value}",
        r"^\s*{bare}\s+{value}\s*$",
        r"""name\s*=\s*["']{key}["']\s+value\s*=\s*{value}""",
    )
)
_COMMENT = re.compile(r"^\s*(?:#|;|//|<!--|\*)")
_NOT_VALUES = frozenset(
    {
        "true",
        "false",
        "null",
        "none",
        "nil",
        "undefined",
        "required",
        "optional",
        "enabled",
        "disabled",
        "default",
        "password",
        "changeme",
        "example",
        "string",
        "keyring",
        "keychain",
    }
)


def _secretish(value: str) -> bool:
    """Whether a value beside a secret's name looks like a secret, not a setting."""
    value = value.rstrip(":.,")
    low = value.lower()
    if low in _NOT_VALUES or low.startswith(("your", "${", "$", "%", "{{", "xxx", "***", "(")):
        return False
    if value.startswith(("/", "~", "./", "http://", "https://", "file:")) and "@" not in value:
        return False  # a path or an address: where a secret is, not the secret
    if "(" in value or low.startswith(("self.", "this.", ":")):
        return False  # code
    if re.fullmatch(r"[0-9.:/-]{1,11}(?:tcp|udp)?|\d{4}-\d\d-\d\d\S*", low):
        return False  # a number, a port, a time, a date
    if len(set(low)) <= 2:
        return False  # xxxxxx, ******
    if re.fullmatch(r"[a-z]+(?:[:._/ -][a-z]+)*", value) and not (
        len(value) >= 20 and value.isalpha()
    ):
        return False  # words: a setting's name, a list
    return len(value) >= 16 or any(not c.isalpha() for c in value) or value.lower() != value


# A file that is one opaque word: a key or a token kept on its own (``~/.config/hub/key``).
_LONE_TOKEN = re.compile(r"\s*([A-Za-z0-9+/=_.:-]{20,512})\s*")


def looks_secret(text: str) -> bool:
    """Whether a settings file's text (its first kilobytes) holds a credential."""
    lone = _LONE_TOKEN.fullmatch(text)
    if lone is not None and _opaque(lone.group(1)):
        return True
    lowered = text.lower()
    if not any(w in lowered for w in _WORDS):
        return _shaped(text)
    for line in text.splitlines():
        low = line.lower()
        if len(line) > 2000 or not any(w in low for w in _WORDS) or _COMMENT.match(line):
            continue
        for form in _NEAR:
            for m in form.finditer(line):
                if _secretish(m.group("value")):
                    return True
    return _shaped(text)


# No token shape is shorter than this, nor holds a space or a quote (``redaction/scan.py``).
_LONG_WORD = re.compile(r"""[^\s"'`=:,;<>()\[\]{}]{16,}""")


def _shaped(text: str) -> bool:
    """Whether a token's shape the redaction knows is in ``text`` (only its long words can
    be one: most settings files have none, and skip the redaction's rules)."""
    return bool(_LONG_WORD.search(text)) and any(hit.rank == SHAPE for hit in find(text))


def _opaque(word: str) -> bool:
    """A random-looking word: letters and digits mixed, not a path, a name or a version."""
    if word.startswith(("/", "http")) or re.fullmatch(r"[a-z._-]+|[0-9.:-]+", word):
        return False
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def content_candidate(home: Path | str, path: Path | str) -> bool:
    """Whether ``path`` (in ``home``) is where a tool keeps settings, by where it is and
    its name: ``~/.TOOL``, ``~/.config/…``, ``~/.TOOL/…``, not in a cache or an
    installed tree (``NOT_SETTINGS``), not a picture or a database."""
    base, text = os.fspath(home).rstrip("/"), os.fspath(path)
    if not text.startswith(base + "/"):
        return False
    rel = text[len(base) + 1 :]
    top = rel.split("/", 1)[0]
    if not top.startswith(".") or top in NOT_SETTINGS:
        return False
    return not rel.lower().endswith(NOT_SETTINGS_SUFFIXES)


def holds_secret(path: Path | str) -> bool:
    """Whether the regular file at ``path`` is small, text, and ``looks_secret``: reads at
    most ``CONTENT_READ_BYTES``, never follows a symlink, never blocks on a fifo."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > CONTENT_SIZE_MAX or not st.st_size:
            return False
        data = os.read(fd, CONTENT_READ_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    if b"\0" in data:
        return False
    return looks_secret(data.decode(errors="replace"))
