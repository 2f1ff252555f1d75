"""The bash program that runs each command, and what of its state is carried to the next.

Every command runs in a bash process of its own, started by the driver (``driver.py``) before
the command is known, with an environment that holds nothing but the session's functions.
It sources two scripts the driver writes (``state.py``, every value single-quoted): from fd 5,
as soon as it starts, the state (cwd, umask, variables); from fd 4, once the command is
known, the command and the options. Each script closes its fd. The bash then runs the
command with ``eval`` while fd 61 (the dump, a pipe) is closed, and writes its state, as data,
to fd 61:

    D1 NUL  `pwd -L` NUL  `umask` NUL  $SHELLOPTS NUL  $BASHOPTS NUL
    `declare -p` NUL  `declare -F` NUL  `declare -f` NUL  E NUL

Each is one builtin, so the dump costs a fraction of a millisecond and starts no process.
The exit status and options are kept in the positional parameters and the command text is
unset first, so a command that changes no state leaves the same bytes as the one before
(the driver then skips parsing them).
The driver parses it strictly and builds the next job from it; nothing in it is ever run
as code (see ``state.py``). The command may change or break the dump (it runs in the
same process), but then it only chooses or loses its own state: the exit code comes from
the process's wait status, and a dump that does not parse is not carried at all.

A command that ends its shell (``exit``, ``exec``, ``errexit``, a signal) writes no dump;
the state from before it is kept.
"""

from __future__ import annotations

STATE_FD = 5
JOB_FD = 4
DUMP_FD = 61

