"""Headless subcommands of ``trntui``.

Each module here exposes ``register(subparsers)`` which adds its subcommands; every subcommand
sets ``func(args) -> int`` with ``set_defaults``. They call the same core and store as the UI.
"""

from __future__ import annotations

import sys

from trntui.core.text import printable

USAGE_ERROR = 2
"""Exit status for a refused command (bad input or arguments), as argparse uses."""


def fail(message: object, status: int = USAGE_ERROR) -> int:
    """Print ``trntui: error: <message>`` to stderr (the one error format); return ``status``."""
    print(f"trntui: error: {printable(message)}", file=sys.stderr)
    return status
