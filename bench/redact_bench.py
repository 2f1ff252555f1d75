"""Redaction: the share of the secret corpus redacted, the false positives (look-alikes and
lines of ordinary text changed), what cuts leave of a key, and the cost per transcript event.

    .venv/bin/python bench/redact_bench.py [--sessions 40] [--show] [--baseline REV]

Prints figures; asserts nothing. First, before and after in the same run: the corpora
redacted, throughput on ordinary and on secret-dense text, and the cost per event, of this
tree and of the baseline revision's shellagent (``git archive``, run in a subprocess). Times
are CPU time of this process (steadier than wall time on a shared machine). Baselines
measured in the same run: the transcript writer with a redactor that changes nothing (stamp
+ JSON + write), so redaction's own cost per event is apart; a head-and-tail cut by plain
slicing, for what the guarded cut costs and saves. Ordinary text is gathered from this
machine (system files, command output, manual pages, standard library source, seeded random
dumps); what is missing is skipped. With ``detect_secrets`` importable, the same corpus and
text are also run through it."""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.events import TranscriptEvent, from_dict
from shellagent.redaction import cut_text
from shellagent.sandbox.output import CappedBuffer
from shellagent.transcript import Redactor, TranscriptWriter

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests/transcript/secret_corpus.toml"
SHAPES_FILE = ROOT / "tests/transcript/secret_shapes.py"
PIECE = 12  # as in the corpus test: no 12-character piece of a secret may be left


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def median_us(run: Callable[[], Any], n: int, repeat: int = 5) -> float:
    """CPU time of this process per call: on a shared machine, steadier than wall time."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(n):
            run()
        times.append((time.process_time() - start) / n * 1e6)
    return statistics.median(times)


# --- what is redacted --------------------------------------------------------------------


def corpus_figures(redact: Callable[[str], str], show: bool) -> tuple[int, int, int]:
    cases = tomllib.loads(CORPUS.read_text())["case"]
    redacted = changed = 0
    for case in cases:
        out = redact(case["text"])
        if not any(leaked(s, out) for s in case["secrets"]):
            redacted += 1
        elif show:
            print(f"    missed: {case['shape']}")
        if redact(case["benign"]) != case["benign"]:
            changed += 1
            if show:
                print(f"    look-alike changed: {case['shape']}: {redact(case['benign'])!r}")
    return redacted, changed, len(cases)


def _run(*argv: str) -> str:
    if not shutil.which(argv[0]):
        return ""
    done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
    return done.stdout


def ordinary_texts() -> dict[str, str]:
    """Ordinary output of a shell session, none of it secret, from this machine."""
    texts: dict[str, str] = {}
    for name in ("services", "passwd", "group", "nsswitch.conf", "login.defs", "ssh/sshd_config"):
        path = Path("/etc") / name
        if path.is_file():
            texts[f"/etc/{name}"] = path.read_text(errors="replace")
    texts["ps auxww"] = _run("ps", "auxww")
    texts["dpkg -l"] = _run("dpkg", "-l")
    texts["git log --stat"] = _run("git", "-C", str(ROOT), "log", "--stat", "-n", "300")
    texts["ls -laR /usr/lib/python3*"] = "\n".join(
        "\n".join(_run("ls", "-laR", str(p)).splitlines()[:3000])
        for p in Path("/usr/lib").glob("python3*")
    )
    if shutil.which("man") and shutil.which("col"):
        pages = []
        for page in ("ssh", "curl", "openssl", "gpg", "zip", "tar", "rsync", "git", "mysql"):
            raw = _run("man", page)
            if raw:
                done = subprocess.run(["col", "-b"], input=raw, capture_output=True, text=True)
                pages.append(done.stdout)
        texts["man pages"] = "\n".join(pages)
    stdlib = Path(os.__file__).parent
    modules = [
        "smtplib",
        "ftplib",
        "getpass",
        "netrc",
        "imaplib",
        "poplib",
        "hmac",
        "secrets",
        "urllib/request",
        "http/cookies",
        "http/cookiejar",
        "ssl",
        "hashlib",
        "base64",
        "configparser",
        "argparse",
        "subprocess",
        "shutil",
        "tarfile",
        "zipfile",
    ]
    texts["stdlib source"] = "\n".join(
        (stdlib / f"{m}.py").read_text() for m in modules if (stdlib / f"{m}.py").is_file()
    )
    rng = random.Random(7)
    blob = bytes(rng.randrange(256) for _ in range(30000))
    encoded = base64.encodebytes(blob).decode()
    texts["base64 of random bytes"] = encoded
    texts["hex dump of random bytes"] = "\n".join(
        f"{i:08x}: {blob[i : i + 16].hex(' ')}" for i in range(0, 20000, 16)
    )
    texts["policy corpora (commands)"] = "\n".join(
        p.read_text() for p in sorted((ROOT / "tests/policy").glob("*.txt"))
    )
    return {name: text for name, text in texts.items() if text}


def ordinary_figures(redact: Callable[[str], str], show: bool) -> tuple[int, int]:
    total = changed = 0
    for name, text in ordinary_texts().items():
        lines = text.splitlines()
        hits = [out for line in lines if (out := redact(line)) != line]
        total += len(lines)
        changed += len(hits)
        print(f"    {name:<28} {len(hits):4} of {len(lines):6} lines changed")
        for line in hits if show else []:
            print(f"        {line[:160]}")
    return changed, total


# --- cuts ------------------------------------------------------------------------------------


def key_fragments(key: str, text: str) -> int:
    lines = [line for line in key.splitlines() if line and "-----" not in line]
    pieces = {line[i : i + 16] for line in lines for i in range(0, max(len(line) - 15, 1), 4)}
    return sum(1 for p in pieces if len(p) == 16 and p in text)


def cut_figures(redactor: Redactor) -> None:
    if not shutil.which("openssl"):
        print("  (openssl missing: no key to cut)")
        return
    args = ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096"]
    key = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    prefix = "".join(f"{i:05d} an ordinary line of output\n" for i in range(400))[:9000]
    text = prefix + key
    head, tail = 1306, 654  # the loop's default observation budget of 2000 characters
    plain = f"{text[:head]}\n[cut]\n{text[-tail:]}"
    c = cut_text(text, head, tail)
    guarded = f"{c.head}\n[cut]\n{c.tail}"
    print("  the review's case: 9000 bytes, then a 4096-bit key, cut to the 2000-character budget")
    print(f"    key fragments left after redaction, plain head+tail cut: "
          f"{key_fragments(key, redactor.redact(plain))}")  # fmt: skip
    print(f"    key fragments left after redaction, guarded cut:         "
          f"{key_fragments(key, redactor.redact(guarded))}")  # fmt: skip
    plain_us = median_us(lambda: f"{text[:head]}\n[cut]\n{text[-tail:]}", 2000)
    guarded_us = median_us(lambda: cut_text(text, head, tail), 50)
    print(f"    cost per cut: plain {plain_us:.1f} µs, guarded {guarded_us:.0f} µs")

    chunk = ("".join(f"{i} some log line with words in it\n" for i in range(3000))).encode()
    chunk = chunk[: 64 * 1024]
    megabytes = 64

    def plain_buffer() -> None:  # the baseline: keep the head and the tail, nothing else
        head_, tail_ = bytearray(), bytearray()
        for _ in range(megabytes * 16):
            room = 8192 - len(head_)
            data = chunk
            if room > 0:
                head_ += data[:room]
                data = data[room:]
            tail_ += data
            del tail_[: max(len(tail_) - 8192, 0)]

    def guarded_buffer() -> None:
        buf = CappedBuffer()
        for _ in range(megabytes * 16):
            buf.feed(chunk)
        buf.text()

    plain_s = median_us(plain_buffer, 1, 3) / 1e6
    guarded_s = median_us(guarded_buffer, 1, 3) / 1e6
    print(f"  sandbox output buffer, {megabytes} MB in 64 KiB chunks: plain head+tail "
          f"{megabytes / plain_s:,.0f} MB/s, guarded {megabytes / guarded_s:,.0f} MB/s "
          f"({(guarded_s - plain_s) / megabytes * 1000:.1f} ms more per MB)")  # fmt: skip


# --- cost per event ------------------------------------------------------------------------


class NoRedaction(Redactor):
    """The baseline: the writer's whole path, redaction left out."""

    def redact_value(self, value: Any) -> Any:
        return value


