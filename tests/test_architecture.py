"""Dependencies point one way (docs/architecture.md, "Layers"), no module reaches into
another module's private names, and nothing outside ``sandbox/`` reaches past the
sandbox's exported names (``sandbox_reaches``).

Every ``import`` in the package is read from the source (ast), at module level, inside
functions and under ``TYPE_CHECKING`` alike: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "shellagent"

LAYERS: dict[str, int] = {
    # 0: the ground everything stands on; these may import each other
    "errors": 0,
    "paths": 0,
    "protocol": 0,
    "events": 0,
    "tomlfile": 0,
    "config": 0,
    "chars": 0,
    "redaction": 0,
    "protected": 0,
    "loginpath": 0,
    "credentials": 0,
    "jsontypes": 0,
    "substitutions": 0,
    "schedule": 0,
    # 1: the parts
    "model": 1,
    "policy": 1,
    "sandbox": 1,
    "transcript": 1,
    "recipes": 1,
    # 2: what puts the parts together
    "agent": 2,
    "testing": 2,
    "transaction": 2,
    "training": 2,
    # 3: what runs the agent (or replays what it made)
    "daemon": 3,
    "eval": 3,
    "jobs": 3,
    # 4: what is built on the task sets: generated tasks verified by the eval runner, and
    # the episodes a trainer drives over HTTP
    "taskgen": 4,
    "env": 4,
    # 5: the command lines, and the package's front door (lazy re-exports)
    "cli": 5,
    "__main__": 5,
    "__init__": 5,
}
SHARED_LAYERS = (0, 5)  # the layers whose parts may import each other
# The package root defines the version; anything may read it.
ROOT_CONSTANTS = {"__version__"}


@dataclass(frozen=True)
class Import:
    source: str  # dotted name of the importing module
    line: int
    target: str  # dotted name of the imported module
    names: tuple[str, ...]  # the names taken from it (from-imports)
    typing_only: bool = False  # under ``if TYPE_CHECKING:``


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(name: str) -> bool:
    return (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()


def imports(path: Path) -> Iterator[Import]:
    source = module_name(path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        hint = id(node) in typing_only
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "shellagent":
                    yield Import(source, node.lineno, alias.name, (), hint)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "shellagent":
                continue
            names = tuple(alias.name for alias in node.names)
            submodules = [n for n in names if is_package(base) and _exists(f"{base}.{n}")]
            for name in submodules:  # ``from shellagent import paths``: the module paths
                yield Import(source, node.lineno, f"{base}.{name}", (), hint)
            rest = tuple(n for n in names if n not in submodules)
            if rest:
                yield Import(source, node.lineno, base, rest, hint)


def _exists(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def part(module: str) -> str:
    """The top-level part a module belongs to (``agent`` for ``shellagent.agent.loop``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def all_imports() -> list[Import]:
    return [i for path in sorted(PACKAGE.rglob("*.py")) for i in imports(path)]


def violations(found: list[Import]) -> list[str]:
    problems = []
    for imp in found:
        src, dst = part(imp.source), part(imp.target)
        if dst == "__init__" and set(imp.names) <= ROOT_CONSTANTS:
            continue
        if src == dst:
            continue
        if src not in LAYERS or dst not in LAYERS:
            problems.append(f"{imp.source}:{imp.line}: {src} or {dst} is not in the layer table")
            continue
        up = LAYERS[dst] > LAYERS[src]
        sideways = LAYERS[dst] == LAYERS[src] and LAYERS[src] not in SHARED_LAYERS
        if up or sideways:
            way = "up" if up else "sideways"
            problems.append(
                f"{imp.source}:{imp.line}: imports {imp.target} ({way}: layer {LAYERS[src]} "
                f"-> {LAYERS[dst]})"
            )
    return problems


def private_reaches(found: list[Import]) -> list[str]:
    problems = []
    for imp in found:
        if imp.target == imp.source:
            continue
        for name in imp.names:
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                problems.append(f"{imp.source}:{imp.line}: takes {imp.target}.{name}")
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                problems.append(
                    f"{module_name(path)}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}"
                )
    return problems


def sandbox_reaches(found: list[Import], public: set[str]) -> list[str]:
    """Imports of the sandbox's private parts by modules outside ``sandbox/``.

    Private here means everything that ``shellagent/sandbox/__init__.py`` does not export:
    every module of the sandbox (``shellagent.sandbox.bwrap``, ``.mounts``, ``.landlock``
    …) and any name of the package not in its ``__all__`` (``public``). The rest of the
    package reaches the sandbox only through that list; the sandbox's own tests and
    benchmarks, which exercise its mechanisms, are not held to it.
    """
    problems = []
    for imp in found:
        if part(imp.source) == "sandbox" or part(imp.target) != "sandbox":
            continue
        if imp.target != "shellagent.sandbox":
            problems.append(f"{imp.source}:{imp.line}: imports {imp.target}")
            continue
        for name in imp.names:
            if name not in public:
                problems.append(f"{imp.source}:{imp.line}: takes shellagent.sandbox.{name}")
    return problems


def _sandbox_public() -> set[str]:
    tree = ast.parse((PACKAGE / "sandbox" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            return set(ast.literal_eval(node.value))
    raise AssertionError("shellagent/sandbox/__init__.py has no __all__")


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> shellagent module, for names bound by ``import`` to a module."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("shellagent.") and alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shellagent"):
            for alias in node.names:
                if _exists(f"{node.module}.{alias.name}"):
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def test_every_part_of_the_package_is_in_the_layer_table() -> None:
    parts = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py") or (p / "__init__.py").exists()
    }
    assert parts <= set(LAYERS), parts - set(LAYERS)


def test_dependencies_point_one_way() -> None:
    assert violations(all_imports()) == []


def test_no_module_takes_another_modules_private_names() -> None:
    assert private_reaches(all_imports()) == []


def test_no_module_outside_the_sandbox_imports_its_private_parts() -> None:
    assert sandbox_reaches(all_imports(), _sandbox_public()) == []


def test_the_sandbox_rule_catches_a_private_module_and_a_name_not_exported() -> None:
    found = [
        Import("shellagent.cli.cmd_doctor", 5, "shellagent.sandbox.landlock", ("abi_version",)),
        Import("shellagent.agent.trial", 7, "shellagent.sandbox", ("Sandbox", "secrets")),
        Import("shellagent.agent.front", 9, "shellagent.sandbox", ("Sandbox",)),
        Import("shellagent.sandbox.shell", 3, "shellagent.sandbox.mounts", ("default_plan",)),
    ]
    assert sandbox_reaches(found, {"Sandbox"}) == [
        "shellagent.cli.cmd_doctor:5: imports shellagent.sandbox.landlock",
        "shellagent.agent.trial:7: takes shellagent.sandbox.secrets",
    ]


def cycles(found: list[Import]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a circle, when run
    (imports made only for type checking do not count; neither do package ``__init__``
    modules, which import their own modules by design)."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        if imp.typing_only or imp.source == imp.target:
            continue
        if is_package(imp.source) or is_package(imp.target):
            continue
        graph.setdefault(imp.source, set()).add(imp.target)
    groups = []
    for start in sorted(graph):
        reached, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in reached:
                    reached.add(nxt)
                    todo.append(nxt)
        if start in reached:
            group = sorted(m for m in reached if start in _reach(graph, m))
            if group not in groups:
                groups.append(group)
    return groups


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    reached, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    return reached


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert cycles(all_imports()) == []


def agent_cycles(found: list[Import]) -> list[list[str]]:
    """Circles among the agent's modules, counting the imports made only for type
    checking: a type the loop and its parts both need lives below both of them."""
    inside = [
        replace(imp, typing_only=False)
        for imp in found
        if imp.source.startswith("shellagent.agent.") and imp.target.startswith("shellagent.agent.")
    ]
    return cycles(inside)


def test_no_modules_of_the_agent_import_each_other_in_a_circle_even_for_types() -> None:
    assert agent_cycles(all_imports()) == []


def test_the_agent_circle_rule_counts_imports_for_types() -> None:
    found = [
        Import("shellagent.agent.loop", 1, "shellagent.agent.parts", ("Hooks",)),
        Import("shellagent.agent.parts", 9, "shellagent.agent.loop", ("Outcome",), True),
    ]
    assert cycles(found) == []
    assert agent_cycles(found) == [["shellagent.agent.loop", "shellagent.agent.parts"]]


def test_the_circle_rule_sees_a_circle() -> None:
    found = [
        Import("shellagent.agent.loop", 1, "shellagent.agent.scheduling", ("propose_job",)),
        Import("shellagent.agent.scheduling", 9, "shellagent.agent.loop", ("ask",)),
        Import("shellagent.agent.session", 2, "shellagent.agent.loop", (), typing_only=True),
    ]
    assert cycles(found) == [["shellagent.agent.loop", "shellagent.agent.scheduling"]]


@pytest.mark.parametrize(
    ("source", "target", "names", "expected"),
    [
        ("shellagent.agent.loop", "shellagent.jobs", ("install",), "up: layer 2 -> 3"),
        ("shellagent.model.pool", "shellagent.sandbox.shell", (), "sideways: layer 1 -> 1"),
        ("shellagent.events", "shellagent.cli.ask", (), "up: layer 0 -> 5"),
        ("shellagent.jobs.runner", "shellagent", ("__version__",), None),
        ("shellagent.cli.main", "shellagent.daemon.server", (), None),
        ("shellagent.protocol", "shellagent.events", ("to_dict",), None),
    ],
)
def test_the_rule_catches_what_it_should_and_only_that(
    source: str, target: str, names: tuple[str, ...], expected: str | None
) -> None:
    found = violations([Import(source, 1, target, names)])
    assert found == ([] if expected is None else [f"{source}:1: imports {target} ({expected})"])


def test_the_private_rule_catches_a_taken_private_name() -> None:
    taken = Import("shellagent.agent.scheduling", 3, "shellagent.agent.loop", ("_ask", "run_task"))
    assert private_reaches([taken]) == [
        "shellagent.agent.scheduling:3: takes shellagent.agent.loop._ask"
    ]


def test_imports_inside_functions_are_read_too() -> None:
    lazy = PACKAGE / "agent" / "front.py"
    found = [i.target for i in imports(lazy)]
    assert "shellagent.model.registry" in found  # imported inside Agent.backend only


# -- the wire tables: what the docstrings of events.py and protocol.py list is what the
# registries hold, in their order ---------------------------------------------------------


def table_rows(doc: str, title: str) -> list[str]:
    """The rows of the literal block under the docstring line that starts with ``title``;
    a more deeply indented line continues the row above it."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows: list[str] = []
    for line in lines[start + 1 :]:
        if not line.strip():
            if rows:
                break
            continue
        if not line.startswith("    "):
            break
        if line.startswith("     ") and rows:
            rows[-1] += " " + line.strip()
        else:
            rows.append(line.strip())
    return rows


def field_list(cls: type) -> str:
    """``{name, name?}`` of a message's fields: ``?`` where it has a default."""
    names = [
        f.name + ("" if f.default is MISSING and f.default_factory is MISSING else "?")
        for f in fields(cls)
    ]
    return "{" + ", ".join(names) + "}"


def class_table_problems(doc: str, title: str, registry: Mapping[str, type]) -> list[str]:
    """Rows ``kind  ClassName  what it is`` against the registry."""
    listed = [tuple(row.split()[:2]) for row in table_rows(doc, title)]
    wanted = [(kind, cls.__name__) for kind, cls in registry.items()]
    return [] if listed == wanted else [f"{title}: lists {listed}, the registry has {wanted}"]


def field_table_problems(doc: str, title: str, registry: Mapping[str, type]) -> list[str]:
    """Rows ``kind  {field, optional?, ...}`` against the registry's dataclasses."""
    listed = []
    for row in table_rows(doc, title):
        kind, _, rest = row.partition(" ")
        listed.append((kind, " ".join(rest.split())))
    wanted = [(kind, field_list(cls)) for kind, cls in registry.items()]
    problems = [
        f"{title}: {row} listed, not in the registry" for row in listed if row not in wanted
    ]
    problems += [f"{title}: {row} missing" for row in wanted if row not in listed]
    if not problems and listed != wanted:
        problems.append(f"{title}: not in the registry's order")
    return problems


def wire_table_problems(events_doc: str, protocol_doc: str) -> list[str]:
    from shellagent.events import CLIENT_MESSAGES, TRANSCRIPT_EVENTS, WIRE_EVENTS

    return (
        class_table_problems(events_doc, "Transcript events", TRANSCRIPT_EVENTS)
        + class_table_problems(events_doc, "Daemon -> client", WIRE_EVENTS)
        + class_table_problems(events_doc, "Client -> daemon", CLIENT_MESSAGES)
        + field_table_problems(protocol_doc, "Client -> daemon", CLIENT_MESSAGES)
        + field_table_problems(protocol_doc, "Daemon -> client", WIRE_EVENTS)
    )


def test_the_wire_tables_in_the_docstrings_match_the_registries() -> None:
    from shellagent import events, protocol

    assert tuple(events.CLIENT_MESSAGES) == protocol.CLIENT_TYPES
    assert tuple(events.WIRE_EVENTS) == protocol.EVENT_TYPES
    assert wire_table_problems(events.__doc__ or "", protocol.__doc__ or "") == []


@pytest.mark.parametrize(
    ("module", "old", "new", "problem"),
    [
        ("events", "    note              Note", "    notice            Note", "Daemon -> client"),
        (
            "events",
            "    cancel            Cancel",
            "    cancel            Stop",
            "Client -> daemon",
        ),
        ("protocol", "{id, decision}", "{id, decision, reason?}", "changes"),
        ("protocol", "    note              {message}\n", "", "'note', '{message}') missing"),
        ("protocol", "                      apply?,", "                      apply,", "ask"),
    ],
)
def test_the_wire_table_check_sees_a_drifted_table(
    module: str, old: str, new: str, problem: str
) -> None:
    from shellagent import events, protocol

    docs = {"events": events.__doc__ or "", "protocol": protocol.__doc__ or ""}
    assert old in docs[module]
    docs[module] = docs[module].replace(old, new, 1)
    problems = wire_table_problems(docs["events"], docs["protocol"])
    assert any(problem in p for p in problems), problems
