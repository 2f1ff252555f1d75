"""The carried state is data: a dump full of shell code, restored in a real bash, runs none
of it. The dumps here are forged by hand, as a command could write its own dump pipe."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellagent.sandbox import scripts
from shellagent.sandbox.state import State, Unreadable, parse_declarations


def dump(declarations: bytes = b"", listing: bytes = b"", text: bytes = b"") -> bytes:
    fields = [b"D1", b"/tmp\n", b"0022\n", b"hashall", b"extglob", declarations, listing, text]
    return b"\0".join([*fields, b"E", b""])


# Puts the three pipes where the driver puts them, then becomes the bash (argv: fds, BOOT).
TARGETS = (scripts.STATE_FD, scripts.JOB_FD, scripts.DUMP_FD)
PLACE_FDS = f"""
import os, sys
for fd, target in zip(map(int, sys.argv[1:4]), {TARGETS}):
    os.dup2(fd, target)
os.execv("/bin/bash", ["bash", "--noprofile", "--norc", "-c", sys.argv[4], "bash"])
"""


def run_next(state: State, command: bytes) -> tuple[str, State | None]:
    """Run ``command`` in a bash set up from ``state`` exactly as the driver does."""
    raw = [*os.pipe(), *os.pipe(), *os.pipe()]
    state_r, state_w, job_r, job_w, dump_r, dump_w = (
        fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in raw
    )
    for fd in raw:
        os.close(fd)
    os.write(state_w, state.restore())
    os.write(job_w, state.job(command))
    for fd in (state_w, job_w):
        os.close(fd)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PLACE_FDS, str(state_r), str(job_r), str(dump_w), scripts.BOOT],
            env=state.environment(),
            pass_fds=(state_r, job_r, dump_w),
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        for fd in (state_r, job_r, dump_w):
            os.close(fd)
    data = b""
    while chunk := os.read(dump_r, 65536):
        data += chunk
    os.close(dump_r)
    try:
        return proc.stdout + proc.stderr, State.parse(data)
    except Unreadable:
        return proc.stdout + proc.stderr, None


def test_values_full_of_code_are_restored_as_text(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    code = f"$(touch {marker})`touch {marker}`".encode()
    forged = (
        b'declare -- s="' + code.replace(b"$", b"\\$").replace(b"`", b"\\`") + b'"\n'
        b"declare -- q=$'it\\'s \\n" + code + b"'\n"
        b'declare -A m=(["' + code.replace(b"$", b"\\$").replace(b"`", b"\\`") + b'"]="v" )\n'
        b'declare -a a=([0]="x" [7]="y")\n'
    )
    state = State.parse(dump(forged))
    output, after = run_next(state, b'printf "%s|" "$s" "$q" "${!m[@]}" "${a[7]}"')
    assert not marker.exists()
    text = code.decode()
    assert output == f"{text}|it's \n{text}|{text}|y|"
    assert after is not None and after.variables[b"s"] == (b"", code)


@pytest.mark.parametrize(
    "forged",
    [
        b'declare -i n="a[$(touch {m})]"\n',  # an integer assignment evaluates its value
        b'declare -n r="a[$(touch {m})]"\n',  # a reference evaluates its subscript
        b'declare -ai n=([0]="$(touch {m})")\n',
    ],
)
def test_values_bash_would_evaluate_are_not_carried(tmp_path: Path, forged: bytes) -> None:
    marker = tmp_path / "RAN"
    state = State.parse(dump(forged.replace(b"{m}", str(marker).encode())))
    assert state.dropped and not {b"n", b"r"} & set(state.variables)
    output, _ = run_next(state, b"echo $n $r; echo ${n[0]}; (( n + 1 ))")
    assert not marker.exists()


def test_a_function_text_with_code_after_it_is_refused_by_bash(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    forged = dump(
        listing=b"declare -f f\n",
        text=f"f () \n{{ \n    echo f\n}}; touch {marker}\n".encode(),
    )
    state = State.parse(forged)
    output, _ = run_next(state, b"f; echo next")
    assert not marker.exists()
    assert "error importing function definition" in output and output.startswith("next\n")


def test_functions_named_like_builtins_are_not_carried(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    names = [b"builtin", b"declare", b"cd", b"exec", b"set", b"."]
    listing = b"".join(b"declare -f " + n + b"\n" for n in names)
    text = b"".join(n + b" () \n{ \n    touch " + str(marker).encode() + b"\n}\n" for n in names)
    state = State.parse(dump(listing=listing, text=text))
    assert state.functions == {} and set(state.dropped) == set(names)
    output, after = run_next(state, b"cd /; set -- a; echo $1")
    assert not marker.exists() and output == "a\n"


def test_the_host_hears_the_functions_the_next_bash_has(tmp_path: Path) -> None:
    state = State.parse(
        dump(
            listing=b"declare -f g\ndeclare -fx h\n",
            text=b"g () \n{ \n    echo g\n}\nh () \n{ \n    echo h\n}\n",
        )
    )
    output, after = run_next(state, b"g; h; declare -F; env | grep -c BASH_FUNC_h")
    assert output == "g\nh\ndeclare -f g\ndeclare -fx h\n1\n"
    assert after is not None and set(after.functions) == {b"g", b"h"}


@pytest.mark.parametrize(
    "bad",
    [
        b"D1\0relative\n\0" + b"0022\n\0\0\0\0\0\0E\0",  # cwd not absolute
        dump().replace(b"0022", b"0x22"),
        dump().replace(b"extglob", b"ext glob"),
        dump(b"echo hi\n"),  # a declaration that is not one
        dump(b'declare -- 1x="v"\n'),
        dump(listing=b"declare -f f\n", text=b"g () \n{ :; }\n"),
        dump() + b"more",
    ],
)
def test_a_dump_that_is_not_exactly_one_is_not_carried(bad: bytes) -> None:
    with pytest.raises(Unreadable):
        State.parse(bad)


def test_declare_p_quoting_round_trips() -> None:
    found, rejected = parse_declarations(
        b'declare -- a="q\\"d\\$\\`\\\\ x"\n'
        b"declare -- c=$'nl\\nx\\ttab\\001\\377\\303\\251 \\u00e9'\n"
        b"declare -x h\n"
        b'declare -A g=(["sp ace"]="1" [k]="v" [$\'n\\nl\']="3" )\n'
    )
    assert rejected == []
    assert found[b"a"] == (b"", b'q"d$`\\ x')
    assert found[b"c"] == (b"", b"nl\nx\ttab\x01\xff\xc3\xa9 \xc3\xa9")
    assert found[b"h"] == (b"x", None)
    assert found[b"g"] == (b"A", [(b"sp ace", b"1"), (b"k", b"v"), (b"n\nl", b"3")])
