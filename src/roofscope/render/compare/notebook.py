"""The inline view of a comparison in a notebook: the end-to-end line, the gate, the
waterfall and the roofline movement (see ``render.report.notebook``)."""

from __future__ import annotations

from collections.abc import Mapping

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.movement import movement_svg
from roofscope.render.charts.waterfall import waterfall_svg
from roofscope.render.compare.folds import shown_names
from roofscope.render.compare.words import (
    across_gpus_text,
    gate_reasons,
    gate_set,
    speedup_text,
)
from roofscope.render.escape import escape_text as _e
from roofscope.render.numbers import duration
from roofscope.render.page import FRAGMENT_STYLE, chart_row
from roofscope.verify.compare import Comparison
from roofscope.verify.gate import Verdict


def compare_fragment(
    cmp: Comparison,
    verdict: Verdict,
    ceilings: tuple[tuple[Ceiling, ...], tuple[Ceiling, ...]],
    gpus: tuple[str, str],
) -> str:
    """End-to-end speedup, the gate's verdict, the waterfall and the roofline movement."""
    e = cmp.end_to_end
    line = (
        f"kernel time {duration(e.kernel_ns[0])} → {duration(e.kernel_ns[1])}: "
        f"{speedup_text(e.speedup, e.interval)}"
    )
    movement = movement_svg(cmp, ceilings[0], ceilings[1], gpus)
    return "".join([
        f'<div class="roofscope">{FRAGMENT_STYLE}',
        _across(cmp),
        f"<p><b>roofscope compare</b> · {_e(cmp.base_label)} → {_e(cmp.new_label)}: "
        f"{_e(line)}</p>",
        _gate(verdict, shown_names(cmp)),
        chart_row(waterfall_svg(cmp), movement),
        "</div>",
    ])  # fmt: skip


def _across(cmp: Comparison) -> str:
    """Said first where base and new ran on different GPUs."""
    text = across_gpus_text(cmp)
    return "" if text is None else f"<p><b>{_e(text)}</b></p>"


def _gate(verdict: Verdict, names: Mapping[str, str]) -> str:
    """The verdict and its reasons; where no gate was set, how to set one (``gate()``)."""
    if not gate_set(verdict):
        return '<p class="muted">Gate: none set (Comparison.gate(fail_if_slower=PCT, ...))</p>'
    reasons = "".join(f"<li>{_e(r)}</li>" for r in gate_reasons(verdict, names))
    return f"<p>Gate: {'PASS' if verdict.passed else 'FAIL'}</p><ul>{reasons}</ul>"
