"""Review 2's M6 and M7 as an unprivileged user: ``nobody`` prints secret shapes and lists
host processes in a real sandbox, writes what it saw through the transcript writer, and
neither the file, nor ``logs show``'s page, nor the RL export holds a secret."""

from __future__ import annotations

import json

import pytest

from tests.sandbox.test_hostview import (
    _M6_TOKENS,
    _M6_VALUES,
    m6_processes,  # noqa: F401  (a fixture, used by name)
)
from tests.transcript.secret_shapes import SHAPES
from tests.unprivileged import NOBODY, SYSTEM_PYTHON, nobody_home, run_as_nobody

PIECE = 12

# Run by the unprivileged Python: the commands in one sandbox, each output recorded as the
# loop records it (the command in a policy verdict's argv too), then the transcript read
# back as ``logs show`` and ``export --format rl`` do.
SESSION = r"""
import io, json, sys
from pathlib import Path
from shellagent.events import ChatMessage, End, Execution, ModelTurn, PolicyVerdict, SessionStart
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transcript import TranscriptWriter, export, iter_transcripts, read_transcript
from shellagent.transcript.render import render_transcript
spec = json.loads(sys.argv[1])
writer = TranscriptWriter()
writer.write(SessionStart(session=writer.session_id, task=spec["task"]))
writer.write(ChatMessage(role="user", content=spec["task"]))
with Sandbox(get_profile("default", cwd=Path(spec["cwd"])), timeout=20) as session:
    for turn, command in enumerate(spec["commands"]):
        raw = json.dumps({"cmd": command, "why": "look"})
        writer.write(ModelTurn(turn=turn, raw=raw, action={"cmd": command, "why": "look"}))
        writer.write(ChatMessage(role="assistant", content=raw, turn=turn))
        writer.write(PolicyVerdict(turn=turn, command=command, decision="allow",
                                   segments=({"argv": command.split(), "key": command},)))
        result = session.run(command)
        writer.write(Execution(turn=turn, command=command, output=result.output,
                               exit_code=result.exit_code))
        writer.write(ChatMessage(role="user", content=result.output, turn=turn))
writer.write(End(reason="finished", summary=spec["summary"], turns=len(spec["commands"])))
writer.close()
rl = io.StringIO()
export("rl", iter_transcripts(), rl)
print(json.dumps({
    "path": str(writer.path),
    "disk": writer.path.read_text(),
    "shown": render_transcript(read_transcript(writer.path), full=True),
    "rl": rl.getvalue(),
    "mode": oct(writer.path.stat().st_mode & 0o777),
    "uid": writer.path.stat().st_uid,
}))
"""


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


@pytest.mark.slow
def test_an_unprivileged_users_transcript_logs_and_export_hold_no_secret(
    tmp_path_factory: pytest.TempPathFactory,
    m6_processes: str,  # noqa: F811
) -> None:
    lines = [shape.text.replace("\n", " ") for shape in SHAPES]
    place = nobody_home(
        tmp_path_factory.mktemp("nobody-m7"), {"shapes.txt": "\n".join(lines) + "\n"}
    )
    home, work = place.home, place.work
    step = 8
    commands = [f"sed -n '{a},{a + step - 1}p' shapes.txt" for a in range(1, len(lines) + 1, step)]
    commands.append(f"ps auxww | grep -F {m6_processes} | grep -v grep")
    in_task = [s for s in SHAPES if s.name in ("DigitalOcean dop_v1_", "Notion ntn_")]
    spec = {
        "cwd": str(work),
        "commands": commands,
        "task": "are these valid: " + " ".join(s.secrets[0] for s in in_task),
        "summary": f"the first one, {in_task[0].secrets[0]}, is valid",
    }
    env = place.env(
        **{f"SHELLAGENT_{n}_DIR": str(home / f".sa-{n.lower()}") for n in ("CACHE", "DATA",
                                                                           "CONFIG", "STATE")}
    )  # fmt: skip
    proc = run_as_nobody(
        [SYSTEM_PYTHON, "-c", SESSION, json.dumps(spec)], env, cwd=work, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["uid"] == NOBODY and out["mode"] == "0o600"
    assert out["disk"].count(m6_processes) >= 9  # the host processes were listed
    assert out["rl"].count("\n") == 1
    secrets = [s for shape in SHAPES for s in shape.secrets]
    host = [*_M6_VALUES.values(), *_M6_TOKENS]
    for name in ("disk", "shown", "rl"):
        left = [s for s in secrets if leaked(s, out[name])] + [v for v in host if v in out[name]]
        assert not left, (name, left[:5])
    assert out["disk"].count("[REDACTED:") >= len(SHAPES)
