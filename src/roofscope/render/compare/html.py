"""The comparison as one offline HTML page: the gate, the waterfall beside the roofline
movement, and every kernel's change. Kernel names are escaped as everywhere else."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.movement import movement_svg
from roofscope.render.charts.waterfall import waterfall_svg
from roofscope.render.compare.folds import fold_text, folds, shown_names
from roofscope.render.compare.levels import (
    by_operator_note,
    categories_html,
    matched_words,
    operators_html,
)
from roofscope.render.compare.words import (
    NO_GATE,
    across_gpus_text,
    end_to_end_text,
    gate_reasons,
    gate_set,
    share_text,
    speedup_cell,
    spread_unknown,
)
from roofscope.render.escape import escape_text as _e
from roofscope.render.layout import number, stacked
from roofscope.render.names import name_cell
from roofscope.render.numbers import duration
from roofscope.render.page import page
from roofscope.verify.compare import Comparison
from roofscope.verify.gate import Verdict


def _compare_warnings(cmp: Comparison, names: Mapping[str, str]) -> str:
    """Each side's data-quality warnings folded by kind, as ``compare``'s other outputs
    list them."""
    if not cmp.warnings:
        return ""
    items = "".join(
        f"<li>{_e(f.side)}: {_e(fold_text(f, names))}</li>" for f in folds(cmp.warnings)
    )
    return f'<h2>Data-quality warnings</h2><ul id="warnings">{items}</ul>'


def _across(cmp: Comparison) -> str:
    """Said first where base and new ran on different GPUs."""
    text = across_gpus_text(cmp)
    return "" if text is None else f'<p id="across-gpus" class="validity">{_e(text)}</p>'


def _gate_line(verdict: Verdict) -> str:
    """The verdict, only where a gate was set (a threshold, or a side that fails it)."""
    if not gate_set(verdict):
        return f'<p class="muted">Gate: {_e(NO_GATE)}</p>'
    word = "PASS" if verdict.passed else "FAIL"
    return f'<p class="{word.lower()}">Gate: {word}</p>'


def render_compare_html(
    cmp: Comparison,
    verdict: Verdict,
    ceilings: Sequence[Ceiling] = (),
    new_ceilings: Sequence[Ceiling] = (),
    gpus: tuple[str, str] = ("baseline", "candidate"),
) -> str:
    e, names = cmp.end_to_end, shown_names(cmp)
    body = [
        f"<h1>roofscope compare · {_e(cmp.base_label)} → {_e(cmp.new_label)}</h1>",
        _across(cmp),
        _gate_line(verdict),
        "<ul>" + "".join(f"<li>{_e(r)}</li>" for r in gate_reasons(verdict, names)) + "</ul>",
        f"<p>End to end (kernel time): {duration(e.kernel_ns[0])} → "
        f"{duration(e.kernel_ns[1])}: {_e(end_to_end_text(cmp))}</p>",
        "<h2>Contributions to the change, and roofline movement</h2>",
        stacked(
            waterfall_svg(cmp),
            movement_svg(cmp, ceilings, new_ceilings, gpus)
            or '<p class="muted">No kernel has roofline data on both sides.</p>',
        ),
        "<h2>Kernels</h2>",
    ]
    rows, bare = [], spread_unknown(cmp)
    for i, k in enumerate(cmp.kernels):
        share = share_text(k.attribution)
        rows.append(
            f'<tr data-k="{i}" data-name="{_e(k.name)}">{name_cell(k.name, names[k.name])}'
            f"<td>{_e(matched_words(k.how))}</td>"
            f"{number(duration(k.total_ns[0]))}{number(duration(k.total_ns[1]))}"
            f"<td>{_e(speedup_cell(k.speedup, k.interval, bare))}</td>{number(share)}</tr>"
        )
    added = [k.name for k in cmp.kernels if k.how == "added"]
    removed = [k.name for k in cmp.kernels if k.how == "removed"]
    for title, listed in (("Added (candidate only)", added), ("Removed (baseline only)", removed)):
        if listed:
            body.append(f"<p>{title}: " + ", ".join(_e(n) for n in listed) + "</p>")
    body.append(
        '<table id="changes"><tr><th>Kernel</th><th>Matched</th><th>Base</th><th>New</th>'
        "<th>Speedup</th><th>Share of change</th></tr>" + "".join(rows) + "</table>"
    )
    if note := by_operator_note(cmp):
        body.append(f'<p id="by-operator">{_e(note)}</p>')
    body += [categories_html(cmp), operators_html(cmp), _compare_warnings(cmp, names)]
    return page(f"roofscope compare · {cmp.base_label} → {cmp.new_label}", body)
