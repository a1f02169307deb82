"""Completion of the path being typed, shown inline by Textual's own suggester mechanism
(right arrow or end takes it): the import and attach dialogs name files on a machine reached
over SSH, where typing a long results path by hand is where mistakes come from."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester

_MAX_ENTRIES = 2000
"""Entries of one folder looked at: a folder of many thousands of logs still answers at once
(the first match in name order among these)."""


class PathSuggester(Suggester):
    """Completes the last space-separated word of a field as a path: the first entry of its
    folder that starts with what was typed (a folder gets its ``/``). A word in quotes, or an
    entry whose name needs quoting, is not completed; hidden entries only after a dot."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)  # folders change

    async def get_suggestion(self, value: str) -> str | None:
        head, _, word = value.rpartition(" ")
        if not word or word[0] in "'\"":
            return None
        folder_text, _, prefix = word.rpartition("/")
        folder = Path(os.path.expanduser(folder_text + "/" if folder_text else "."))
        if word.startswith("/") and not folder_text:
            folder = Path("/")
        try:
            with os.scandir(folder) as entries:
                names = sorted(
                    (entry.name, entry.is_dir())
                    for _, entry in zip(range(_MAX_ENTRIES), entries, strict=False)
                )
        except OSError:
            return None
        for name, is_dir in names:
            if not name.startswith(prefix) or (name.startswith(".") and prefix[:1] != "."):
                continue
            if any(char in name for char in " '\"\\"):
                continue
            completed = name + ("/" if is_dir else "")
            if completed == prefix:
                continue
            start = f"{head} " if head else ""
            return f"{start}{folder_text}{'/' if word.count('/') else ''}{completed}"
        return None