COMMANDS = [
    "ls -la /var/log",
    "ps aux",
    "grep -rn error app.log",
    "df -h",
    "mysql -u app -pW1ld-Orchid_88 -e 'show tables'",
    "git log --oneline",
]


def session_events(n: int, outputs: list[str], unique: bool) -> list[TranscriptEvent]:
    """A session as the loop writes it: prompt, then per turn a reply, its verdict, the
    execution and the observation (the same text twice, as the loop writes it)."""
    tag = f" #{n}" if unique else ""
    events: list[dict[str, Any]] = [
        {"type": "session_start", "session": f"s{n}", "task": f"tidy the logs{tag}",
         "model": "smollm2", "backend": "llama-cpp", "policy": "default", "cwd": "/home/u"},
        {"type": "message", "role": "system", "content": "You run shell commands. " * 40 + tag},
        {"type": "message", "role": "user", "content": f"tidy the logs{tag}"},
    ]  # fmt: skip
    for t in range(6):
        command = COMMANDS[t] + tag
        raw = json.dumps({"cmd": command, "why": "look"})
        output = outputs[(n * 6 + t) % len(outputs)] + tag
        observation = f"exit 0\n{output}"
        events += [
            {"type": "model_turn", "turn": t, "raw": raw, "action": json.loads(raw),
             "valid": True, "token_ids": list(range(20)), "logprobs": [-0.1] * 20},
            {"type": "message", "role": "assistant", "content": raw, "turn": t},
            {"type": "policy", "turn": t, "command": command, "decision": "allow",
             "reasons": [], "segments": [{"argv": command.split(), "program": command.split()[0],
                                           "decision": "allow", "key": command}]},
            {"type": "execution", "turn": t, "command": command, "output": observation,
             "exit_code": 0, "duration_s": 0.01},
            {"type": "message", "role": "user", "content": observation, "turn": t},
        ]  # fmt: skip
    events.append({"type": "end", "reason": "finished", "summary": "ok", "turns": 7})
    return [from_dict(e) for e in events]


