"""Command line entry point: ``trntui [DIR]`` opens the app; subcommands work headless.

User mistakes (a missing folder, a malformed file, a busy project) print one line to stderr and
exit with status 2; so does a refusal by the system (a full disk, a file-size limit, a
permission): one line naming the file. Tracebacks are left for bugs.

Everything a headless command prints passes through ``core.text.printable``: a set name, a
fact from a log or a path never reaches the terminal as a control sequence.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from trntui import __version__
from trntui.commands import COMMANDS, fail, json_errors, wants_json
from trntui.core.errors import StorageError, UserError
from trntui.core.text import printable
from trntui.loading import collector_paused, pause_collector


def _build_parser(command: str | None = None) -> tuple[argparse.ArgumentParser, set[str]]:
    """The parser and every command's name; a known ``command`` gets its module's subcommands
    with their full arguments, and only those (a command parses nothing of the others).

    Otherwise every subcommand is listed by name and help (from ``COMMANDS``) without importing
    its module, so ``--help`` and opening the app load neither Polars nor the importers.
    """
    parser = _Parser(
        prog="trntui",
        description="Turn measured trial runs into a training cost estimate you can defend.",
        epilog="Without a subcommand, `trntui [DIR]` opens the app on the project in DIR.",
    )
    parser.add_argument("--version", action="version", version=f"trntui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    init = sub.add_parser("init", help="create a new project directory")
    init.add_argument("dir", metavar="DIR", help="folder to create (or an empty one)")
    init.add_argument("--name", help="project name (default: the folder's name)")
    init.set_defaults(func=_cmd_init)

    opener = sub.add_parser("open", help="open the app on a project (same as `trntui DIR`)")
    _add_open_arguments(opener)

    names = {"init", "open", *COMMANDS}
    if command in COMMANDS:
        # The command's module loads Polars and the core: without the collector's passes
        # (``trntui.loading``), in a process that has not loaded Polars yet.
        with collector_paused(unless_loaded="polars"):
            importlib.import_module(COMMANDS[command].module).register(sub)
        return parser, names
    for name, entry in COMMANDS.items():
        sub.add_parser(name, help=entry.help, add_help=False)
    return parser, names


def _add_open_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir", metavar="DIR", nargs="?", default=".", help="project folder (default: .)"
    )
    parser.add_argument(
        "--read-only", action="store_true", help="open without taking the write lock"
    )
    parser.set_defaults(func=_cmd_open)


def _cmd_init(args: argparse.Namespace) -> int:
    from trntui.store.project import init_project

    root = init_project(Path(args.dir), args.name)
    print(f"Created trntui project in {root}/ (edit it with: trntui {root})")
    return 0


def _cmd_open(args: argparse.Namespace) -> int:
    # Textual, the app and its first screen load and are built without the garbage
    # collector's passes (the app resumes it once that screen is ready: ``trntui.loading``).
    pause_collector(unless_loaded="textual")
    from trntui.ui.app import run_app  # Textual is only imported when the app is wanted

    return run_app(Path(args.dir), read_only=args.read_only)


class _Parser(argparse.ArgumentParser):
    """argparse, whose refusal of an argument is JSON as well for a command asked for it."""

    def error(self, message: str) -> NoReturn:
        if wants_json():
            print(json.dumps({"error": f"{self.prog}: {message}"}))
        super().error(message)


def run() -> int:
    """The ``trntui`` console script (and ``python -m trntui.cli``): ``main``, then the process
    ends at once after a headless command (``_end_at_once``)."""
    code, args = _main(None)
    if args is not None and args.func is not _cmd_open:
        _end_at_once(code)
    return code


def _end_at_once(code: int) -> None:
    """End the process with ``code`` without the interpreter's teardown, when nothing is left
    for it to do: the output is flushed, every file is written and closed (writes are atomic
    and synchronous), and no project's write lock is held (a held one is released at exit).
    The teardown frees every module and object one by one: 0.03-0.05 s of CPU after an import
    of a 109 MB log (the kernel frees the process's memory either way). What the exit would
    still do is done first: the functions registered to run at exit (``atexit``: finalizers,
    logging's flush). Returns (and the interpreter exits as usual) while a thread the exit
    would wait for is still running, or when a flush fails, so that failure is reported as
    before.
    """
    project = sys.modules.get("trntui.store.project")
    if project is not None and project.holds_a_lock():
        return
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (the process's arguments when None); its exit status."""
    return _main(argv)[0]


def _main(argv: Sequence[str] | None) -> tuple[int, argparse.Namespace | None]:
    """``main``, and the parsed arguments of the command that ran (None when none did)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    json_errors("--json" in argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    # ``trntui -h price`` asks for the top-level help: every command, not one module's.
    asks_help = first is not None and any(a in ("-h", "--help") for a in argv[: argv.index(first)])
    parser, commands = _build_parser(None if asks_help else first)
    if first is None or first not in commands:
        opener = argparse.ArgumentParser(prog="trntui", parents=[], add_help=False)
        if any(a in ("-h", "--help") for a in argv):
            parser.print_help()
            return 0, None
        if "--version" in argv:
            print(f"trntui {__version__}")
            return 0, None
        _add_open_arguments(opener)
        args = opener.parse_args(argv)
        if first is not None and not Path(first).exists() and "/" not in first:
            # ``trntui frobnicate``: more likely a mistyped command than a missing project.
            message = (
                f"{first!r} is neither a command nor a project folder: create a project with "
                f"`trntui init {first}`, or use a command ({', '.join(sorted(commands))}; "
                "see trntui --help)"
            )
            return fail(message), None
    else:
        args = parser.parse_args(argv)
    if args.func is _cmd_open:  # the app draws with escape sequences of its own
        return _run(args), args
    with printable_output():
        return _run(args), args


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except UserError as error:
        return fail(error)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; stop quietly like other command-line tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as error:
        # A write or read the system refused where no layer below named it (a full disk, a
        # file-size limit, a permission): one line naming the file, as for any user error.
        where = str(error.filename or "a project file")
        return fail(StorageError(where, error, action="read or written"))
    except KeyboardInterrupt:
        print("trntui: interrupted", file=sys.stderr)
        return 130


class _PrintableStream:
    """A text stream that shows control characters as escapes (``core.text.printable``)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        # A progress line redraws itself with a leading CR (``price fetch``): that one is ours.
        if text.startswith("\r"):
            return self._stream.write("\r" + printable(text[1:]))
        return self._stream.write(printable(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextlib.contextmanager
def printable_output() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through ``printable`` while a command runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PrintableStream(out), _PrintableStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":
    raise SystemExit(run())
