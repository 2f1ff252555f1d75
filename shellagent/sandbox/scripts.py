"""The two bash programs that run inside every sandbox.

The **supervisor** is the sandbox's main process; its own stderr goes to /dev/null so its
job notices ("Killed") never reach the command's output. It keeps restarting the **driver**, so a
command that runs ``exit``, ``exec bash`` or ``kill $$`` ends the driver, not the sandbox:
the files of an ephemeral root survive and the host is told (``D``) that shell state was
lost.

The **driver** is the persistent shell. It reads frames from fd 3 (the control pipe) and
writes status records to fd 4 (the status pipe); the command's output goes to stdout and
stderr, a different pipe, so nothing a command prints can look like a status. Each command
runs with stdin from /dev/null and fds 3 and 4 closed. Frames are NUL-terminated:

    C<command>   run it (errexit, a syntax error, anything: its status is kept)
    N<nonce>     report the last status, tagged with this nonce

Before each command, jobs that changed state since the last one (background jobs a timeout
killed) are marked notified quietly, so bash's "bash: line N: PID Killed  sleep 600" notice
does not land in the next command's output.

The nonce is sent after the command, so it is still unread in the pipe while the command
runs and no shell variable holds it. A command cannot forge completion by printing an old
marker, and after a driver restart a leftover ``N`` frame only yields a stale status that
the host ignores.

Status records, NUL-separated fields:

    P <pid>                          supervisor started (pid inside the sandbox)
    R <pid> <cwd> <last>                    driver ready
    S <nonce> <rc> <cwd> <last> <functions> command done; functions newline-separated

``last`` is the namespace's ``ns_last_pid``: every process with a higher pid inside the
sandbox was started by the command that runs next, which is what a timeout kills.
    D <rc>                           the driver exited with rc (it is restarted)
"""

from __future__ import annotations

SUPERVISOR = r"""
exec 3<&"$1" 4>&"$2" 5>&2 2>/dev/null
eval "exec $1<&- $2>&-"
builtin printf 'P\0%s\0' "$$" >&4
while :; do
  /bin/bash --noprofile --norc -c "$3" bash 2>&5 5>&-
  builtin printf 'D\0%s\0' "$?" >&4
done
"""

DRIVER = r"""
builtin set +o history
builtin set -o pipefail
builtin shopt -u expand_aliases
builtin unset PROMPT_COMMAND BASH_ENV ENV
__sa_rc=0
builtin read -r __sa_last < /proc/sys/kernel/ns_last_pid
builtin printf 'R\0%s\0%s\0%s\0' "$$" "$PWD" "$__sa_last" >&4
while builtin read -r -d '' -u 3 __sa_frame; do
  case $__sa_frame in
  C*)
    builtin set -o pipefail
    builtin shopt -u expand_aliases
    builtin jobs -n >/dev/null 2>&1
    builtin eval -- "${__sa_frame#C}" 0</dev/null 3<&- 4>&-
    __sa_rc=$?
    ;;
  N*)
    builtin read -r __sa_last < /proc/sys/kernel/ns_last_pid
    {
      builtin printf 'S\0%s\0%s\0%s\0%s\0' "${__sa_frame#N}" "$__sa_rc" "$PWD" "$__sa_last"
      builtin compgen -A function
      builtin printf '\0'
    } >&4
    ;;
  esac
done
"""
