"""Errors a user can cause, each with a message written for a person.

Tracebacks are for bugs; everything a user can trigger by a bad file, a bad value or a busy
project raises one of these, and the CLI and the UI show ``str(error)`` as it is.
"""

from __future__ import annotations


class UserError(Exception):
    """Base class: the message names what is wrong and what was expected."""


class InputFileError(UserError):
    """A file the user gave us is malformed; points at the file, the line and the key."""

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        line: int | None = None,
        key: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.path = path
        self.problem = problem
        self.line = line
        self.key = key
        self.expected = expected
        where = path if line is None else f"{path}:{line}"
        parts = [f"{where}: {problem}"]
        # A problem that already says the key or what was expected is not told twice.
        if key and f"'{key}'" not in problem:
            parts.append(f"key '{key}'")
        if expected and f"expected {expected}" not in problem:
            parts.append(f"expected {expected}")
        super().__init__("; ".join(parts))


class StorageError(UserError):
    """The project's files could not be written or read because of the system: a full disk,
    a file-size limit, a permission. Names the file; what was stored before is unchanged."""

    def __init__(self, path: str, error: OSError, *, action: str = "written") -> None:
        self.path = path
        self.errno = error.errno
        reason = error.strerror or str(error)
        super().__init__(f"{path}: cannot be {action} ({reason}); nothing was changed")
