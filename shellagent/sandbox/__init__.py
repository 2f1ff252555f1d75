"""The sandbox: a persistent bash inside bubblewrap, shaped by a profile."""

from __future__ import annotations

from shellagent.sandbox.bwrap import Bwrap, find_bwrap
from shellagent.sandbox.interface import Grants, Resumable, Shell
from shellagent.sandbox.profiles import PROFILES, Profile, get_profile
from shellagent.sandbox.shell import CommandResult, Session

__all__ = [
    "PROFILES",
    "Bwrap",
    "CommandResult",
    "Grants",
    "Profile",
    "Resumable",
    "Session",
    "Shell",
    "find_bwrap",
    "get_profile",
]
