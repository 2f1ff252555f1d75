"""What ``shellagent daemon status`` shows: model, uptime, sessions, memory."""

from __future__ import annotations

from shellagent.events import DaemonStatus


def memory_kb(path: str = "/proc/self/status") -> tuple[int | None, int | None]:
    """(VmRSS, VmHWM) of this process in kB, from ``/proc``; None where unknown."""
    found: dict[str, int] = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return found.get("VmRSS"), found.get("VmHWM")


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def _mb(kb: int | None) -> str:
    return "?" if kb is None else f"{kb / 1024:.0f} MB"


def render(status: DaemonStatus) -> str:
    """The status reply as a few readable lines."""
    model = status.model
    if model.loaded:
        state = f"{model.name} (warm, idle {_duration(model.idle_s)})"
    else:
        state = f"{model.spec} (not loaded)"
    lines = [
        f"daemon    pid {status.pid}, up {_duration(status.uptime_s)}, shellagent {status.version}",
        f"socket    {status.socket}",
        f"model     {state}; unloads after {_duration(model.idle_unload_s or 0)} idle",
        f"memory    {_mb(status.rss_kb)} resident (peak {_mb(status.peak_rss_kb)})",
    ]
    sessions = status.sessions
    lines.append(f"sessions  {len(sessions)} running, {model.waiting} waiting for the model")
    for s in sessions:
        lines.append(
            f"  {s.session}  {s.state:<20} {_duration(s.running_s):>6}"
            f"  pid {s.client_pid}  {s.task}"
        )
    return "\n".join(lines)
