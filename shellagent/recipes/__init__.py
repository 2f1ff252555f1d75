"""Recipes: verified command templates with typed slots (issue 25, docs/recipes.md).

A classifier chooses a recipe and the small model fills its slots; the recipe renders the
command, with every value validated by its type and quoted for where it stands, so a slot
can never add syntax. Recipes are data: ``data/<area>.toml`` shipped,
``<config dir>/recipes/*.toml`` the user's own, ``taught.toml`` among them what a correction
taught (``teach_commands``, ``teach``; ``forget`` takes it out).
"""

from __future__ import annotations

from shellagent.recipes.fromsession import recipe_from_session, recipe_toml
from shellagent.recipes.learn import Learned, forget, teach, teach_commands
from shellagent.recipes.loader import DATA_DIR, Catalog, load, read_file, user_dir
from shellagent.recipes.model import Recipe, RecipeTest, Slot
from shellagent.recipes.render import (
    phrase,
    render,
    render_all,
    render_plain,
    sed_re,
    sed_repl,
    shell_word,
)
from shellagent.recipes.slots import SINGLE_QUOTE_SAFE, TYPES, SlotError, SlotType, slot_type

__all__ = [
    "Catalog",
    "DATA_DIR",
    "Learned",
    "Recipe",
    "RecipeTest",
    "SINGLE_QUOTE_SAFE",
    "Slot",
    "SlotError",
    "SlotType",
    "TYPES",
    "forget",
    "load",
    "phrase",
    "read_file",
    "recipe_from_session",
    "recipe_toml",
    "render",
    "render_all",
    "render_plain",
    "sed_re",
    "sed_repl",
    "shell_word",
    "slot_type",
    "teach",
    "teach_commands",
    "user_dir",
]
