"""Where the shipped policy presets live: ``policies/`` next to the package, or inside it."""

from __future__ import annotations

from pathlib import Path

from shellagent.errors import ConfigError

PRESETS = ("default", "strict", "permissive")


def preset_path(name: str) -> Path:
    """The file of a shipped preset (``policies/`` at the top of a checkout links here)."""
    packaged = Path(__file__).resolve().parents[1] / "policies" / f"{name}.toml"
    if packaged.is_file():
        return packaged
    raise ConfigError(
        f"the {name} policy preset is missing from this installation", hint="reinstall shellagent"
    )


def default_policy_path() -> Path:
    return preset_path("default")
