"""A run's utilization, compile telemetry, MFU and verdict as lines of text.

Shared by ``trntui verdict`` and the run detail screen, so both say the same thing the same way.
"""

from __future__ import annotations

from trntui.core.compile_telemetry import CompileSummary
from trntui.core.mfu import Mfu
from trntui.core.utilization import UtilizationFigure, UtilizationReport
from trntui.core.verdict import Verdict


def figure_text(figure: UtilizationFigure | None) -> str:
    if figure is None:
        return "no steady window"
    if figure.mean_pct is None:
        return f"{figure.window}: no measured sample"
    text = (
        f"{figure.window} {figure.mean_pct:.0f}% "
        f"({figure.devices} devices {figure.min_device_pct:.0f}-{figure.max_device_pct:.0f}%, "
        f"{figure.covered_s:.0f} s measured, {figure.gap_s:.0f} s gaps)"
    )
    if figure.unused_devices and figure.instance_pct is not None:
        text += (
            f", over all {figure.devices_on_instance} of the instance "
            f"{figure.instance_pct:.0f}% ({figure.unused_devices} never used)"
        )
    return text


def telemetry_lines(
    utilization: UtilizationReport | None,
    compile: CompileSummary | None,
    verdict: Verdict,
    mfu: Mfu,
) -> list[str]:
    """Headline first, then the evidence; unknown figures say why they are unknown."""
    lines = [verdict.headline]
    if utilization is None:
        lines.append("  utilization: no capture attached")
    else:
        whole = utilization.whole_run
        lines.append(f"  utilization: {figure_text(utilization.steady)}; {figure_text(whole)}")
        period = "unknown" if whole.period_s is None else f"{whole.period_s:g} s"
        lines.append(f"    method: {whole.method}; period {period}")
    if compile is not None:
        lines.append(
            f"  compile: {compile.compilations} compiled, {compile.cache_hits} cache hits, "
            f"{compile.failures} failed"
        )
    mfu_text = (
        f"{mfu.value:.1%}"
        if mfu.value is not None
        else "unknown (missing: " + "; ".join(mfu.missing) + ")"
    )
    lines.append(f"  MFU ({mfu.label}): {mfu_text}  [{mfu.formula}]")
    if mfu.value is not None:
        lines.append(f"    = {mfu.worked()}")
    if mfu.implausible is not None:
        lines.append(f"    IMPLAUSIBLE: {mfu.implausible}")
    for share in verdict.shares:
        value = f"{share.share:.0%}" if share.share is not None else "not measured"
        lines.append(f"  {share.limit!s:36} {value}")
        lines += [f"      {line}" for line in share.evidence]
    lines += [f"  note: {note}" for note in verdict.notes]
    return lines
