"""The sandbox: a persistent bash inside bubblewrap, shaped by a profile.

These names are the sandbox's whole surface for the rest of the package; its modules
(bwrap, mounts, seccomp, landlock, limits, idmap, the driver …) are its own, and
``tests/test_architecture.py`` keeps every module outside ``sandbox/`` to this list.
"""

from __future__ import annotations

from shellagent.sandbox.bwrap import Bwrap, find_bwrap
from shellagent.sandbox.diagnosis import Check, diagnose
from shellagent.sandbox.diskcap import DiskCap, changes_cap_bytes, disk_reserve_bytes
from shellagent.sandbox.interface import Grants, Resumable, Shell
from shellagent.sandbox.profiles import PROFILES, Overlay, Profile, environment, get_profile
from shellagent.sandbox.secrets import is_secret_name, secret_paths
from shellagent.sandbox.shell import CommandResult, Sandbox, validate_command
from shellagent.sandbox.state import State, Unreadable

__all__ = [
    "PROFILES",
    "Bwrap",
    "Check",
    "CommandResult",
    "DiskCap",
    "Grants",
    "Overlay",
    "Profile",
    "Resumable",
    "Sandbox",
    "Shell",
    "State",
    "Unreadable",
    "changes_cap_bytes",
    "diagnose",
    "disk_reserve_bytes",
    "environment",
    "find_bwrap",
    "get_profile",
    "is_secret_name",
    "secret_paths",
    "validate_command",
]