def write_us(directory: Path, sessions: list[list[TranscriptEvent]], redactor: Redactor) -> float:
    """CPU time (user + system, the write included) per event."""
    count, elapsed = 0, 0.0
    for events in sessions:
        writer = TranscriptWriter(directory=directory, redactor=redactor, fsync=False)
        start = time.process_time()
        for event in events:
            writer.write(event)
        elapsed += time.process_time() - start
        writer.close()
        count += len(events)
    return elapsed / count * 1e6


def cost_figures(sessions: int) -> None:
    texts = ordinary_texts()
    lines = "\n".join(texts.values()).splitlines()
    outputs = ["\n".join(lines[i : i + 30])[:2000] for i in range(0, len(lines) - 30, 97)]
    print(f"  {sessions} sessions of 34 events; outputs are 2,000-character pieces of the "
          "ordinary text above (what the loop's observation budget keeps)")  # fmt: skip
    for unique in (False, True):
        sample = [session_events(n, outputs, unique) for n in range(sessions)]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            base = statistics.median(write_us(root, sample, NoRedaction()) for _ in range(3))
            redacting = statistics.median(
                write_us(root, sample, Redactor.from_environment()) for _ in range(3)
            )
        figures = {"writer, no redaction (baseline)": base, "writer, redacting": redacting}
        label = "every string new (no repeats to reuse)" if unique else "as the loop writes"
        print(f"  {label}:")
        for name, us in figures.items():
            print(f"    {name:<34} {us:8.1f} µs per event")
        print(f"    redaction's own cost              {redacting - base:8.1f} µs per event "
              f"({redacting / base:.1f}× the unredacted write)")  # fmt: skip


# --- another tool, when installed ----------------------------------------------------------


