"""What reaches the terminal: the app run in a real pseudo-terminal, every byte it writes read.

Issue 30, item 3: text from committed project files (the project name and owner, a target's
name, a quote's source note, a scenario's note) holding ``ESC ] 0`` (window title),
``ESC ] 52`` (clipboard) or a right-to-left override was written to the terminal as it was,
so one collaborator could set the title and the clipboard of whoever opened the project. The
app's own output uses one operating-system command only (``ESC ] 22``, the mouse pointer's
shape); nothing else of that kind, no BEL of its own and no bidirectional override may appear.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import struct
import sys
import time
from pathlib import Path

from tests import HANG_GUARD_S, copy_sample

TITLE = "\x1b]0;PWNED-TITLE\x07"
CLIPBOARD = "\x1b]52;c;UFdORUQ=\x07"
RLO = "\u202e"


def _hostile_project(folder: Path) -> Path:
    """The sample with control sequences in every text a collaborator commits."""
    project = copy_sample(folder / "proj")

    def edit(name: str, old: str, new: str) -> None:
        path = project / name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    toml = lambda text: text.encode("unicode_escape").decode().replace("\\x", "\\u00")  # noqa: E731
    edit("trntui.toml", 'owner = "ml-platform team (example)"', f'owner = "{toml(CLIPBOARD)}team"')
    edit(
        "trntui.toml",
        'name = "Llama-2-70B LoRA: Trainium3 trial vs 1 x 8 H100 baseline"',
        f'name = "{toml(TITLE)}Llama-2-70B LoRA"',
    )
    edit(
        "trntui.toml",
        'name = "Trainium3 trial"',
        f'name = "Trainium3 {toml(TITLE)}{toml(RLO)}trial"',
    )
    edit(
        "prices/quotes.toml",
        'source_note = "EXAMPLE figure',
        f'source_note = "{toml(RLO)}{toml(CLIPBOARD)}EXAMPLE figure',
    )
    edit(
        "scenarios/as-measured.toml",
        'note = "EXAMPLE: the runs',
        f'note = "{toml(TITLE)}EXAMPLE: the runs',
    )
    return project


class _Terminal:
    """The app in a pseudo-terminal of 80 x 24; ``output`` is everything it wrote."""

    def __init__(self, project: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the app, as `trntui PROJECT` starts it
            os.environ["TERM"] = "xterm-256color"
            os.execv(sys.executable, [sys.executable, "-c", _START, str(project)])
        import fcntl
        import termios

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.output = b""

    def wait_for(self, marker: bytes) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while marker not in self.output:
            assert time.monotonic() < deadline, f"{marker!r} never shown"
            assert self._read(0.1), f"the app ended before showing {marker!r}"

    def _read(self, timeout_s: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if ready:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return False  # the app has ended
            if not data:
                return False
            self.output += data
        return True

    def press(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def close(self) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline and self._read(0.1):
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                self.pid = 0
                break
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


_START = "import sys; from trntui.cli import main; sys.exit(main(sys.argv[1:]))"


def test_control_sequences_in_project_files_never_reach_the_terminal(tmp_path: Path) -> None:
    terminal = _Terminal(_hostile_project(tmp_path))
    try:
        terminal.wait_for(b"PWNED-TITLE")  # the header: the project's name is shown
        terminal.press(b"2")
        terminal.wait_for(b"steady")  # the Runs table
        terminal.press(b"3")
        terminal.wait_for(b"EXAMPLE figure")  # the quotes' source notes are shown
        terminal.press(b"4")
        terminal.wait_for(b"Sensitivity")  # the Scenarios tabs
        terminal.press(b"\x11")  # ctrl+q
    finally:
        terminal.close()
    output = terminal.output
    commands = set(re.findall(rb"\x1b\](\d*)", output))
    assert commands <= {b"22"}, f"operating-system commands written: {commands}"
    assert output.count(b"\x07") == output.count(b"\x1b]22;"), "a BEL of its own"
    assert RLO.encode() not in output
    assert b"UFdORUQ" in output  # the text around the sequences is still shown


def test_a_byte_that_is_not_utf8_does_not_end_the_app(tmp_path: Path) -> None:
    """Issue 30, item 10: a 0xFF byte typed or pasted (a Latin-1 terminal, binary on stdin)
    raised in Textual's input thread and the app panicked; it is now one replacement
    character, and the keys after it still work."""
    terminal = _Terminal(copy_sample(tmp_path / "proj"))
    try:
        terminal.wait_for(b"Llama")
        terminal.press(b"\xff")
        terminal.press(b"\x1b[200~caf\xe9\xff\x1b[201~")  # a bracketed paste in Latin-1
        terminal.press(b"4")
        terminal.wait_for(b"Sensitivity")  # the key after the bytes was still read
        terminal.press(b"\x11")
    finally:
        terminal.close()
    assert b"Traceback" not in terminal.output
