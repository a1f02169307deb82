"""Lazily re-exported packages (``trntui.lazy``): every public name resolves, to the same
object its module defines, and a name the package does not have is an AttributeError."""

from __future__ import annotations

import importlib

import pytest

LAZY_PACKAGES = [
    "trntui.store.telemetry",
    "trntui.core.run_facts",
    "trntui.pricing.extract",
    "trntui.store.scenarios",
]


@pytest.mark.parametrize(
    ("package", "module", "name"),
    [
        ("trntui.store.telemetry", "captures", "load_captures"),
        ("trntui.store.telemetry", "per_run", "run_limit"),
        ("trntui.store.telemetry", "attach", "attach_capture"),
        ("trntui.core.run_facts", "derive", "run_facts"),
        ("trntui.core.run_facts", "summary", "Spread"),
        ("trntui.pricing.extract", "records", "OfferRows"),
        ("trntui.pricing.extract", "instances", "instance_plan"),
        ("trntui.pricing.extract", "offer", "read_preamble"),
    ],
)
def test_a_lazy_name_is_its_modules_object(package: str, module: str, name: str) -> None:
    loaded = importlib.import_module(package)
    assert getattr(loaded, name) is getattr(importlib.import_module(f"{package}.{module}"), name)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_resolves_and_no_other(package: str) -> None:
    loaded = importlib.import_module(package)
    for name in loaded.__all__:
        assert getattr(loaded, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        loaded.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_no_public_name_is_also_a_module_name(package: str) -> None:
    """Loading a submodule sets it on its package under its own name, which would hide a
    lazily exported name spelled the same (the function, once the module has loaded)."""
    import pkgutil

    loaded = importlib.import_module(package)
    modules = {info.name for info in pkgutil.iter_modules(loaded.__path__)}
    assert modules.isdisjoint(loaded.__all__)
