"""Re-exports that load their module when first used (PEP 562).

A package that re-exports its modules' names (``from trntui.store.telemetry import ...``)
would otherwise load every module on the first import of any one; a headless command then
pays for classes it never uses (creating a dataclass compiles its methods: most of trntui's
start-up). ``lazy_exports`` gives such a package a module ``__getattr__`` that imports the
module holding a name when the name is first asked for, and keeps it on the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: ``exports`` maps each public name to the submodule
    (relative to the package) that defines it."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # asked for once
        return value

    return __getattr__
