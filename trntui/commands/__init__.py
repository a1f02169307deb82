"""Headless subcommands of ``trntui``.

Each module here exposes ``register(subparsers)`` which adds its subcommands; every subcommand
sets ``func(args) -> int`` with ``set_defaults``. They call the same core and store as the UI.
"""
