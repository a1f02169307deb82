"""The rules of ARCHITECTURE.md that the layer contracts (``lint-imports``) do not hold.

Read from the source with ``ast``, every import counted wherever it stands: at the top, inside
a function (a start-up import) or under ``TYPE_CHECKING``.

- No import cycle between trntui's modules: an import inside a function is there for start-up
  only, never to let two modules need each other.
- ``_name`` is file-local: no module imports a name with a leading underscore from another.
  A package split by size states its internal API: a name its modules share is public.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trntui"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def imports(module: str) -> Iterator[tuple[ast.ImportFrom | ast.Import, str, str | None]]:
    """Each import of ``module`` as (statement, the trntui module it reads, the name it takes
    from that module: None for a whole module)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield node, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package(module) else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if source not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    yield node, submodule, None
                else:
                    yield node, source, alias.name


def import_graph() -> dict[str, set[str]]:
    return {
        module: {imported for _, imported, _ in imports(module) if imported != module}
        for module in MODULES
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    assert len(graph) > 100
    # A top-level import, one inside a function, one under TYPE_CHECKING:
    assert "trntui.store.runs" in graph["trntui.store.run_import"]
    assert "trntui.ui.app" in graph["trntui.cli"]
    assert "trntui.core.analysis" in graph["trntui.ui.widgets.estimate_bar"]


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_imports_a_private_name_from_another():
    found = [
        f"{module}:{node.lineno} imports {name} from {source}"
        for module in MODULES
        for node, source, name in imports(module)
        if name is not None and name.startswith("_") and not name.startswith("__")
    ]
    assert not found, "\n".join(found)


def test_no_module_imports_another_that_imports_it_back():
    graph = import_graph()
    found = cycles(graph)
    shown = [
        " <-> ".join(component)
        + ": "
        + "; ".join(f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component)
        for component in found
    ]
    assert not found, "\n".join(shown)