def detect_secrets_figures() -> None:
    if importlib.util.find_spec("detect_secrets") is None:
        print("  detect_secrets is not importable here (pip install detect-secrets to compare)")
        return
    from detect_secrets import SecretsCollection  # type: ignore[import-not-found,unused-ignore]
    from detect_secrets.settings import (  # type: ignore[import-not-found,unused-ignore]
        default_settings,
    )

    tmp = Path(tempfile.mkdtemp())

    def redact(text: str) -> str:
        path = tmp / "out.txt"
        path.write_text(text)
        found = SecretsCollection()
        found.scan_file(str(path))
        lines = text.split("\n")
        for _, secret in found:
            if secret.secret_value:
                i = secret.line_number - 1
                lines[i] = lines[i].replace(secret.secret_value, "[REDACTED]")
        return "\n".join(lines)

    with default_settings():
        redacted, changed, n = corpus_figures(redact, show=False)
        print(f"  detect-secrets, default plugins and filters: corpus {redacted}/{n} redacted, "
              f"{changed}/{n} look-alikes changed")  # fmt: skip
        listing = "\n".join(f"-rw-r--r-- 1 user user {i} Nov 22 02:15 f{i}.txt" for i in range(40))
        print(f"  detect-secrets per 2 KB text: {median_us(lambda: redact(listing), 5, 3):,.0f} µs")
    shutil.rmtree(tmp, ignore_errors=True)


# --- before and after, in the same run -------------------------------------------------------


