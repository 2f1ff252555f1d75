"""Where the shipped policy presets live: ``policies/`` next to the package, or inside it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shellagent.errors import ConfigError

PRESETS = ("default", "strict", "permissive")


def configured_preset() -> Path:
    """The policy preset of ``config.toml`` (``policy.preset``: a preset name or a file),
    the default preset when there is no config file or it names none."""
    from shellagent.paths import config_dir

    settings = config_dir() / "config.toml"
    if not settings.exists():  # pydantic is imported only when there is a file to read
        return preset_path("default")
    from shellagent import config

    chosen = config.load(settings).policy.preset
    if chosen in PRESETS:
        return preset_path(chosen)
    path = Path(chosen).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"policy.preset in {settings} names {chosen!r}, which is neither a preset nor a file",
            hint=f"use one of {', '.join(PRESETS)} or the path of a policy file",
        )
    return path


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


def programs_path() -> Path:
    """The shipped program specs, read before every policy file."""
    return preset_path("programs")


def describe_files(files: Sequence[str]) -> str:
    """The policy files in force, shortly: a shipped preset by its name, any other file by
    its path, in the order they were read (``default + /home/u/.config/shellagent/policy.toml``)."""
    names = []
    for file in files:
        path = Path(file).resolve()
        names.append(next((p for p in PRESETS if _is_preset(path, p)), str(path)))
    return " + ".join(names) or "none"


def _is_preset(path: Path, name: str) -> bool:
    try:
        return path == preset_path(name).resolve()
    except ConfigError:
        return False
