"""An open project as one handle (``ProjectStore``): the ``Project`` (the inventory file and,
unless read-only, the write lock) and what this session read and derived from the project,
kept until the files it came from change. The app's ``Session`` and the CLI's commands that
read runs open one. The lock is the ``Project``'s (``store.project.access`` only indexes the
open handles, so that a store writer called with the root finds it), and what is cached is
this object's: no module of the store keeps what a project holds.

What it keeps, and until when:

* the run facts and the observations frame (``derive_and_store_observations``), until the runs
  table, the recorded quality, the captures or the stated sizes change on disk, or the goal's
  quality criterion or planned steps do: editing any other input never touches the runs again;
* what ``runs/sets.toml`` states (``stated_sizes``, ``family_names``), until the file is
  replaced: an estimate asks for the sizes and the families, and a team's file of a thousand
  sets takes longer to parse than the estimate of a small project.

The app's first frame opens one before it needs Polars: what the caches read and derive is
imported when first asked for. A method that stores derived data says so in its name
(``derive_and_store_...``); it stores only when this process may write the project
(``store.project.may_store_derived``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trntui.store.project import Project

if TYPE_CHECKING:
    import datetime as dt

    from trntui.core.estimate import EstimateContext
    from trntui.core.inventory import Inventory
    from trntui.core.quality import QualityTarget
    from trntui.core.timeline import SystemSize
    from trntui.store.estimate_context import Observed
    from trntui.store.set_sizes import SetEntries

    _ObservedKey = tuple[tuple[tuple[int, int] | None, ...], QualityTarget | None, int | None]


class ProjectStore:
    """One open project: its ``Project`` and this session's caches of what it derived.

    Use as a context manager, or call ``close`` to release the lock (``open``); one made
    around a ``Project`` the caller opened leaves closing it to the caller.
    """

    def __init__(self, project: Project) -> None:
        self.project = project
        self._sets: tuple[tuple[str, int, int, int] | None, SetEntries] | None = None
        self._observed: tuple[_ObservedKey, Observed] | None = None

    @classmethod
    def open(
        cls, root: Path, *, allow_read_only: bool = False, read_only: bool = False
    ) -> ProjectStore:
        """Open ``root`` as ``Project.open`` does (the lock, or read-only, or ``ProjectLocked``)."""
        return cls(Project.open(root, allow_read_only=allow_read_only, read_only=read_only))

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def inventory(self) -> Inventory:
        """The inventory as the project file held it when opened, read again or last saved."""
        return self.project.inventory

    @property
    def read_only(self) -> bool:
        return self.project.read_only

    def require_writable(self) -> None:
        self.project.require_writable()

    def set_entries(self) -> SetEntries:
        """What ``runs/sets.toml`` states, parsed once per version of the file."""
        from trntui.store.set_sizes import read_set_entries, sets_file_state

        state = sets_file_state(self.root)
        if self._sets is None or self._sets[0] != state:
            self._sets = (state, read_set_entries(self.root) if state is not None else {})
        return self._sets[1]

    def stated_sizes(self) -> dict[str, SystemSize]:
        """Run set name -> the size a person stated for it."""
        from trntui.store.set_sizes import stated_sizes

        return stated_sizes(self.set_entries())

    def family_names(self) -> dict[str, str]:
        """Run set name -> the scaling family a person put it in."""
        from trntui.store.set_sizes import family_names

        return family_names(self.set_entries())

    def derive_and_store_observations(self, inventory: Inventory | None = None) -> Observed:
        """Every imported run's facts against ``inventory``'s goal (the project's when not
        given) and the estimate's view of them, derived once per change of what they follow
        from: the same object until then (``estimate_context.derive_and_store_observations``,
        which stores the facts not stored yet)."""
        from trntui.store.estimate_context import (
            derive_and_store_observations,
            observation_inputs,
        )

        inventory = self.inventory if inventory is None else inventory
        key = (
            observation_inputs(self.root),
            inventory.goal.quality_target(),
            inventory.planned_steps(),
        )
        if self._observed is not None and self._observed[0] == key:
            return self._observed[1]
        observed = derive_and_store_observations(self.root, inventory, self.stated_sizes())
        self._observed = (key, observed)
        return observed

    def read_context(
        self,
        inventory: Inventory,
        observations: Observed,
        today: dt.date | None = None,
    ) -> EstimateContext:
        """What ``estimate`` reads: ``inventory``, the quote book and ``observations``
        (``derive_and_store_observations``'s). Writes nothing."""
        from trntui.store.estimate_context import read_context

        return read_context(
            self.root, inventory, observations.frame, today, family_names=self.family_names()
        )

    def derive_and_store_context(
        self, inventory: Inventory | None = None, today: dt.date | None = None
    ) -> EstimateContext:
        """``read_context`` of this project's observations, the run facts not stored yet
        stored on the way (``derive_and_store_observations``)."""
        inventory = self.inventory if inventory is None else inventory
        return self.read_context(inventory, self.derive_and_store_observations(inventory), today)

    def read_target_context(
        self, inventory: Inventory | None = None, today: dt.date | None = None
    ) -> EstimateContext:
        """``read_context`` of only the runs an estimate of ``inventory``'s targets reads (the
        project's when not given): the targets' run sets and the sets their scaling families
        could hold (``estimate_context.read_target_observations``). Writes nothing and keeps
        nothing: for a command that prints one estimate (``trntui estimate`` and ``report``),
        where a team's archive would otherwise parse every run of a thousand sets."""
        from trntui.store.estimate_context import read_target_observations

        inventory = self.inventory if inventory is None else inventory
        observed = read_target_observations(
            self.root, inventory, self.stated_sizes(), self.family_names()
        )
        return self.read_context(inventory, observed, today)

    def close(self) -> None:
        """Release the write lock (``Project.close``) and forget what was derived."""
        self.project.close()
        self._sets = self._observed = None

    def __enter__(self) -> ProjectStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