# Set by bash itself, read-only, or meaningless in another process: never carried.
SKIPPED_VARIABLES = frozenset(
    {
        "BASH",
        "BASHOPTS",
        "BASHPID",
        "BASH_ALIASES",
        "BASH_ARGC",
        "BASH_ARGV",
        "BASH_ARGV0",
        "BASH_CMDS",
        "BASH_COMMAND",
        "BASH_EXECUTION_STRING",
        "BASH_LINENO",
        "BASH_LOADABLES_PATH",
        "BASH_REMATCH",
        "BASH_SOURCE",
        "BASH_SUBSHELL",
        "BASH_VERSINFO",
        "BASH_VERSION",
        "COMP_WORDBREAKS",
        "DIRSTACK",
        "EPOCHREALTIME",
        "EPOCHSECONDS",
        "EUID",
        "FUNCNAME",
        "GROUPS",
        "HISTCMD",
        "LINENO",
        "PIPESTATUS",
        "PPID",
        "PWD",
        "RANDOM",
        "SECONDS",
        "SHELLOPTS",
        "SHLVL",
        "SRANDOM",
        "UID",
        "_",
    }
)
# A function with one of these names would run in place of the builtin the next job uses to
# restore the state (or, with a keyword's name, could never be called): not carried.
_BUILTINS_AND_KEYWORDS = """
. : [ [[ ]] { } ! alias bg bind break builtin caller case cd command compgen complete compopt
continue coproc declare dirs disown do done echo elif else enable esac eval exec exit export
false fc fg fi for function getopts hash help history if in jobs kill let local logout mapfile
popd printf pushd pwd read readarray readonly return select set shift shopt source suspend test
then time times trap true type typeset ulimit umask unalias unset until wait while
"""
BUILTIN_NAMES = frozenset(_BUILTINS_AND_KEYWORDS.split())
# Variables that make bash or the programs a command runs execute other code, fetch it from
# elsewhere, or trust someone else: the default policy's ``dangerous`` list (a test keeps the
# two equal), which asks before a command sets one. A command that ran confined because the
# policy called it read-only may not change them for the commands after it, however it did
# it: such a change is not carried, and the claim counts as refuted. ``*`` matches any run.
GUARDED_VARIABLES = (
    "PATH",
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "BASH_FUNC_*",
    "SHELLOPTS",
    "BASHOPTS",
    "PS1",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "GIT_*",
    "LESS*",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "PYTHON*",
    "PERL5*",
    "PERLLIB",
    "RUBY*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "SSH_*",
    "GNUPGHOME",
    "HOME",
    "ZDOTDIR",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "SUDO_ASKPASS",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "HISTFILE",
    "INPUTRC",
    "TERMINFO",
    "*PATH",
    "*_CONF",
    "*_CONFIG",
    "*_CONFIG_*",
    "*CONFIG_FILE",
    "*_RC",
    "*RCFILE",
    "*_HOME",
    "*_DIR",
    "*_DIRS",
    "*_OPTIONS",
    "*_OPTS",
    "*FLAGS",
    "*_COMMAND",
    "*_CMD",
    "*_PROGRAM",
    "*_PROG",
    "*_SHELL",
    "*_RSH",
    "*_EDITOR",
    "*_PAGER",
    "*_ASKPASS",
    "*PRELOAD*",
    "*_TUNABLES",
    "*_MODULE*",
    "*_PLUGIN*",
    "*OPEN",
    "*CLOSE",
    "GCONV_*",
    "LOCPATH",
    "NLSPATH",
    "OPENSSL_*",
    "SSL_CERT_*",
    "AWK*",
    "RIPGREP_*",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "MALLOC_*",
    "POSIXLY_CORRECT",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "NM",
    "RANLIB",
    "STRIP",
    "OBJCOPY",
    "OBJDUMP",
    "FC",
    "F77",
    "YACC",
    "LEX",
    "MAKE",
    "MAKEFILES",
    "*_WRAPPER",
    "RUSTC",
    "RUSTDOC",
    "CARGO_*",
    "PIP_*",
    "UV_*",
    "npm_config_*",
    "NPM_CONFIG_*",
    "YARN_*",
    "PNPM_*",
    "BUN_*",
    "GEM_*",
    "BUNDLE_*",
    "COMPOSER*",
    "CONDA*",
    "POETRY_*",
    "PIPENV_*",
    "MAVEN_*",
    "GRADLE_*",
    "GOPROXY",
    "GOSUMDB",
    "GONOSUMDB",
    "GONOSUMCHECK",
    "GONOPROXY",
    "GOPRIVATE",
    "GOINSECURE",
    "GOTOOLCHAIN",
    "GOBIN",
    "GOENV",
    "GOROOT",
    "GOEXPERIMENT",
    "GODEBUG",
    "GOMODCACHE",
    "*_proxy",
    "*_PROXY",
    "*CA_BUNDLE",
    "*_CA_CERTS",
    "*CAINFO",
    "SSLKEYLOGFILE",
    "DOCKER_*",
    "KUBECONFIG",
    "HELM_*",
    "AWS_*",
    "AZURE_*",
    "CLOUDSDK_*",
    "DEBUGINFOD_URLS",
    "R_*",
    "LUA_*",
    "PHPRC",
    "PSQLRC",
    "WGETRC",
    "SCREENRC",
    "IPYTHONDIR",
    "TEXTDOMAIN*",
    "VIMINIT",
    "EXINIT",
    "GVIMINIT",
    "MYVIMRC",
    "MANOPT",
    "MAILCAPS",
    "SHELL",
    "BASH_COMPAT",
    "EXECIGNORE",
    "BASH_XTRACEFD",
    "PS0",
    "PS2",
    "PS3",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "BASH_CMDS",
    "BASH_ALIASES",
    "FUNCNEST",
    "TMOUT",
    "GLOBSORT",
)


