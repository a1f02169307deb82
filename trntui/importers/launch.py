"""What a log says about the job around the training process: system size and the job's clock.

Training frameworks print their own lines (MLLOG events, iteration lines), but the size of the
system and the time the job really held it are written by the layers around them, and several
logs carry those lines too. Sources, in the order they are trusted:

1. ``:::SYSJSON {...}`` lines (MLPerf system description printed by the run script):
   ``number_of_nodes``, ``accelerators_per_node``, ``accelerator_model_name`` (numbers often as
   text). A line whose JSON does not parse (a script that printed its usage instead) is ignored.
2. The MLCommons submission layout: a log at ``<submitter>/results/<system>/<benchmark>/`` is
   described by ``<submitter>/systems/<system>.json`` (same keys). MLCommons names a system
   folder after its *node* count (``8xSMC-H100``: 8 nodes), so the name itself is never read.
3. Launcher lines echoed into the log: Slurm ``srun`` (``--ntasks``/``-n``,
   ``--ntasks-per-node``, ``--nodes``/``-N``), ``torchrun`` / ``torch.distributed.run``
   (``--nnodes``, ``--nproc_per_node``) and ``mpirun`` (``-np``, ``-npernode`` /
   ``--map-by ppr:M:node``). The launch of the most processes is the training job (a job also
   runs one-task helpers such as cache clearing); one process per accelerator is assumed, and
   the source says which line it came from.

The job's clock: NVIDIA-derived implementations wrap training in a script that prints
``STARTING TIMING RUN AT <local date>``, ``ENDING TIMING RUN AT <local date>`` and
``RESULT,<BENCHMARK>,,<seconds>,<user>,<start date>`` (v4.0), or ``RUNANDTIME_START <epoch s>``
and ``RUNANDTIME_STOP <epoch s>`` (v5.0, each often twice: the plain line and the ``+ echo
'...'`` that ``set -x`` prints). Every clock printed is kept; the billed attempt spans the
longest, since the machine was held at least that long. v4.0's dates are local time without a
zone; they are placed on the log's own (UTC) clock by the one whole-quarter-hour zone offset
that puts the wrapper's start before the first log line and its end after the last one. When
several offsets fit, the time before the first line stays unknown (the span is still known).
v5.0's epoch seconds are on the log's clock already (to their one-second resolution).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import shlex
from pathlib import Path
from typing import Any

import polars as pl

from trntui.core.errors import InputFileError
from trntui.core.safe_json import MAX_JSON_CHARS, parse_json
from trntui.core.timeline import JobClock, SystemSize

SYSJSON = ":::SYSJSON"
SYSTEMS_FOLDER = "systems"
RESULTS_FOLDER = "results"

_LAUNCHERS = re.compile(
    r"(?:^|[\s;&|(+'\"])(srun|torchrun|mpirun|mpiexec)\s|torch\.distributed\.(?:run|launch)\b"
)
_WRAPPER_START = re.compile(r"STARTING TIMING RUN AT (.+?)\s*$")
_WRAPPER_END = re.compile(r"ENDING TIMING RUN AT (.+?)\s*$")
_WRAPPER_RESULT = re.compile(r"RESULT,([^,]*),[^,]*,(\d+(?:\.\d+)?),")
_EPOCH_MARK = "RUNANDTIME_"
_EPOCH_START = re.compile(r"RUNANDTIME_START\s+(\d{9,11})\b")
_EPOCH_STOP = re.compile(r"RUNANDTIME_STOP\s+(\d{9,11})\b")
_DATE_FORMATS = ("%Y-%m-%d %I:%M:%S %p", "%Y-%m-%d %H:%M:%S", "%a %b %d %H:%M:%S %Z %Y")
_QUARTER_HOUR_S = 900
_MAX_ZONE_S = 14 * 3600
_CLOCK_RESOLUTION_S = 1.0


def context_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """The lines that may carry size or clock facts (a cheap filter before any parsing)."""
    text = pl.col("text")
    return lines.filter(
        text.str.contains(SYSJSON, literal=True)
        | text.str.contains("TIMING RUN AT", literal=True)
        | text.str.contains("RESULT,", literal=True)
        | text.str.contains(_EPOCH_MARK, literal=True)
        | text.str.contains(r"\b(srun|torchrun|mpirun|mpiexec)\s|torch\.distributed\.")
    )


def _whole(value: Any) -> int | None:
    """A positive whole number from JSON or text (``"8"``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            return None
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def _described_size(data: Any, source: str) -> SystemSize | None:
    """Size from an MLPerf system description (SYSJSON line or systems file)."""
    if not isinstance(data, dict):
        return None
    nodes = _whole(data.get("number_of_nodes"))
    per_node = _whole(data.get("accelerators_per_node"))
    if nodes is None and per_node is None:
        return None
    name = data.get("accelerator_model_name")
    accelerator = name.strip() if isinstance(name, str) and name.strip() else None
    return SystemSize(nodes, per_node, accelerator, source)


_NO_DEVICE = re.compile(r"no devices?\b|not found|^unknown$|^n/?a$|^none$", re.IGNORECASE)
_UNKNOWN_SYSTEM = re.compile(r"\bUNKNOWN", re.IGNORECASE)


def _helper_doubt(data: dict[str, Any]) -> str | None:
    """Why a ``:::SYSJSON`` line is a doubtful witness: the helper step that prints it may run
    where no accelerator is visible (it then names no device, and often an unknown system)."""
    name = data.get("accelerator_model_name")
    if not isinstance(name, str) or not name.strip() or _NO_DEVICE.search(name.strip()):
        return f"names no device ({name!r})" if isinstance(name, str) else "names no device"
    system = data.get("system_name")
    if isinstance(system, str) and _UNKNOWN_SYSTEM.search(system):
        return f"names an unknown system ({system})"
    return None


def sysjson_size(lines: pl.DataFrame, path: str) -> tuple[SystemSize | None, str | None]:
    """The first ``:::SYSJSON`` line whose JSON parses and states a size, and why it is
    doubtful (``_helper_doubt``) or ``None``."""
    for line, text in lines.filter(pl.col("text").str.contains(SYSJSON, literal=True)).iter_rows():
        payload = text.split(SYSJSON, 1)[1]
        start, end = payload.find("{"), payload.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = parse_json(payload[start : end + 1], path=path, line=line)
        except InputFileError:
            continue
        size = _described_size(data, f"{Path(path).name} line {line} (:::SYSJSON)")
        if size is not None:
            return size, _helper_doubt(data)
    return None, None


_FOLDER_NODES = re.compile(r"^(\d+)x", re.IGNORECASE)


def folder_size(path: Path) -> SystemSize | None:
    """The node count an MLCommons system folder's name states (``8xSMC-H100``: 8 nodes), for
    a log in the submission layout: a witness to weigh the other sources against, never a size
    on its own (the name gives no accelerators)."""
    system_dir = Path(path).resolve().parent.parent
    if system_dir.parent.name != RESULTS_FOLDER:
        return None
    match = _FOLDER_NODES.match(system_dir.name)
    if match is None or _whole(match.group(1)) is None:
        return None
    return SystemSize(int(match.group(1)), None, None, f"folder name {system_dir.name}")


def submission_system_file(path: Path) -> Path | None:
    """``<submitter>/systems/<system>.json`` for a log at
    ``<submitter>/results/<system>/<benchmark>/<log>``, when the layout is MLCommons'."""
    benchmark_dir = Path(path).resolve().parent
    system_dir = benchmark_dir.parent
    results_dir = system_dir.parent
    if results_dir.name != RESULTS_FOLDER:
        return None
    candidate = results_dir.parent / SYSTEMS_FOLDER / f"{system_dir.name}.json"
    return candidate if candidate.is_file() else None


def submission_size(path: Path) -> tuple[SystemSize | None, str | None]:
    """Size from the submission's system description beside the results; the second value is
    a note when that file exists but cannot be read."""
    file = submission_system_file(path)
    if file is None:
        return None, None
    shown = f"{SYSTEMS_FOLDER}/{file.name}"
    try:
        if file.stat().st_size > MAX_JSON_CHARS:
            raise InputFileError(shown, "is larger than a system description can be")
        data = parse_json(file.read_text(encoding="utf-8"), path=shown)
    except OSError as error:
        return None, f"{shown} cannot be read ({error.strerror}); system size not taken from it"
    except UnicodeDecodeError:
        return None, f"{shown} is not UTF-8 text; system size not taken from it"
    except InputFileError as error:
        return None, f"{error}; system size not taken from it"
    size = _described_size(data, shown)
    if size is None:
        return None, f"{shown} states no number_of_nodes / accelerators_per_node"
    return size, None


_VALUE_OPTIONS = frozenset(
    {
        # srun
        "-n", "--ntasks", "-N", "--nodes", "--ntasks-per-node", "-c", "--cpus-per-task",
        "-p", "--partition", "-J", "--job-name", "-o", "--output", "-e", "--error", "-t",
        "--time", "-A", "--account", "-w", "--nodelist", "--gres", "--gpus", "--mpi",
        "--container-image", "--container-name", "--container-mounts", "--cpu-bind",
        # torchrun
        "--nnodes", "--nproc_per_node", "--nproc-per-node", "--node_rank", "--node-rank",
        "--master_addr", "--master-addr", "--master_port", "--master-port", "--rdzv_endpoint",
        "--rdzv-endpoint", "--rdzv_backend", "--rdzv-backend", "--rdzv_id", "--rdzv-id",
        "--max_restarts", "--max-restarts", "--log_dir", "--log-dir", "--redirects", "--tee",
        # mpirun
        "-np", "--np", "-npernode", "--npernode", "--map-by", "-H", "--host", "-x",
        "--bind-to", "--hostfile", "-hostfile",
    }
)  # fmt: skip
"""Launcher options that take a value as the next word: scanning stops at the first word that
is neither an option nor such a value, the program being launched, whose own arguments
(``train.py -n 3``) are not the launcher's."""


def _launcher_args(tokens: list[str]) -> list[str]:
    """The launcher's own arguments: ``tokens`` up to the program it launches."""
    args: list[str] = []
    expects_value = False
    for token in tokens:
        if expects_value:
            args.append(token)
            expects_value = False
        elif token.startswith("-"):
            args.append(token)
            expects_value = "=" not in token and token in _VALUE_OPTIONS
        else:
            break
    return args


def _option(tokens: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of ``names`` in ``tokens`` (``--x=v``, ``--x v``, ``-xV``)."""
    for index, token in enumerate(tokens):
        for name in names:
            if token == name and index + 1 < len(tokens):
                return tokens[index + 1]
            if name.startswith("--") and token.startswith(name + "="):
                return token.split("=", 1)[1]
            if (
                not name.startswith("--")
                and token.startswith(name)
                and token[len(name) :].isdigit()
            ):
                return token[len(name) :]
    return None


def _launch(
    tokens: list[str], one_node_by_default: bool = True
) -> tuple[int | None, int | None, int | None] | None:
    """(nodes, processes per node, processes) of one launcher command, or ``None``.

    ``one_node_by_default``: torchrun runs on one node unless told otherwise; not so for an
    echo of its arguments, which may have left ``--nnodes`` out."""
    if not tokens:
        return None
    tool = Path(tokens[0]).name
    args = _launcher_args(tokens[1:])
    if tool == "srun":
        total = _whole(_option(args, ("--ntasks", "-n")))
        per_node = _whole(_option(args, ("--ntasks-per-node",)))
        nodes = _whole(_option(args, ("--nodes", "-N")))
    elif tool in ("torchrun", "torch.distributed.run", "torch.distributed.launch"):
        # torchrun runs on one node unless told otherwise; a range ("1:4") is elastic: unknown.
        stated = _option(args, ("--nnodes",))
        nodes = (1 if one_node_by_default else None) if stated is None else _whole(stated)
        per_node = _whole(_option(args, ("--nproc_per_node", "--nproc-per-node")))
        total = None
    elif tool in ("mpirun", "mpiexec"):
        total = _whole(_option(args, ("-np", "-n", "--np")))
        per_node = _whole(_option(args, ("-npernode", "--npernode")))
        mapping = _option(args, ("--map-by",))
        if per_node is None and mapping:
            match = re.match(r"ppr:(\d+):node", mapping)
            per_node = int(match.group(1)) if match else None
        nodes = None
    else:
        return None
    if nodes is None and total is not None and per_node and total % per_node == 0:
        nodes = total // per_node
    if per_node is None and total is not None and nodes and total % nodes == 0:
        per_node = total // nodes
    if total is None and nodes is not None and per_node is not None:
        total = nodes * per_node
    if total is None and per_node is None:
        return None
    return nodes, per_node, total


def _command_tokens(text: str) -> list[str] | None:
    """The launcher command in a line, from the launcher's name on (shell words)."""
    match = _LAUNCHERS.search(text)
    if match is None:
        return None
    start = match.start(1) if match.group(1) else match.start()
    try:
        tokens = shlex.split(text[start:], posix=True)
    except ValueError:
        tokens = text[start:].split()
    if tokens and tokens[0].startswith("torch.distributed."):
        tokens[0] = tokens[0].split()[0]
    return tokens


def torchrun_arguments_size(
    line: int, text: str, path: str, accelerator: str | None = None
) -> SystemSize | None:
    """Size from an echo of torchrun's arguments (``DISTRIBUTED_ARGS=--nproc_per_node 32
    --nnodes 4 ...``): every option from the first one on; without ``--nnodes`` the node
    count stays unknown."""
    start = text.find("--")
    if start < 0:
        return None
    try:
        words = shlex.split(text[start:])
    except ValueError:
        words = text[start:].split()
    launch = _launch(["torchrun", *words], one_node_by_default=False)
    if launch is None or launch[1] is None:
        return None
    nodes, per_node, _ = launch
    source = f"{Path(path).name} line {line} (torchrun arguments: one process per accelerator)"
    return SystemSize(nodes, per_node, accelerator, source)


def launcher_size(
    lines: pl.DataFrame, path: str, accelerator: str | None = None
) -> SystemSize | None:
    """Size from the launch of the most processes among the launcher lines of a log."""
    best: tuple[int, int, tuple[int | None, int | None, int | None]] | None = None
    candidates = lines.filter(
        pl.col("text").str.contains(r"\b(srun|torchrun|mpirun|mpiexec)\s|torch\.distributed\.")
    )
    for line, text in candidates.iter_rows():
        tokens = _command_tokens(text)
        launch = _launch(tokens) if tokens else None
        if launch is None or launch[1] is None:
            continue
        # A launch of unknown node count runs at least its processes per node.
        processes = launch[2] or launch[1]
        if best is None or processes > best[0]:
            best = (processes, line, launch)
    if best is None:
        return None
    _, line, (nodes, per_node, total) = best
    source = f"{Path(path).name} line {line} (launcher: one process per accelerator)"
    size = SystemSize(nodes, per_node, accelerator, source)
    if nodes is None and total is not None:
        size = SystemSize(None, None, accelerator, source, total_stated=total)
    return size


def first_size(*sizes: SystemSize | None) -> SystemSize | None:
    """The first size that states nodes and accelerators per node, else the first one at all,
    completed by the others where they agree: a per-node count and a total give the nodes; a
    missing accelerator name is taken from a later source that names it."""
    known = [size for size in sizes if size is not None]
    if not known:
        return None
    best = next(
        (s for s in known if s.nodes is not None and s.accelerators_per_node is not None),
        known[0],
    )
    per_node = best.accelerators_per_node
    if best.nodes is None and per_node:
        total = next((s.accelerators for s in known if s.accelerators), None)
        if total is not None and total % per_node == 0:
            best = SystemSize(
                total // per_node,
                per_node,
                best.accelerator,
                f"{best.source}; {total} in all",
            )
    if best.accelerator is None:
        name = next((s.accelerator for s in known if s.accelerator), None)
        if name is not None:
            best = SystemSize(
                best.nodes, best.accelerators_per_node, name, best.source, best.total_stated
            )
    return best


def weighed_size(
    sysjson: SystemSize | None,
    doubt: str | None,
    submitted: SystemSize | None,
    launched: SystemSize | None,
    folder: SystemSize | None,
) -> SystemSize | None:
    """The size the sources of one log support, with the readings that disagree with it.

    Trusted in this order: a ``:::SYSJSON`` line that names its device and system, the
    submission's ``systems/<system>.json``, a ``:::SYSJSON`` line that names no device or an
    unknown system (a helper step that ran where the accelerators were not visible), the
    launcher lines; the folder's name is only a witness. Every other reading that states a
    part differently (nodes, accelerators per node, the total, the accelerator model) is kept
    in ``conflicts``, so the disagreement is shown, never averaged or hidden.
    """
    if doubt is not None and sysjson is not None:
        sysjson = dataclasses.replace(sysjson, source=f"{sysjson.source}, which {doubt}")
        order = [submitted, sysjson, launched]
    else:
        order = [sysjson, submitted, launched]
    best = first_size(*order)
    if best is None:
        return None
    chosen = next((size for size in order if size is not None and size.source in best.source), None)
    conflicts = tuple(
        f"{size.text()} ({size.source})"
        for size in (*order, folder)
        if size is not None and size is not chosen and _disagrees(size, best)
    )
    return dataclasses.replace(best, conflicts=conflicts) if conflicts else best


def _disagrees(a: SystemSize, b: SystemSize) -> bool:
    """Whether two readings state any part of a size differently (unknown parts agree)."""
    from trntui.core.system_size import accelerator_model

    for mine, theirs in (
        (a.nodes, b.nodes),
        (a.accelerators_per_node, b.accelerators_per_node),
        (a.accelerators, b.accelerators),
        (accelerator_model(a.accelerator), accelerator_model(b.accelerator)),
    ):
        if mine is not None and theirs is not None and mine != theirs:
            return True
    named = (a.accelerator, b.accelerator)
    # A reading that names no device at all disagrees with one that names a model.
    return any(
        name is not None and _NO_DEVICE.search(name.strip()) is not None for name in named
    ) and any(accelerator_model(name) is not None for name in named)


def _parse_local(text: str) -> dt.datetime | None:
    text = " ".join(text.split())
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def job_clock(
    lines: pl.DataFrame, path: str, first_s: float | None, last_s: float | None
) -> JobClock | None:
    """Every clock the job printed around the log, and the billed attempt: the longest.

    ``first_s`` / ``last_s`` are the log's first and last event times in seconds since 1970
    (UTC), or ``None`` when the log has no absolute clock. v4.0's local dates are placed on the
    log's clock by the one zone offset that fits (``_before_first_line``); v5.0's epoch
    seconds are on it already, so the attempt runs from the earlier of the wrapper's start and
    the log's first line to the later of its stop and the last line.
    """
    name = Path(path).name
    clocks: list[tuple[str, float]] = []
    billed: list[tuple[float, float | None, str]] = []  # (span, before first line, where)
    dated = _dated_wrapper(lines, name, first_s, last_s)
    if dated is not None:
        span, before, where = dated
        clocks.append((f"{where} (STARTING/ENDING TIMING RUN)", span))
        billed.append((span, before, where))
    epoch = _epoch_wrapper(lines, name)
    if epoch is not None:
        start, stop, where = epoch
        clocks.append((f"{where} (RUNANDTIME_START/STOP)", stop - start))
        before = None
        span = stop - start
        if first_s is not None and last_s is not None:
            # Whole seconds: a first line within that resolution before the start is at it.
            before = max(0.0, first_s - start)
            span = max(stop, last_s) - min(start, first_s + _CLOCK_RESOLUTION_S)
            span = max(span, stop - start)
        billed.append((span, before, where))
    result = _result_seconds(lines, name)
    if result is not None:
        seconds, where = result
        clocks.append((f"{where} (RESULT)", seconds))
        billed.append((seconds, None, where))
    if not billed:
        return None
    span, before, where = max(billed, key=lambda clock: clock[0])
    if before is None:
        # The RESULT line's whole seconds restate a wrapper's span: its placement holds.
        before = next((b for s, b, _ in billed if b is not None and abs(s - span) <= 1.0), None)
    text = "; ".join(what for what, _ in clocks)
    return JobClock(span, before, f"job wrapper, {text}", tuple(clocks))


def _dated_wrapper(
    lines: pl.DataFrame, name: str, first_s: float | None, last_s: float | None
) -> tuple[float, float | None, str] | None:
    """v4.0's ``STARTING/ENDING TIMING RUN AT <local date>``: (span, seconds before the log's
    first line or ``None``, which lines)."""
    starts: list[tuple[int, dt.datetime]] = []
    ends: list[tuple[int, dt.datetime]] = []
    for line, text in lines.filter(
        pl.col("text").str.contains("TIMING RUN AT", literal=True)
    ).iter_rows():
        if (match := _WRAPPER_START.search(text)) and (when := _parse_local(match.group(1))):
            starts.append((line, when))
        elif (match := _WRAPPER_END.search(text)) and (when := _parse_local(match.group(1))):
            ends.append((line, when))
    if not starts or not ends:
        return None
    start = min(when for _, when in starts)
    span = (max(when for _, when in ends) - start).total_seconds()
    if span < 0:
        return None
    before = None
    if first_s is not None and last_s is not None:
        before = _before_first_line(start, span, first_s, last_s)
    return span, before, f"{name} lines {starts[0][0]}-{max(line for line, _ in ends)}"


def _epoch_wrapper(lines: pl.DataFrame, name: str) -> tuple[float, float, str] | None:
    """v5.0's ``RUNANDTIME_START <epoch s>`` / ``RUNANDTIME_STOP <epoch s>`` (plain, or as the
    ``+ echo '...'`` twin ``set -x`` prints): (start, stop, which lines); the first start and
    the last stop."""
    starts: list[tuple[int, int]] = []
    stops: list[tuple[int, int]] = []
    for line, text in lines.filter(
        pl.col("text").str.contains(_EPOCH_MARK, literal=True)
    ).iter_rows():
        if match := _EPOCH_START.search(text):
            starts.append((line, int(match.group(1))))
        elif match := _EPOCH_STOP.search(text):
            stops.append((line, int(match.group(1))))
    if not starts or not stops:
        return None
    start = min(seconds for _, seconds in starts)
    stop = max(seconds for _, seconds in stops)
    if stop < start:
        return None
    where = f"{name} lines {min(line for line, _ in starts)}-{max(line for line, _ in stops)}"
    return float(start), float(stop), where


def _result_seconds(lines: pl.DataFrame, name: str) -> tuple[float, str] | None:
    """The ``RESULT,<BENCHMARK>,,<seconds>,...`` line's seconds (the largest, when several)."""
    results: list[tuple[int, float]] = []
    for line, text in lines.filter(
        pl.col("text").str.contains("RESULT,", literal=True)
    ).iter_rows():
        if match := _WRAPPER_RESULT.search(text):
            results.append((line, float(match.group(2))))
    if not results:
        return None
    line, seconds = max(results, key=lambda result: result[1])
    return seconds, f"{name} line {line}"


def _before_first_line(
    start: dt.datetime, span: float, first_s: float, last_s: float
) -> float | None:
    """Seconds from the wrapper's start to the log's first event, or ``None`` when the zone
    offset of the wrapper's local time is not unique."""
    naive_start = start.replace(tzinfo=dt.UTC).timestamp()
    fits = []
    for offset in range(-_MAX_ZONE_S, _MAX_ZONE_S + 1, _QUARTER_HOUR_S):
        launch = naive_start - offset
        before = first_s - launch
        after = launch + span - last_s
        if before >= -_CLOCK_RESOLUTION_S and after >= -_CLOCK_RESOLUTION_S:
            fits.append(max(0.0, before))
    return fits[0] if len(fits) == 1 else None
