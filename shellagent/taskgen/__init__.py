"""The task generator: families of everyday shell work, verified in the ephemeral sandbox.

    tasks = generate(seed=14, per_family=60)         # task-set lines, unverified
    run = verify_all(tasks, jobs=2, cache=VerifyCache(default_cache_path()))
    write_tasks(run.ok, Path("library.jsonl.gz"))    # verified: observations + final answers

Modules: ``family`` (a family, ``Draw``, the registry), ``families/`` (one module per area
of work), ``sh`` (quoting, setup steps, check pieces), ``answers`` (final answers from
observed output), ``generate``, ``verify``, ``cache``, ``library``, ``leakage`` (overlap
with other task sets), ``gold_agent`` (a scripted agent that runs a task's gold commands)
and ``everyday`` (the hand-written answer-checked task set).
"""

from __future__ import annotations

from shellagent.taskgen.answers import TemplateError, check_template, render
from shellagent.taskgen.cache import VerifyCache, default_cache_path
from shellagent.taskgen.everyday import everyday_path, everyday_tasks
from shellagent.taskgen.family import FAMILIES, Draw, Family, Instance, family
from shellagent.taskgen.generate import (
    DEFAULT_PER_FAMILY,
    DEFAULT_SEED,
    draw,
    families,
    generate,
    to_task,
)
from shellagent.taskgen.gold_agent import GoldAgent
from shellagent.taskgen.leakage import LeakageReport, compare
from shellagent.taskgen.library import library_path, read_library, write_tasks
from shellagent.taskgen.verify import (
    Verdict,
    VerifyRun,
    summarize,
    task_key,
    verified,
    verify_all,
    verify_task,
)

__all__ = [
    "DEFAULT_PER_FAMILY",
    "DEFAULT_SEED",
    "Draw",
    "FAMILIES",
    "Family",
    "GoldAgent",
    "Instance",
    "LeakageReport",
    "TemplateError",
    "Verdict",
    "VerifyCache",
    "VerifyRun",
    "check_template",
    "compare",
    "default_cache_path",
    "draw",
    "everyday_path",
    "everyday_tasks",
    "families",
    "family",
    "generate",
    "library_path",
    "read_library",
    "render",
    "summarize",
    "task_key",
    "to_task",
    "verified",
    "verify_all",
    "verify_task",
    "write_tasks",
]
