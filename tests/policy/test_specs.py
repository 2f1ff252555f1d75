"""Program specs: they match the installed programs, are read like getopt_long, and decide
what ``allow`` and ``read_only`` mean."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from shellagent.errors import ConfigError
from shellagent.policy import (
    PolicyEngine,
    ShellState,
    default_policy_path,
    load_policy,
    preset_path,
)
from shellagent.policy.specs import ProgramSpec
from tests.policy.conftest import HOME, STATE, WORKSPACE

SPECS = load_policy([default_policy_path()]).specs.programs
GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")
# Subcommands that take another command's options (git reflog show is git log …).
GIT_SHARED = {
    "git log": ["log", "diff"],
    "git show": ["log", "diff"],
    "git whatchanged": ["log", "diff"],
    "git rev-list": ["log", "diff", "rev-list"],
    "git reflog": ["log", "diff"],
    "git reflog show": ["log", "diff"],
    "git stash list": ["log", "diff"],
    "git stash show": ["diff", "stash"],
}
HELP_OF = {"zgrep": "grep"}  # zgrep passes its options to grep
MANUAL_ONLY = {"ps": {"--sort"}}  # in ps(1), not in ps --help all


@cache
def help_text(program: str) -> str:
    """Everything the installed program says about its options (empty when it is missing)."""
    words = program.split()
    if words[0] == "busybox":
        if not shutil.which("busybox"):
            return ""
        argvs = [["busybox", words[1], "--help"]]
    elif words[0] == "git":
        if not shutil.which("git"):
            return ""
        subs = GIT_SHARED.get(program, words[1:2])
        argvs = [
            ["git", sub, flag] for sub in subs for flag in ("-h", "--git-completion-helper-all")
        ]
        argvs += [["git", "-h"]] if not subs else []
    else:
        if not shutil.which(words[0]):
            return ""
        name = HELP_OF.get(words[0], words[0])
        argvs = [[name, "--help"], [name, "-h"], [name, "--help", "all"]]
    out = []
    for argv in argvs:
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
                cwd=Path(__file__).parent,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        out.append(done.stdout + done.stderr)
    if words[0] == "git" and GIT_COMPLETION.exists():
        out.append(GIT_COMPLETION.read_text(encoding="utf-8"))
    return "\n".join(out)


def _documented(spec: ProgramSpec) -> list[str]:
    """The spellings a spec claims that --help should show: long options, and words."""
    forms = [_TEMPLATED.sub(_template, f) for o in spec.options for f in o.forms]
    if spec.model.style == "words":
        return [f for f in forms if len(f) > 2]
    return [f for f in forms if f.startswith("--")]


# diff --help writes --GTYPE-group-format and --LTYPE-line-format for four and three names.
_TEMPLATED = re.compile(r"--(?:old|new|unchanged|changed)-(group|line)-format")


def _template(m: re.Match[str]) -> str:
    return f"--{'G' if m.group(1) == 'group' else 'L'}TYPE-{m.group(1)}-format"


# Programs whose --help does not list every option (their specs come from their manuals).
UNDOCUMENTED_HELP = {
    "echo", "printf", "pwd", "cd", "pushd", "popd", "dirs", "true", "false", ":", "test", "[",
    "type", "command", "which", "wait", "jobs", "umask", "read", "history", "export",
    "declare", "typeset", "local", "readonly", "unset", "set", "shopt", "(assignment)",
    "(redirect)", "eval", "watch", "time", "bash", "dash", "sh", "find", "xxd", "tput",
    "clear", "top", "cal", "pidof", "dig", "host", "crontab", "dc", "strings", "bzcat",
    "git rev-parse", "git remote show", "git remote get-url", "git remote update",
    "git remote prune", "git reflog expire", "git reflog delete", "git reflog exists",
    "git stash", "git remote", "git", "mawk", "awk", "busybox awk", "busybox sed", "expr",
    "env", "jq",
    # git 2.46's config subcommands: an older git's -h lists the old options only
    "git config get", "git config list", "git config set", "git config unset",
    "git config edit", "git config rename-section", "git config remove-section",
    # git 2.48's reflog drop and 2.50's reflog write: not in an older git's -h
    "git reflog drop", "git reflog write",
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(SPECS))
def test_every_long_option_of_a_spec_exists_in_the_installed_program(key: str) -> None:
    spec = SPECS[key]
    claimed = _documented(spec)
    if key.split(" ")[0] in ("apt", "apt-cache", "dpkg", "dpkg-query", "pip", "pip3",
                             "systemctl", "ip"):  # fmt: skip
        pytest.skip(f"{key}: a hand-written subset; every other option asks")
    if key in UNDOCUMENTED_HELP or not claimed:
        pytest.skip(f"{key}: --help does not list its options")
    text = help_text(key)
    if not text:
        pytest.skip(f"{key.split()[0]} is not installed here")
    claimed = [f for f in claimed if f not in MANUAL_ONLY.get(key, ())]
    missing = [f for f in claimed if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)]
    assert missing == [], f"{key}: {missing} not in its --help (drift or a typo in the spec)"


def test_the_drift_check_catches_a_typo() -> None:
    spec = SPECS["sort"]
    text = help_text("sort")
    if not text:
        pytest.skip("sort is not installed")
    assert re.search(r"(?<![\w-])--outptu(?![\w-])", text) is None
    assert all(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text) for f in _documented(spec))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    return path


def test_a_malformed_option_is_a_config_error_with_file_and_line(tmp_path: Path) -> None:
    text = 'version = 1\n\n[program.frob]\noptions = [\n  "-a, --all",\n  "--bad option here",\n]\n'
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_policy([path])
    assert info.value.path == str(path)
    assert info.value.line == 6
    assert "cannot read option" in info.value.message


def test_an_unknown_effect_is_a_config_error_naming_the_known_ones(tmp_path: Path) -> None:
    text = '[program."frob list"]\noptions = ["-o FILE -> writes"]\n'
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match="unknown effect 'writes'") as info:
        load_policy([path])
    assert info.value.line == 2


def test_an_unknown_operand_role_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path, '[program.frob]\noperands = ["reed"]\n')
    with pytest.raises(ConfigError, match="unknown operand role 'reed'") as info:
        load_policy([path])
    assert info.value.line == 2


@pytest.fixture(scope="module")
def permissive() -> PolicyEngine:
    return PolicyEngine.load([preset_path("permissive")], home=HOME, workspace=WORKSPACE)


def check(engine: PolicyEngine, command: str) -> tuple[str, str]:
    d = engine.check(command, STATE)
    return d.decision, " ".join(d.reasons)


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("sort --output=x in", "ask"),  # a unique prefix is that option
        ("sort --out=x in", "ask"),
        ("sort --rev in", "allow"),  # --reverse
        ("sort -rnk2 in", "allow"),  # a cluster with a value at its end
        ("sort -k2 -n in", "allow"),
        ("sort -ox in", "ask"),  # -o with its value attached
        ("sort -- -o", "allow"),  # after -- it is a file name
        ("sort in -o out", "ask"),  # GNU permutation: options after operands
        ("ls --colo=auto", "allow"),
        ("ls --frobnicate", "ask"),
        ("head -n 20 f", "allow"),
        ("head -20 f", "allow"),
        ("grep -e x -f patterns f", "allow"),
        ("echo -x foo", "allow"),  # echo prints what it does not know
        ("git log --outp=/tmp/x", "ask"),
    ],
)
def test_argvs_are_read_the_way_getopt_long_reads_them(
    engine: PolicyEngine, command: str, decision: str
) -> None:
    assert check(engine, command)[0] == decision, command


def test_an_ambiguous_long_prefix_asks_and_names_the_candidates(engine: PolicyEngine) -> None:
    decision, reasons = check(engine, "git diff --out=notes.txt")
    assert decision == "ask"
    assert "ambiguous option --out" in reasons and "--output" in reasons


def test_an_unknown_option_asks_and_says_which(engine: PolicyEngine) -> None:
    decision, reasons = check(engine, "ls --x")
    assert decision == "ask"
    assert "unknown option --x of ls" in reasons


def test_a_run_time_word_that_could_be_an_option_that_acts_asks(engine: PolicyEngine) -> None:
    assert check(engine, 'sort "$X" in')[0] == "ask"
    assert check(engine, "find . -name '*.log' | xargs sort")[0] == "ask"
    # review 3, L7: an option that reads a file it names acts too (wc --files0-from=F,
    # grep -f F); one that only changes what is printed does not (cat has none else)
    assert check(engine, 'wc -l "$f"')[0] == "ask"
    assert check(engine, "find . -name '*.log' | xargs grep ERROR")[0] == "ask"
    assert check(engine, 'wc -l -- "$f"')[0] == "allow"
    assert check(engine, 'cat "$f"')[0] == "allow"


def test_a_target_given_by_option_is_judged(engine: PolicyEngine) -> None:
    assert check(engine, "mv -t /etc x")[0] == "deny"
    assert check(engine, "mv --target-directory=/etc x")[0] == "deny"
    assert check(engine, "mv --target=/etc x")[0] == "deny"
    assert check(engine, "mv x /etc")[0] == "deny"


def test_read_only_is_claimed_only_by_rules_that_say_so(permissive: PolicyEngine) -> None:
    git_add = permissive.check("git add notes.md", STATE)
    assert git_add.decision == "allow" and not git_add.read_only  # git-everyday
    touch = permissive.check("touch notes.txt", STATE)
    assert touch.decision == "allow" and not touch.read_only  # file-changes
    assert permissive.check("git status", STATE).read_only


@pytest.mark.parametrize(
    "command",
    ["cd ~/Documents", "export MY_VAR=1", "ls -la", "git log -n 5", "x=1", "cat f | wc -l"],
)
def test_shell_state_and_reads_are_read_only(engine: PolicyEngine, command: str) -> None:
    decision = engine.check(command, STATE)
    assert decision.decision == "allow" and decision.read_only, decision.reasons


@pytest.mark.parametrize(
    "command",
    ["ls > listing.txt", "ping -c 3 example.com", "date", "git stash list | head"],
)
def test_read_only_needs_no_write_and_a_claiming_rule(engine: PolicyEngine, command: str) -> None:
    decision = engine.check(command, STATE)
    if command == "date":
        assert decision.read_only
    elif command == "git stash list | head":
        assert decision.decision == "allow" and decision.read_only
    else:
        assert not decision.read_only, command


def test_awk_is_judged_as_the_installed_implementation(engine: PolicyEngine) -> None:
    real = shutil.which("awk")
    if real is None:
        pytest.skip("no awk here")
    implementation = Path(real).resolve().name
    segment = engine.check("awk '{print $1}' f", STATE).segments[0]
    assert segment.decision == "allow"
    key = engine.policy.specs.key_for("awk", None, via_busybox=False)
    assert key == (implementation if implementation in SPECS else "awk")
    if implementation == "mawk":
        assert check(engine, "awk -W version")[0] == "allow"
        assert check(engine, "awk -W exec prog.awk")[0] == "ask"
        assert check(engine, "awk -We prog.awk")[0] == "ask"  # an abbreviation of exec
        assert check(engine, "awk --file=prog.awk in")[0] == "ask"  # mawk has no --file


def test_busybox_applets_have_their_own_specs(engine: PolicyEngine) -> None:
    assert check(engine, "busybox sed -n 1p f")[0] == "allow"
    assert check(engine, "busybox sed -i s/a/b/ f")[0] == "ask"
    assert check(engine, "busybox awk -e 'BEGIN{system(\"id\")}'")[0] == "ask"
    assert check(engine, "busybox awk '{print $2}' f")[0] == "allow"


@pytest.mark.parametrize(
    ("script", "decision"),
    [
        ("'{print $1}'", "allow"),
        ("'$3 > 100 {print}'", "allow"),  # a comparison, not a redirection
        ("'{print $1 > \"out\"}'", "ask"),
        ("'{print | \"sh\"}'", "ask"),
        ("'{\"date\" | getline d}'", "ask"),
        ("'BEGIN{system(\"id\")}'", "ask"),
        ("'{getline line < \"f\"; print line}'", "allow"),
    ],
)
def test_awk_programs_are_read_for_side_effects(
    engine: PolicyEngine, script: str, decision: str
) -> None:
    assert check(engine, f"awk {script} f")[0] == decision


def test_dc_bang_runs_a_command(engine: PolicyEngine) -> None:
    assert check(engine, "dc -e '2 3 + p'")[0] == "allow"
    assert check(engine, "dc -e '!id'")[0] == "ask"
    assert check(engine, "dc prog.dc")[0] == "ask"  # a file of dc code


@pytest.mark.parametrize(
    "command",
    ["set -k", "set -T", "set -o functrace", "shopt -s extdebug", "shopt -s expand_aliases",
     "bash -k -c 'git status'", "bash -O extdebug -c ls"],
)  # fmt: skip
def test_shell_options_that_change_later_parsing_ask(engine: PolicyEngine, command: str) -> None:
    assert check(engine, command)[0] == "ask"


@pytest.mark.parametrize(
    "command", ["set -euo pipefail", "set -x", "shopt -s checkwinsize", "set +e", "set +o xtrace"]
)
def test_ordinary_shell_options_are_allowed(engine: PolicyEngine, command: str) -> None:
    assert check(engine, command)[0] == "allow"


@pytest.mark.parametrize(
    "name",
    ["GCONV_PATH", "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "OPENSSL_CONF", "OPENSSL_ENGINES",
     "RIPGREP_CONFIG_PATH", "AWKPATH", "AWKLIBPATH", "LESSOPEN", "LESSCLOSE", "JAVA_TOOL_OPTIONS",
     "CARGO_HOME", "GIT_SSH_COMMAND", "PKG_CONFIG_PATH", "MAKEFLAGS",
     # what a later build, install or download runs, fetches from or trusts
     "CC", "CXX", "MAKEFILES", "RUSTC_WRAPPER", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
     "PIP_INDEX_URL", "npm_config_registry", "NPM_CONFIG_SCRIPT_SHELL", "UV_INDEX_URL",
     "GOPROXY", "GOTOOLCHAIN", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
     "SSLKEYLOGFILE", "AWS_PROFILE", "DOCKER_HOST", "KUBECONFIG",
     # start-up files of other programs, and the shell's own
     "LUA_INIT", "R_PROFILE_USER", "PHPRC", "PSQLRC", "WGETRC", "VIMINIT", "IPYTHONDIR",
     "TEXTDOMAINDIR", "SHELL", "BASH_COMPAT", "EXECIGNORE", "PS0", "HOSTALIASES"],
)  # fmt: skip
def test_variables_that_name_loaded_files_or_programs_are_dangerous(
    engine: PolicyEngine, name: str
) -> None:
    decision, reasons = check(engine, f"export {name}=.")
    assert decision == "ask" and "can make programs run other code" in reasons, name


@pytest.mark.parametrize(
    "name", ["MY_VAR", "EDITOR_THEME", "COUNT", "TARGET", "SRC", "OUTDIR", "GOAL", "CCACHE_SIZE"]
)
def test_ordinary_variables_are_not(engine: PolicyEngine, name: str) -> None:
    assert check(engine, f"export {name}=1")[0] == "allow"


def test_git_subcommands_that_change_the_repository_ask(engine: PolicyEngine) -> None:
    for command in ("git stash", "git branch NEW", "git tag v1", "git config user.name me",
                    "git remote add evil https://x", "git reflog expire --all"):  # fmt: skip
        assert check(engine, command)[0] == "ask", command
    for command in ("git stash list", "git branch -a", "git tag -l", "git config user.name",
                    "git remote -v", "git reflog", "git reflog show main"):  # fmt: skip
        assert check(engine, command)[0] == "allow", command


def test_session_always_allow_applies_only_in_its_directory() -> None:
    engine = PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)
    engine.remember_always("python3 build.py", "session", WORKSPACE)
    assert engine.check("python3 build.py", ShellState(cwd=WORKSPACE)).decision == "allow"
    elsewhere = ShellState(cwd=HOME / "other")
    assert engine.check("python3 build.py", elsewhere).decision == "ask"


def test_a_cd_in_the_same_line_voids_directory_scoped_always_allow() -> None:
    engine = PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)
    engine.remember_always("make", "session", WORKSPACE)
    state = ShellState(cwd=WORKSPACE)
    assert engine.check("make", state).decision == "allow"
    assert engine.check("cd /tmp && make", state).decision == "ask"
    assert engine.check("make && make", state).decision == "allow"
    assert engine.check("make install", state).decision == "ask"


def test_the_driver_guards_what_every_shipped_policy_calls_dangerous() -> None:
    # The sandbox's second wall: a change a confined command makes to one of these is undone
    # even if the policy was fooled into allowing it (scripts.GUARDED_VARIABLES).
    from shellagent.sandbox import scripts

    names = ["PATH", "MYPATH", "https_proxy", "CC", "A_CONFIG_B", "LD_PRELOAD", "X_PLUGINS"]
    names += ["COUNT", "SRC", "GOAL", "CCACHE_SIZE", "PATHS", "_", "A"]
    for preset in ("default", "permissive", "strict"):
        policy = load_policy([preset_path(preset)])
        assert set(policy.dangerous) == set(scripts.GUARDED_VARIABLES), preset
        for name in names:
            assert scripts.guarded(name) == policy.is_dangerous(name), name


def test_the_driver_guards_the_shell_options_the_policy_asks_about() -> None:
    from shellagent.policy.scripts import set_words, shopt_words
    from shellagent.sandbox import scripts

    for option in scripts.SET_OPTIONS:
        assert bool(set_words(["-o", option])) == (option in scripts.GUARDED_SET_ON), option
        off = bool(set_words(["+o", option]))
        assert off == (option in scripts.GUARDED_SET_OFF), option
    for option in scripts.SHOPT_OPTIONS:
        assert bool(shopt_words(["-s", option])) == (option in scripts.GUARDED_SHOPT_ON), option
        off = bool(shopt_words(["-u", option]))
        assert off == (option in scripts.GUARDED_SHOPT_OFF), option
