"""The rules of ARCHITECTURE.md that the layer contracts (``lint-imports``) do not hold.

Read from the source with ``ast``, every import counted wherever it stands: at the top, inside
a function (a start-up import) or under ``TYPE_CHECKING``.

- No import cycle between trntui's modules: an import inside a function is there for start-up
  only, never to let two modules need each other.
- ``_name`` is file-local: no module imports a name with a leading underscore from another.
  A package split by size states its internal API: a name its modules share is public.
- One writer path: of the UI, only ``ui/session.py`` imports a store function that writes the
  project (one marked ``@writes_project``); screens change the project through the session.
- ARCHITECTURE.md names no file, folder or function that is gone: every ``path.py`` and
  ``folder/`` it cites exists, and a name cited right after a file is defined there.
- No screen or widget watches an attribute of the App by its name (``watch(self.app,
  "analysis", ...)``): renaming it would stop the screen without an error. They subscribe to
  the session's typed signals (``ui/session.py`` ``SessionSignals``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trntui"
REPOSITORY = PACKAGE.parent


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


def string_named_watches(source: str) -> list[int]:
    """The lines of ``source`` that watch the App's attribute named by a string:
    ``.watch(app, "name", ...)`` where ``app`` is a name or an attribute called ``app``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "watch"
            and len(node.args) >= 2
        ):
            continue
        watched, name = node.args[0], node.args[1]
        is_app = (isinstance(watched, ast.Name) and watched.id == "app") or (
            isinstance(watched, ast.Attribute) and watched.attr == "app"
        )
        if is_app and isinstance(name, ast.Constant) and isinstance(name.value, str):
            found.append(node.lineno)
    return found


def test_the_watch_finder_finds_a_string_named_watch_of_the_app():
    source = (
        "class Pane:\n"
        "    def on_mount(self):\n"
        "        self.watch(self.app, 'analysis', self.show)\n"
        "        self.watch(self, 'own', self.show)\n"
        "        app = self.app\n"
        "        self.watch(app, 'status', self.show, init=False)\n"
    )
    assert string_named_watches(source) == [3, 6]


def test_no_screen_watches_an_app_attribute_by_its_name():
    found = [
        f"{module}:{line}"
        for module, path in MODULES.items()
        for line in string_named_watches(path.read_text(encoding="utf-8"))
    ]
    assert not found, "watch the session's signals instead: " + ", ".join(found)


def project_writers() -> set[str]:
    """The names of the store's functions marked ``@writes_project``."""
    found = set()
    for module, path in MODULES.items():
        if not module.startswith("trntui.store."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Name) and d.id == "writes_project" for d in node.decorator_list
            ):
                found.add(node.name)
    return found


def test_the_writers_are_read_from_the_store():
    writers = project_writers()
    assert {"add_run", "remove_run", "state_size", "record_quality", "attach_capture"} <= writers
    assert "load_runs" not in writers


def test_only_the_session_imports_a_store_writer_in_the_ui():
    writers = project_writers()
    found = [
        f"{module}:{node.lineno} imports {name} from {source}"
        for module in MODULES
        if module.startswith("trntui.ui.") and module != "trntui.ui.session"
        for node, source, name in imports(module)
        if source.startswith("trntui.store") and name in writers
    ]
    assert not found, "change the project through the Session: " + "\n".join(found)


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


def cited(document: str) -> tuple[set[str], set[str], list[tuple[str, str]]]:
    """The files (``x.py``, ``store/x.py``), folders (``store/``) and (file, name) pairs a
    Markdown document cites in backticks; a path may be relative to the package it speaks of."""
    files = set(re.findall(r"`([\w/.]+\.py)`", document))
    folders = set(re.findall(r"`([\w/]+/)`", document))
    pairs = re.findall(r"`([\w/.]+\.py)`\s+`(\w+)`", document)
    return files, folders, pairs


def sources_ending(path: str) -> list[Path]:
    """The repository's Python files whose path ends with ``path``."""
    return [
        source
        for folder in ("trntui", "tests", "benchmarks")
        for source in (REPOSITORY / folder).rglob("*.py")
        if f"/{source.relative_to(REPOSITORY).as_posix()}".endswith(f"/{path}")
    ]


def defined_names(source: Path) -> set[str]:
    """What ``source`` defines (functions, classes, assignments) or imports, by name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def test_the_citation_reader_finds_files_folders_and_names():
    files, folders, pairs = cited("`store/` holds `facts.py` `store_facts`; see `README.md`.")
    assert (files, folders, pairs) == ({"facts.py"}, {"store/"}, [("facts.py", "store_facts")])
    assert sources_ending("store/facts.py") == [PACKAGE / "store" / "facts.py"]
    assert "store_facts" in defined_names(PACKAGE / "store" / "facts.py")
    assert "no_such_name" not in defined_names(PACKAGE / "store" / "facts.py")


def test_architecture_md_cites_only_what_exists():
    files, folders, pairs = cited((REPOSITORY / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    folders_there = {
        f"{path.relative_to(REPOSITORY).as_posix()}/"
        for top in ("trntui", "tests", "benchmarks")
        for path in [REPOSITORY / top, *(REPOSITORY / top).rglob("*")]
        if path.is_dir() and "__pycache__" not in path.parts
    }
    gone = sorted(path for path in files if not sources_ending(path))
    gone += sorted(
        folder
        for folder in folders
        if not any(f"/{there}".endswith(f"/{folder}") for there in folders_there)
    )
    gone += [
        f"{path} {name}"
        for path, name in pairs
        if sources_ending(path)
        and not any(name in defined_names(source) for source in sources_ending(path))
    ]
    assert not gone, "ARCHITECTURE.md cites what is not there: " + ", ".join(gone)


def _install_line(text: str) -> str:
    (line,) = [line for line in text.splitlines() if "pip install -e '.[test" in line]
    return line[line.index("pip install") :]


def test_ci_runs_the_readmes_test_command_with_the_tensorboard_extra():
    readme = (REPOSITORY / "README.md").read_text()
    (command,) = [
        line
        for line in readme.splitlines()
        if "pip install -e '.[test" in line and "lint-imports" in line
    ]
    ci = _install_line((REPOSITORY / ".ci" / "run").read_text())
    assert command.endswith(ci)
    # the TensorBoard importer's tests read event files with the extra: CI installs it
    assert "'.[test,tensorboard]'" in ci