def _built_corpus() -> tuple[list[Any], list[str]]:
    """The built shapes and look-alikes of ``tests/transcript/secret_shapes.py`` (loaded by
    path: the baseline run has the same file, whatever its revision)."""
    spec = importlib.util.spec_from_file_location("secret_shapes", SHAPES_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["secret_shapes"] = module
    spec.loader.exec_module(module)
    return module.SHAPES, module.LOOK_ALIKES


def _structures_corpus() -> tuple[list[Any], list[str]]:
    """The secrets and look-alikes of ``tests/transcript/secret_structures.py`` (imported as
    a package module from this tree: the baseline run measures the same file)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))  # after the baseline's own shellagent
    module = importlib.import_module("tests.transcript.secret_structures")
    return module.SECRETS, module.LOOK_ALIKES


def _shares(shapes: list[Any], look_alikes: list[str]) -> tuple[int, int]:
    """Shapes whose secrets all go, and look-alikes changed (a fresh redactor for each)."""
    caught = sum(
        1
        for shape in shapes
        if not any(leaked(s, Redactor().redact(shape.text)) for s in shape.secrets)
    )
    return caught, sum(1 for t in look_alikes if Redactor().redact(t) != t)


def figures(sessions: int) -> dict[str, Any]:
    """What this revision's redactor does and costs: corpus shares and throughput."""
    shapes, look_alikes = _built_corpus()
    structures, structure_look_alikes = _structures_corpus()
    caught, altered = _shares(structures, structure_look_alikes)
    redacted, changed, n = corpus_figures(lambda t: Redactor().redact(t), show=False)
    built = sum(
        1
        for shape in shapes
        if not any(leaked(s, Redactor().redact(shape.text)) for s in shape.secrets)
    )
    kept = sum(1 for t in look_alikes if Redactor().redact(t) == t)
    texts = ordinary_texts()
    lines = "\n".join(texts.values()).splitlines()
    pieces = ["\n".join(lines[i : i + 30])[:2000] for i in range(0, len(lines) - 30, 31)]
    dense = [shape.text for shape in shapes] * 4

    def mb_per_s(items: list[str]) -> float:
        size = sum(len(t) for t in items) / 1e6
        times = []
        for _ in range(3):
            redactor = Redactor()  # nothing cached from the previous pass
            start = time.process_time()
            for text in items:
                redactor.redact(text)
            times.append(time.process_time() - start)
        return size / statistics.median(times)

    sample = [session_events(k, pieces, unique=True) for k in range(sessions)]
    with tempfile.TemporaryDirectory() as tmp:
        base = statistics.median(write_us(Path(tmp), sample, NoRedaction()) for _ in range(3))
        redacting = statistics.median(write_us(Path(tmp), sample, Redactor()) for _ in range(3))
    return {
        "toml": [redacted, changed, n],
        "built": [built, len(shapes)],
        "look_alikes_kept": [kept, len(look_alikes)],
        "structures": [caught, len(structures)],
        "structure_look_alikes_changed": [altered, len(structure_look_alikes)],
        "ordinary_mb_s": mb_per_s(pieces),
        "secret_dense_mb_s": mb_per_s(dense),
        "event_us": redacting - base,
        "write_us": base,
    }


def baseline_figures(rev: str, sessions: int) -> dict[str, Any] | None:
    """``figures`` of revision ``rev``'s shellagent, run now in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "shellagent"], capture_output=True
        )
        if archive.returncode != 0:
            print(f"  (no baseline: git archive {rev}: {archive.stderr.decode().strip()})")
            return None
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        env = {**os.environ, "PYTHONPATH": tmp}
        done = subprocess.run(
            [sys.executable, __file__, "--figures-only", "--sessions", str(sessions)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        )
        if done.returncode != 0:
            print(f"  (baseline {rev} failed: {done.stderr.strip()[-300:]})")
            return None
        result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        return result


def compare(rev: str, sessions: int) -> None:
    now = figures(sessions)
    before = baseline_figures(rev, sessions)
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("secret corpus (toml), redacted", lambda f: f"{f['toml'][0]}/{f['toml'][2]}"),
        ("  look-alikes changed", lambda f: f"{f['toml'][1]}/{f['toml'][2]}"),
        ("built shapes redacted", lambda f: f"{f['built'][0]}/{f['built'][1]}"),
        ("built look-alikes kept", lambda f: "{}/{}".format(*f["look_alikes_kept"])),
        ("structures redacted", lambda f: "{}/{}".format(*f["structures"])),
        ("  their look-alikes changed",
         lambda f: "{}/{}".format(*f["structure_look_alikes_changed"])),
        ("ordinary text, MB/s", lambda f: f"{f['ordinary_mb_s']:.2f}"),
        ("secret-dense text, MB/s", lambda f: f"{f['secret_dense_mb_s']:.2f}"),
        ("redaction per event, µs", lambda f: f"{f['event_us']:.1f}"),
        ("  the write without it, µs", lambda f: f"{f['write_us']:.1f}"),
    ]  # fmt: skip
    print(f"{'':34} {'baseline ' + rev:>18} {'this tree':>12}")
    for label, show in rows:
        print(f"  {label:<32} {show(before) if before else '-':>18} {show(now):>12}")
    if before:
        for key, label in (("ordinary_mb_s", "ordinary"), ("secret_dense_mb_s", "secret-dense")):
            print(f"  throughput, {label}: {now[key] / before[key]:.2f}x the baseline")
        print(f"  cost per event: {now['event_us'] / before['event_us']:.2f}x the baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--show", action="store_true", help="list misses and changed lines")
    parser.add_argument(
        "--baseline", default="dfeea1b", help="revision to compare with, measured in this run"
    )
    parser.add_argument("--figures-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.figures_only:
        print(json.dumps(figures(args.sessions)))
        return
    print("before and after (the baseline's shellagent run in a subprocess, now):")
    compare(args.baseline, args.sessions)
    redactor = Redactor()
    redacted, changed, n = corpus_figures(redactor.redact, args.show)
    print(f"secret corpus ({CORPUS.relative_to(ROOT)}): {redacted}/{n} redacted "
          f"({redacted / n:.0%}); look-alikes changed: {changed}/{n}")  # fmt: skip
    shapes, look_alikes = _built_corpus()
    structures, structure_look_alikes = _structures_corpus()
    for shape in [*shapes, *structures] if args.show else []:
        out = Redactor().redact(shape.text)
        if any(leaked(s, out) for s in shape.secrets):
            print(f"    missed: {shape.name}")
    for text in structure_look_alikes if args.show else []:
        if (out := Redactor().redact(text)) != text:
            print(f"    look-alike changed: {out!r}")
    print("false positives on ordinary text (lines changed):")
    changed_lines, total = ordinary_figures(redactor.redact, args.show)
    print(f"    {'all':<28} {changed_lines:4} of {total:6} lines changed "
          f"({changed_lines / max(total, 1):.3%})")  # fmt: skip
    print("cuts:")
    cut_figures(redactor)
    print("write cost per event (CPU time, no fsync; median of 3):")
    cost_figures(args.sessions)
    print("another tool:")
    detect_secrets_figures()
    print(
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