def _patterns(
    patterns: tuple[str, ...],
) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(exact names, prefixes, suffixes, infixes) of patterns with ``*`` at either end."""
    exact = frozenset(p for p in patterns if "*" not in p)
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*") and "*" not in p[:-1])
    suffixes = tuple(p[1:] for p in patterns if p.startswith("*") and "*" not in p[1:])
    infixes = tuple(
        p[1:-1] for p in patterns if len(p) > 2 and p[0] == p[-1] == "*" and "*" not in p[1:-1]
    )
    if len(exact) + len(prefixes) + len(suffixes) + len(infixes) != len(set(patterns)):
        raise ValueError("a guarded pattern has a * inside it")
    return exact, prefixes, suffixes, infixes


_EXACT, _PREFIXES, _SUFFIXES, _INFIXES = _patterns(GUARDED_VARIABLES)


def guarded(name: str) -> bool:
    return (
        name in _EXACT
        or name.startswith(_PREFIXES)
        or name.endswith(_SUFFIXES)
        or any(part in name for part in _INFIXES)
    )


# ``set -o`` options carried between commands. Left out: pipefail (always on), history,
# monitor, emacs and vi (interactive), noexec and onecmd (the job would stop running),
# privileged, verbose (it would print the driver's job).
SET_OPTIONS = (
    "allexport",
    "braceexpand",
    "errexit",
    "errtrace",
    "functrace",
    "hashall",
    "keyword",
    "noclobber",
    "noglob",
    "nolog",
    "notify",
    "nounset",
    "physical",
    "posix",
    "xtrace",
)
# ``shopt`` options carried. Left out: expand_aliases (always off: aliases are never
# carried), the compat levels, and the read-only login_shell and restricted_shell.
SHOPT_OPTIONS = (
    "assoc_expand_once",
    "cdable_vars",
    "checkhash",
    "dotglob",
    "execfail",
    "extdebug",
    "extglob",
    "extquote",
    "failglob",
    "globasciiranges",
    "globskipdots",
    "globstar",
    "gnu_errfmt",
    "inherit_errexit",
    "lastpipe",
    "localvar_inherit",
    "localvar_unset",
    "nocaseglob",
    "nocasematch",
    "noexpand_translation",
    "nullglob",
    "patsub_replacement",
    "shift_verbose",
    "sourcepath",
    "varredir_close",
    "xpg_echo",
)

# Options a confined command may not turn on (or, the last, off) for the commands after it:
# those the policy asks about (``policy/scripts.py``; a test keeps the two equal). They
# change what a later command's globs, ``cd`` or words name, or how its lines are read.
GUARDED_SET_ON = ("allexport", "errtrace", "functrace", "keyword", "noglob", "posix")
GUARDED_SET_OFF = ("braceexpand",)
GUARDED_SHOPT_ON = (
    "assoc_expand_once", "cdable_vars", "dotglob", "extdebug", "extglob", "extquote",
    "failglob", "globskipdots", "globstar", "lastpipe", "localvar_inherit",
    "localvar_unset", "nocaseglob", "nocasematch", "noexpand_translation", "nullglob",
    "patsub_replacement", "sourcepath", "varredir_close", "xpg_echo",
)  # fmt: skip
GUARDED_SHOPT_OFF = ("globskipdots",)
# How a new bash starts (non-interactive, 5.2): the state before the first dump.
DEFAULT_SET_ON = frozenset({"braceexpand", "hashall"})
DEFAULT_SHOPT_ON = frozenset({"extquote", "globskipdots", "patsub_replacement", "sourcepath"})

BOOT = f"""
builtin . /dev/fd/{STATE_FD}
builtin . /dev/fd/{JOB_FD}
builtin eval -- "$__sa_cmd" {DUMP_FD}>&-
{{ builtin set -- "$?" "$SHELLOPTS" "$BASHOPTS"; builtin set +o xtrace +o errexit +o nounset
}} 2>/dev/null
{{
  builtin printf 'D1\\0'
  builtin pwd -L; builtin printf '\\0'
  builtin umask; builtin printf '\\0%s\\0%s\\0' "$2" "$3"
  builtin unset __sa_cmd
  builtin declare -p; builtin printf '\\0'
  builtin declare -F; builtin printf '\\0'
  builtin declare -f; builtin printf '\\0E\\0'
}} >&{DUMP_FD} 2>/dev/null
builtin exit "$1"
"""
