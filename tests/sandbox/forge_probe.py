"""Run inside a sandbox by the integrity tests: attack every descriptor of every process.

For each ``/proc/PID/fd/N`` it can open (except its own), it writes what once injected a
command or forged a completion (the old driver's ``C…`` and ``S…`` records, frames of the
current wire format with a zero MAC, and a shell line that creates MARKER), and reads
what it can (to steal a pending frame). It prints a JSON report: which descriptors opened,
per pid, and which of those were its own process tree (the positive control).

Usage: python3 forge_probe.py MARKER
"""

from __future__ import annotations

import glob
import json
import os
import struct
import sys

marker = sys.argv[1]
line = f"touch {marker}\n".encode()
payloads = [
    b"Ctouch " + marker.encode() + b"\0",  # the old driver's command frame
    b"S\0" + b"0" * 32 + b"\0" + b"0\0/\0" + b"1\0\0",  # the old driver's status record
    b"C" + struct.pack(">I", 40) + b"0" * 32 + b"\0n\0" + line[:5] + b"\0" * 32,
    b"S" + struct.pack(">I", 4) + b"0\0/\0" + b"\0" * 32,
    line,
]
me = os.getpid()
family = {me, os.getppid()}
opened: dict[str, list[str]] = {}
for path in sorted(glob.glob("/proc/[0-9]*/fd/[0-9]*")):
    pid = int(path.split("/")[2])
    if pid == me:
        continue
    for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        opened.setdefault(str(pid), []).append(path.rsplit("/", 1)[1])
        try:
            if flags & os.O_WRONLY:
                for payload in payloads:
                    os.write(fd, payload)
            else:
                os.read(fd, 65536)
        except OSError:
            pass
        finally:
            os.close(fd)
print(json.dumps({"opened": opened, "family": sorted(family), "me": me}))
