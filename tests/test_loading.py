"""Issue 29: the command line loads Polars, Textual and the first screen without the garbage
collector's passes (``trntui.loading``), then keeps what it loaded out of later passes and
runs the collector as before. Callers in process, which have loaded those already, keep their
collector as it is."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from tests import SIZE
from tests.ui_support import settle
from trntui import loading
from trntui.store.project import Project
from trntui.ui.app import TrnTuiApp


def probe(code: str) -> str:
    """The last line ``code`` prints in a fresh process."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_pause_ends_with_what_was_loaded_frozen_and_the_collector_on() -> None:
    code = (
        "import gc\n"
        "from trntui.loading import collector_paused\n"
        "with collector_paused(unless_loaded='json'):\n"
        "    during = gc.isenabled()\n"
        "    import json\n"
        "print(during, gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    assert probe(code) == "False True True"
    loaded_already = code.replace("unless_loaded='json'", "unless_loaded='gc'")
    assert probe(loaded_already) == "True True False"


def test_a_block_inside_a_longer_pause_leaves_the_collector_paused() -> None:
    """The app's start pauses the collector until its first screen is ready; a block that
    pauses it meanwhile (a command's module loading) must not run it again early."""
    code = (
        "import gc\n"
        "from trntui.loading import collector_paused, pause_collector, resume_collector\n"
        "pause_collector(unless_loaded='json')\n"
        "with collector_paused(unless_loaded='csv'):\n"
        "    import csv\n"
        "inside = gc.isenabled()\n"
        "resume_collector()\n"
        "print(inside, gc.isenabled())\n"
    )
    assert probe(code) == "False True"


def test_a_headless_command_loads_its_module_with_the_collector_paused(sample_dir: Path) -> None:
    """``trntui estimate`` loads Polars and the core as it builds its parser: 0.261 -> 0.247 s
    of CPU, 1.64x -> 1.55x ``import polars`` (README, the benchmark table)."""
    code = (
        "import gc, sys\n"
        "from trntui.cli import main\n"
        f"code = main(['estimate', {str(sample_dir)!r}, '--json'])\n"
        "print(code, 'polars' in sys.modules, gc.isenabled(), gc.get_freeze_count() > 1000)\n"
    )
    assert probe(code) == "0 True True True"


async def test_the_app_runs_the_collector_again_once_its_first_screen_is_ready(
    sample_project: Project,
) -> None:
    """``trntui DIR`` pauses the collector before Textual loads; the app resumes it (with what
    start-up made frozen) once its first screen is ready."""
    before = gc.get_freeze_count()
    loading.pause_collector(unless_loaded="a module nothing loads")
    try:
        assert not gc.isenabled()
        app = TrnTuiApp(sample_project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert gc.isenabled() and gc.get_freeze_count() > before
    finally:
        loading.resume_collector()
        gc.unfreeze()
        gc.enable()
