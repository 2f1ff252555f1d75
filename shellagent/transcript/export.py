"""Training-data exports: views of the transcripts as SFT, DPO and RL JSONL.

``sft``  ``{"messages": [{"role", "content"}, ...]}``: the conversation exactly as the model
         saw it, in the shape OpenAI fine-tuning and TRL's ``SFTTrainer`` read. Replies that
         were refused, denied by the policy, quit on or unparseable are dropped together with
         the observations that answered them; an edited command is written back into the
         reply (the session continued from the edit), or the session is skipped when the
         reply is not a JSON action. Trailing observations after the last reply are dropped.
         Successful sessions only, unless asked otherwise. A reply to the recipe step's
         question (its ``model_turn`` records the ``prompt``) is a record of its own: that
         prompt, then the reply, when it ran unedited; the free loop's record holds what
         the free loop saw (the observations it was told, not that reply).
``dpo``  ``{"prompt": [messages], "chosen": [assistant], "rejected": [assistant]}`` (TRL's
         conversational preference shape), one pair per edit (edited reply chosen, original
         rejected) and per refusal followed by an accepted command that exited 0 in a session
         that succeeded (that later reply chosen, the refused one rejected). The prompt is the
         conversation the model had seen when it produced the rejected reply (the
         recipe step's prompt for its reply); both replies answer the same prompt.
``rl``   one record per finished episode: the opening prompt (the recipe step's, when
         the first reply answered it), each turn (its own ``prompt`` when it answered the
         recipe step's, reply, action,
         command, status, observation, exit code, token ids and logprobs when captured),
         success, ``n_turns`` and the reward of ``reward.py``; with ``group``, the rollouts
         of each task together with group-relative advantages (``groups.py``).

The exact fields are listed in ``docs/transcripts.md``. One bad session never stops an
export: it is skipped and named in the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TextIO, TypeGuard, TypeVar

from shellagent.events import Check
from shellagent.transcript.groups import with_advantages
from shellagent.transcript.reader import Transcript
from shellagent.transcript.records import (
    DpoRecord,
    Message,
    Record,
    RlCheck,
    RlRecord,
    RlTurn,
    SftRecord,
)
from shellagent.transcript.reward import episode_reward
from shellagent.transcript.steps import ACCEPTED, EXCLUDED, Conversation, Step, conversation

T = TypeVar("T")


class SkipSession(Exception):
    """This session cannot be exported in this format; the message says why."""


def _assistant(content: str) -> list[Message]:
    return [{"role": "assistant", "content": content}]


def sft_records(transcript: Transcript) -> list[SftRecord]:
    conv = conversation(transcript)
    asked: list[SftRecord] = []  # the recipe step's replies, each under its own prompt
    out: list[Message] = []  # the free loop's conversation
    for message, index in zip(conv.messages, conv.step_of_message, strict=True):
        if index is None:
            out.append(dict(message))
            continue
        step = conv.steps[index]
        if step.prompt:
            if message["role"] != "assistant":
                out.append(dict(message))  # told to the model: the free loop saw it
            elif step.status not in (*EXCLUDED, "edited"):  # an edit is no use reply
                asked.append({"messages": [*step.prompt, _assistant(step.reply)[0]]})
            continue
        if step.status in EXCLUDED:
            continue
        if message["role"] == "assistant":
            reply = step.accepted_reply()
            if reply is None:
                raise SkipSession(f"turn {step.turn}: the edit cannot be written into the reply")
            out.append({"role": "assistant", "content": reply})
        else:
            out.append(dict(message))
    while out and out[-1]["role"] != "assistant":
        out.pop()
    free: list[SftRecord] = [{"messages": out}] if out else []
    if not asked and not free:
        raise SkipSession("no reply left to learn from")
    return asked + free


def dpo_records(transcript: Transcript) -> list[DpoRecord]:
    conv = conversation(transcript)
    records: list[DpoRecord] = []
    for i, step in enumerate(conv.steps):
        prompt = seen_before(conv, i)
        if step.status == "edited":
            chosen = step.accepted_reply()
            if chosen is not None and chosen != step.reply:
                records.append(
                    {
                        "prompt": prompt,
                        "chosen": _assistant(chosen),
                        "rejected": _assistant(step.reply),
                    }
                )
        elif step.status == "refused" and transcript.success is True:
            later = _next_accepted(conv.steps[i + 1 :])
            # a pair is two answers to one prompt: a recipe's reply and the free loop's
            # answer different ones
            if later is not None and later.exit_code == 0 and later.prompt == step.prompt:
                chosen = later.accepted_reply()
                if chosen is not None:
                    records.append(_pair(prompt, chosen, step.reply))
    return records


def seen_before(conv: Conversation, index: int) -> list[Message]:
    """The messages step ``index`` answered: the recipe step's prompt when it recorded
    one, else the conversation before its reply, without the replies to that prompt
    (which the free loop never saw)."""
    step = conv.steps[index]
    if step.prompt:
        return step.prompt
    reply = conv.step_of_message.index(index)
    return [
        dict(m)
        for m, i in zip(conv.messages[:reply], conv.step_of_message, strict=False)
        if not (i is not None and conv.steps[i].prompt and m["role"] == "assistant")
    ]


def _pair(prompt: list[Message], chosen: str, rejected: str) -> DpoRecord:
    return {"prompt": prompt, "chosen": _assistant(chosen), "rejected": _assistant(rejected)}


def _next_accepted(steps: Iterable[Step]) -> Step | None:
    return next((s for s in steps if s.status in ACCEPTED), None)


def rl_records(transcript: Transcript) -> list[RlRecord]:
    if transcript.end is None:
        raise SkipSession("the episode never ended (interrupted)")
    # An unverified "done" is not a success: its reward is that of a failure.
    success = transcript.success
    conv = conversation(transcript)
    turns = [_rl_turn(step) for step in conv.steps]
    exit_codes = [s.exit_code for s in conv.steps if s.execution is not None]
    n_turns = max(len(conv.steps), transcript.turns)
    checks = transcript.of_type(Check)
    check: RlCheck | None = None
    if checks:
        last = checks[-1]
        check = {
            "command": last.command or "",
            "exit_code": last.exit_code,
            "success": last.success,
            "output": last.output or "",
        }
    start = transcript.start
    return [
        {
            "session": transcript.session_id,
            "task": transcript.task,
            "task_id": start.task_id if start else None,
            "source": start.source if start else None,
            "model": transcript.model,
            "outcome": transcript.outcome,
            "prompt": seen_before(conv, 0) if conv.steps else [dict(m) for m in conv.prefix],
            "completion": [dict(m) for m in conv.messages[len(conv.prefix) :]],
            "turns": turns,
            "exit_codes": exit_codes,
            "check": check,
            "success": success,
            "verdict": transcript.verdict,
            "n_turns": n_turns,
            "reward": episode_reward(success is True, n_turns, exit_codes),
        }
    ]


def _rl_turn(step: Step) -> RlTurn:
    model_turn = step.model_turn
    action = step.action
    return {
        "turn": step.turn,
        "prompt": step.prompt or None,
        "reply": step.reply,
        "action": json.dumps(action, ensure_ascii=False) if action is not None else None,
        "command": step.command,
        "executed_command": step.executed_command,
        "status": step.status,
        "observation": "\n".join(step.observations) if step.observations else None,
        "exit_code": step.exit_code,
        "token_ids": _listed(model_turn.token_ids if model_turn else None),
        "logprobs": _listed(model_turn.logprobs if model_turn else None),
    }


def _listed(values: tuple[T, ...] | None) -> list[T] | None:
    return list(values) if values is not None else None


FORMATS: dict[str, Callable[[Transcript], Sequence[Record]]] = {
    "dpo": dpo_records,
    "rl": rl_records,
    "sft": sft_records,
}
ONLY_SUCCESSFUL_BY_DEFAULT = {"sft": True, "dpo": False, "rl": False}


@dataclass
class ExportReport:
    """What an export did: counts, and one line per session it left out and why."""

    sessions: int = 0
    exported_sessions: int = 0
    records: int = 0
    skipped: list[str] = field(default_factory=list)
    filtered: int = 0


def select(
    transcript: Transcript,
    *,
    since: float | None = None,
    only_successful: bool = False,
    min_turns: int = 0,
) -> bool:
    """Whether a session passes the export filters."""
    if since is not None and (transcript.started or 0.0) < since:
        return False
    if only_successful and transcript.success is not True:
        return False
    return transcript.turns >= min_turns


def export(
    fmt: str,
    transcripts: Iterable[Transcript],
    out: TextIO,
    *,
    since: float | None = None,
    only_successful: bool | None = None,
    min_turns: int = 0,
    group: bool = False,
) -> ExportReport:
    """Write one JSON line per record of ``fmt`` for every selected transcript. ``group``
    (rl only) writes the records grouped by task with group-relative advantages
    (``groups.py``)."""
    if group and fmt != "rl":
        raise ValueError("only the rl format can be grouped")
    convert = FORMATS[fmt]
    held: list[RlRecord] = []
    if only_successful is None:
        only_successful = ONLY_SUCCESSFUL_BY_DEFAULT[fmt]
    report = ExportReport()
    undone: frozenset[str] | None = None
    for transcript in transcripts:
        report.sessions += 1
        name = transcript.path.name
        try:
            if not transcript.events:
                raise SkipSession("no readable events")
            end = transcript.end
            if end is not None and end.unsupported:
                # the model's summary claims what the session does not show: never a lesson
                raise SkipSession(f"its summary is not supported: {'; '.join(end.unsupported)}")
            if undone is None:
                undone = _undone()
            if transcript.session_id in undone:
                raise SkipSession("the user undid what it applied")
            if not select(
                transcript, since=since, only_successful=only_successful, min_turns=min_turns
            ):
                report.filtered += 1
                continue
            records = rl_records(transcript) if group else convert(transcript)
        except SkipSession as exc:
            report.skipped.append(f"{name}: {exc}")
            continue
        except Exception as exc:  # one malformed session must not cost the whole dataset
            report.skipped.append(f"{name}: {exc.__class__.__name__}: {exc}")
            continue
        if group:
            held.extend(r for r in records if _is_rl(r))
        else:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        report.records += len(records)
        report.exported_sessions += 1 if records else 0
    for record in with_advantages(held) if group else ():
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return report


def _is_rl(record: Record) -> TypeGuard[RlRecord]:
    return "reward" in record


def _undone() -> frozenset[str]:
    """Sessions whose applied changes were undone (none when nothing was ever applied)."""
    from shellagent.transcript.undone import undone_sessions

    try:
        return undone_sessions()
    except OSError:
        return frozenset()
