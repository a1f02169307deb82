"""Run log importers: one module (or package) per log format, each giving the normalized
timeline.

``import_file(path)`` sniffs the format unless told, and returns an ``ImportedRun``. Adding a
format means one new module (or a package re-exporting them) named after the format (``-``
written ``_``) with ``NAME``, ``sniff(head) -> bool`` and ``import_<module>``, plus one entry
in ``FORMATS``. Sniffing order matters: the most specific marker first. The parsers (and
Polars) are loaded when a file is first sniffed or read, not when this package is imported;
a file read with its format named loads that format's parser only.

Every user-caused problem raises ``InputFileError`` (file, line, what was expected); a
``cancel`` callable returning True makes the import raise ``Cancelled``; ``progress`` receives
the fraction done, so the UI can run an import in a thread worker.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trntui.core.errors import InputFileError, UserError
from trntui.importers.reading import CancelCheck, Cancelled, Progress, Steps, open_regular

if TYPE_CHECKING:
    from trntui.core.timeline import ImportedRun

__all__ = ["FORMATS", "CancelCheck", "Cancelled", "Progress", "detect_format", "import_file"]

FORMATS: dict[str, str] = {
    "tensorboard": "TensorBoard event file (events.out.tfevents.*)",
    "mlperf": "MLPerf Training :::MLLOG log",
    "hf": "Hugging Face trainer_state.json",
    "hf-console": "Hugging Face Trainer console output",
    "nemo-printer": "NeMo ProgressPrinter console output",
    "lightning": "PyTorch Lightning / NeMo / NxD Training console output",
    "nxd": "neuronx-distributed training log",
    "megatron": "Megatron-LM training log",
}
"""Format name -> what it is, for menus and ``--format`` choices, in sniffing order. Known
without loading the parsers (and Polars), so ``trntui import --help`` and the import dialog's
menu do not wait for them; ``test_importers_registry`` checks that it names each parser's
``NAME`` in ``_formats``' order."""


@dataclass(frozen=True)
class _Format:
    name: str
    sniff: Callable[[str], bool]
    load: Callable[[Path, Steps], ImportedRun]


@functools.cache
def _format(name: str) -> _Format | None:
    """The parser of format ``name`` (``None`` for a name not in ``FORMATS``), loaded when
    first needed: module ``trntui.importers.<name with _ for ->``, its ``import_<module>``."""
    if name not in FORMATS:
        return None
    module_name = name.replace("-", "_")
    module = importlib.import_module(f"trntui.importers.{module_name}")
    return _Format(module.NAME, module.sniff, getattr(module, f"import_{module_name}"))


def _formats() -> tuple[_Format, ...]:
    """Every parser, in ``FORMATS`` order (sniffing a file's format needs them all)."""
    return tuple(fmt for name in FORMATS if (fmt := _format(name)) is not None)


_SNIFF_CHUNK = 1 << 20
_SNIFF_LIMIT = 32 << 20


CAPTURE_HINT = (
    "a {kind} utilization capture, not a training log: attach it to its run "
    "(t in the run's detail, or `trntui telemetry DIR PATH --run RUN`)"
)


def capture_kind(path: Path) -> str | None:
    """``neuron-monitor`` or ``nvidia-smi`` when ``path`` is a utilization capture (attached
    to a run, never imported as one), else None. Reads the first 64 KiB."""
    try:
        with open_regular(Path(path)) as handle:
            head = handle.read(1 << 16).decode("utf-8", errors="replace")
    except (OSError, UserError):
        return None
    from trntui.importers.neuron_monitor import sniff as sniff_monitor
    from trntui.importers.nvidia_smi import sniff as sniff_smi

    if sniff_monitor(head):
        return "neuron-monitor"
    if sniff_smi(head):
        return "nvidia-smi"
    return None


def detect_format(path: Path) -> str:
    """Name of the format of ``path``, from markers in its text (read in 1 MB chunks).

    Megatron logs can start with thousands of lines of arguments before the first iteration,
    so reading continues past the first chunk until a marker is seen or 32 MB were read.
    """
    path = Path(path)
    with open_regular(path) as handle:  # a FIFO or device is refused, never waited on
        head = ""
        read = 0
        while read < _SNIFF_LIMIT:
            chunk = handle.read(_SNIFF_CHUNK)
            if not chunk:
                break
            if read == 0 and not chunk.strip():
                raise InputFileError(str(path), "file is empty", expected="a training log")
            read += len(chunk)
            # Sniffed with LF line ends: a log written with CR only (or CRLF) reads like the
            # same log with LF (the readers split on any of them; the sniffers' ^ is LF's).
            text = chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
            head = head[-4096:] + text.replace("\r", "\n")
            for fmt in _formats():
                if fmt.sniff(head):
                    return fmt.name
    if read == 0:
        raise InputFileError(str(path), "file is empty", expected="a training log")
    raise InputFileError(
        str(path),
        "the log format was not recognised",
        line=1,
        expected="one of: " + "; ".join(FORMATS.values()),
    )


def import_file(
    path: Path,
    format: str | None = None,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> ImportedRun:
    """Read one log into a timeline + metadata, or raise ``InputFileError`` / ``Cancelled``."""
    path = Path(path)
    steps = Steps(str(path), progress, cancel)
    steps.at(0.0)
    name = format or detect_format(path)
    # Only the named format's parser is loaded when the format is given.
    fmt = _format(name)
    if fmt is not None:
        run = fmt.load(path, steps)
        steps.at(1.0)
        return run
    raise InputFileError(
        str(path), f"unknown log format {name!r}", expected="one of " + ", ".join(FORMATS)
    )
