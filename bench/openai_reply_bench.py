"""Peak memory of an ``openai:`` client facing a server that ignores ``max_tokens``.

A local HTTP server streams a well-formed reply of ``--mib`` MiB (1000-character pieces,
then ``finish_reason`` and ``[DONE]``: security review 3's M5 scenario, 200 MiB) to one
``OpenAIBackend.generate(max_tokens=256)`` run in a fresh interpreter (``--python``, so the
same script measures another checkout's venv too). Prints the client's peak resident memory
(``VmHWM``), how it ended, the reply's length and the wall time, as the median of
``--rounds`` runs.

Usage: .venv/bin/python bench/openai_reply_bench.py [--mib 200] [--rounds 3] [--python PY]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CLIENT = r"""
import json, sys, time
from shellagent.model.openai import OpenAIBackend

start = time.perf_counter()
try:
    reply = OpenAIBackend(sys.argv[1], timeout_s=120).generate(
        [{"role": "user", "content": "hi"}], max_tokens=256
    )
    out = {"stop": reply.stop, "chars": len(reply.text)}
except Exception as exc:
    out = {"stop": type(exc).__name__, "chars": 0}
out["s"] = time.perf_counter() - start
out["peak_mib"] = next(
    int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")
) / 1024
print(json.dumps(out))
"""


def handler_for(total: int) -> type[BaseHTTPRequestHandler]:
    event = {"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]}
    unit = b"data: " + json.dumps(event).encode() + b"\n\n"
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    tail = b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(total // len(unit)):
                    self.wfile.write(unit)
                self.wfile.write(tail)
            except OSError:
                pass  # the client hung up

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(args.mib << 20))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    runs = []
    for _ in range(args.rounds):
        proc = subprocess.run(
            [args.python, "-c", CLIENT, url],
            capture_output=True,
            text=True,
            timeout=900,
            cwd="/",  # never the checkout: the interpreter imports its own package
        )
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        runs.append(json.loads(proc.stdout))
        time.sleep(0.2)
    httpd.shutdown()
    peak = statistics.median(r["peak_mib"] for r in runs)
    wall = statistics.median(r["s"] for r in runs)
    print(
        f"{args.python}: {args.mib} MiB reply, max_tokens 256: peak RSS {peak:.0f} MiB, "
        f"{wall:.2f} s, ended {runs[0]['stop']!r} with {runs[0]['chars']} characters "
        f"(median of {len(runs)})"
    )


if __name__ == "__main__":
    main()
