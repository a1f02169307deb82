"""Render the README screenshots (SVG) of the sample project at 80x24.

Run: python screenshots/make_screenshots.py  (then convert to PNG, e.g. with rsvg-convert).
Uses a copy of the sample project so the real one is never written.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from trntui.store.project import Project
from trntui.ui.app import TrnTuiApp

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample_runs" / "llama2-70b-lora"


async def shoot(root: Path, name: str, keys: list[str]) -> None:
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.workers.wait_for_complete()  # the first estimate: the bar shows totals
            await pilot.pause(0.2)
            for key in keys:
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause(0.2)
            app.save_screenshot(filename=f"{name}.svg", path=str(HERE))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / SAMPLE.name
        shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".trntui.lock"))
        await shoot(root, "inventory", ["down", "enter"])
        await shoot(root, "targets", ["down"] * 8)
        await shoot(root, "runs", ["2", *["down"] * 12])
        await shoot(root, "prices", ["3"])
        await shoot(root, "estimate", ["4"])
        await shoot(root, "sensitivity", ["4", "right_square_bracket", "right_square_bracket"])
        await shoot(root, "comparison", ["4", *["right_square_bracket"] * 3])


if __name__ == "__main__":
    asyncio.run(main())
