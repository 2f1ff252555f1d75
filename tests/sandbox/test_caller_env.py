"""H1 for an ordinary user: the caller's environment (API keys) reaches no process in the
sandbox, bwrap's own pid 1 included, in either profile. (Run by root: test_hardening.py.)"""

from __future__ import annotations

from typing import Any


def test_an_unprivileged_callers_environment_stays_out_too(as_nobody: Any) -> None:
    keys = {"OPENAI_API_KEY": "sk-FAKE-nobody-0123", "AWS_SECRET_ACCESS_KEY": "AWSFAKE-nobody"}
    probe = (
        "for p in /proc/[0-9]*; do { tr '\\0' '\\n' < $p/environ; } 2>/dev/null; done "
        "| grep -c -E 'sk-FAKE|AWSFAKE' || true"
    )
    for profile in ("default", "ephemeral"):
        found, own = as_nobody([probe, "env"], profile=profile, caller_env=keys)
        assert found["output"].strip() == "0", profile
        assert "PATH=" in own["output"] and "FAKE" not in own["output"]  # readable: control
