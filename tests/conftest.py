"""Fixtures shared by the test files.

Paths and the UI terminal size are constants in ``tests/__init__.py``; helpers that drive the
app without sleeping are in ``tests/ui_support.py``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests import SAMPLE, copy_sample
from tests.loggen import NxdSpec, write_nxd
from tests.test_pricing_support import FakePriceList, running_price_list
from trntui.pricing.settings import CACHE_DIR_ENV, PRICING_URL_ENV
from trntui.store.project import Project, init_project
from trntui.store.run_import import import_paths


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for ``-n auto`` (the default, see pyproject.toml): half again as many as CPUs.

    Between two keys the UI tests wait for the app to go idle (Textual's pilot sleeps 20 ms a
    few times per key), so a third worker on two CPUs runs in that idle time: 59 s instead of
    64 s on the project's 2-core machine. Beyond 8 workers one per CPU is plenty.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins, as pytest-xdist documents."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = cpus or 1
    return min(cpus + (cpus + 1) // 2, max(cpus, 8))


settings.register_profile(
    "trntui",
    # No property here is about speed: a loaded machine must not fail an example for its time.
    deadline=None,
    # Slow generation on a loaded machine is no failure either. The property tests write their
    # files into one tmp_path, overwritten by each example: a function-scoped fixture on purpose.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    # On CI (CI=true) the same examples every run: whether a change lands does not depend on
    # luck. A developer's runs draw new examples, which is how a bug no example covered shows
    # up (then pin the failing one with @example, as test_mapped does).
    derandomize=bool(os.environ.get("CI")),
)
settings.load_profile("trntui")

NOTHING_LISTENS = "http://127.0.0.1:9"
"""The discard port on this machine: a fetch that a test did not point anywhere fails at once,
and never reaches a real price list."""


@pytest.fixture(autouse=True, scope="session")
def _no_user_files_and_no_network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests run the same on any machine: the user's keymap, config and price cache are never
    read (nor written), and the price list URL is a local port where nothing listens unless a
    test starts its fake server there. Subprocesses inherit the same environment."""
    home = tmp_path_factory.mktemp("user-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(home / "config"))
        patch.setenv("XDG_CACHE_HOME", str(home / "cache"))
        patch.setenv("XDG_DATA_HOME", str(home / "data"))
        patch.setenv("XDG_STATE_HOME", str(home / "state"))
        patch.setenv(CACHE_DIR_ENV, str(home / "trntui-cache"))
        patch.setenv(PRICING_URL_ENV, NOTHING_LISTENS)
        # Where platformdirs ignores XDG (macOS, Windows), the keymap path is set directly.
        patch.setattr("trntui.ui.keys.keymap_path", lambda: home / "keymap.toml")
        yield


@pytest.fixture
def new_project(tmp_path: Path) -> Path:
    """A new, empty project folder (``trntui init``), named "test project"."""
    return init_project(tmp_path / "project", "test project")


@pytest.fixture
def new_session(new_project: Path) -> Iterator[Project]:
    """The new project opened for writing, as the app opens it."""
    with Project.open(new_project) as opened:
        yield opened


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    """A copy of the sample project. The folder keeps the sample's name: screens show it."""
    return copy_sample(tmp_path / SAMPLE.name)


@pytest.fixture
def sample_project(sample_dir: Path) -> Iterator[Project]:
    """The copy of the sample project opened for writing."""
    with Project.open(sample_dir) as opened:
        yield opened


TRN_SPEC = NxdSpec(total_steps=384, batch=8, stall_at=None, crash_at=None)
"""The one Trainium run of ``trn_project``: no stall, no crash."""


@pytest.fixture(scope="session")
def _trn_project_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("trn-project")
    root = copy_sample(base / "proj", "runs", "logs", "telemetry")
    log = base / "trn.log"
    write_nxd(log, TRN_SPEC)
    (outcome,) = import_paths(root, [log], set_name="trn")
    assert outcome.run_id is not None
    return root, outcome.run_id


@pytest.fixture
def trn_project(_trn_project_once: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """The sample project's inventory, prices and scenarios with one imported Trainium run
    (``TRN_SPEC``, set "trn") and nothing else: ``(root, run_id)``. Imported once per test
    process, copied for each test."""
    built, run_id = _trn_project_once
    root = tmp_path / "proj"
    shutil.copytree(built, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    return root, run_id


@pytest.fixture
def price_server() -> Iterator[FakePriceList]:
    """The fake AWS price list on 127.0.0.1 (an ephemeral port), for one test."""
    with running_price_list() as state:
        yield state


@pytest.fixture
def instant_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app saves an edit at once instead of 0.4 s after the last one: UI tests wait for the
    saved file (``ui_support.wait_until``), never for a duration. A test that must see the state
    before the save sets ``app.save_delay_s`` to an hour and saves with ctrl+s."""
    from tests.ui_support import SOON_S
    from trntui.ui.app import TrnTuiApp

    monkeypatch.setattr(TrnTuiApp, "save_delay_s", SOON_S)
