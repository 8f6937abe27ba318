"""The comparison in the terminal and as JSON (a ``compare`` document, schema version 1)."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from roofscope.render.columns import NameCell, fitted_table, terminal_width, wrapped
from roofscope.render.compare.folds import fold_text, folds, shown_names
from roofscope.render.compare.levels import (
    by_operator_note,
    categories_json,
    categories_section,
    interval_dict,
    matched_words,
    operators_json,
    operators_section,
)
from roofscope.render.compare.words import (
    NO_GATE,
    across_gpus_text,
    block_reason,
    check_reason,
    end_to_end_text,
    gate_reasons,
    gate_set,
    placement_text,
    share_text,
    speedup_cell,
    spread_unknown,
)
from roofscope.render.names import short_names
from roofscope.render.numbers import count, duration, number, pct, ratio, seconds
from roofscope.render.struct_dict import asdict
from roofscope.verify.compare import Comparison, Interval, KernelChange, Movement
from roofscope.verify.gate import Verdict
from roofscope.verify.quality import SideWarning
from roofscope.version import __version__

SCHEMA_VERSION = "1"
ONE_SIDE_NAMED = 3  # kernels named in the line of those placed on one side only


def render_compare_text(
    cmp: Comparison, verdict: Verdict, *, top: int = 20, width: int | None = None
) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or terminal_width(),
        no_color=True,
        highlight=False,
        emoji=False,
        markup=False,
    )
    e = cmp.end_to_end
    wrapped(
        console,
        f"roofscope {__version__} compare · baseline {cmp.base_label} "
        f"({count(cmp.runs[0], 'run')}) vs {cmp.new_label} ({count(cmp.runs[1], 'run')})",
        "",
        "  ",
        style="bold",
    )
    if (across := across_gpus_text(cmp)) is not None:
        wrapped(console, across, "", "  ", style="bold")
    wrapped(
        console,
        f"End to end: kernel time {duration(e.kernel_ns[0])} -> {duration(e.kernel_ns[1])}: "
        + end_to_end_text(cmp)
        + (f" ({e.interval.method})" if e.interval else ""),
        "",
        "  ",
    )
    if e.wall_speedup is not None:
        amdahl = (
            f"; Amdahl: the kernel changes alone imply {ratio(e.implied_wall_speedup)} on the wall"
            if e.implied_wall_speedup is not None
            else ""
        )
        wrapped(
            console,
            f"Wall {duration(e.wall_ns[0])} -> {duration(e.wall_ns[1])} "
            f"({ratio(e.wall_speedup)}); idle {duration(e.idle_ns[0])} -> "
            f"{duration(e.idle_ns[1])}{amdahl}",
            "",
            "  ",
        )
    names = shown_names(cmp)
    _gate(console, verdict, names)
    headers = ["Kernel", "Base", "New", "Speedup", "Share of change", "Matched"]
    matched = [k for k in cmp.kernels if k.how in ("name", "similarity", "operator")][:top]
    bare = spread_unknown(cmp)  # said once, after the end-to-end speedup
    rows = [(_row(k, bare), None) for k in matched]
    # narrow: how each pair was matched goes first, then its share of the change
    console.print(fitted_table(headers, rows, width=console.width, name=0, drop=(5, 4)))
    if note := by_operator_note(cmp):
        wrapped(console, note, "", "  ")
    _added_removed(console, cmp)
    categories_section(console, cmp)
    operators_section(console, cmp)
    _movement(console, cmp, top)
    _warnings(console, cmp, names)
    return buf.getvalue()


def _added_removed(console: Console, cmp: Comparison) -> None:
    for how, title in (("removed", "Removed (baseline only)"), ("added", "Added (candidate only)")):
        items = [k for k in cmp.kernels if k.how == how]
        if items:
            console.print(f"{title}:")
            for k, name in zip(items, short_names([k.name for k in items]), strict=True):
                t = k.total_ns[0] if how == "removed" else k.total_ns[1]
                calls = count(k.calls[0] or k.calls[1], "call")
                wrapped(console, f"{name}: {duration(t)}, {calls}", "  ", "    ")


def _movement(console: Console, cmp: Comparison, top: int) -> None:
    """Each kernel placed on both sides, as it moved; those placed on one side only, one line
    a side (their name and efficiency there), since they did not move on the chart."""
    moved = [k for k in cmp.kernels if k.movement is not None][:top]
    if not moved:
        return
    console.print("Roofline movement (before -> after):")
    both = [k for k in moved if _placed(k.movement) == (True, True)]
    for k, name in zip(both, short_names([k.name for k in both]), strict=True):
        m = k.movement
        assert m is not None
        wrapped(
            console,
            f"{name}: intensity {number(m.intensity[0])} -> {number(m.intensity[1])} FLOP/B "
            f"({m.level}); {placement_text(m)}",
            "  ",
            "    ",
        )
    for side, word in ((1, "after"), (0, "before")):
        one = [k for k in moved if _placed(k.movement)[side] and not _placed(k.movement)[1 - side]]
        if one:
            wrapped(console, one_side_text(one, side, word), "  ", "    ")


def _placed(m: Movement | None) -> tuple[bool, bool]:
    return (False, False) if m is None else (m.bound[0] is not None, m.bound[1] is not None)


def one_side_text(kernels: list[KernelChange], side: int, word: str) -> str:
    """``N kernels placed after only (no work known before): NAME 94.7% of its compute
    roof, ...``: the first few named, with how many more."""
    shown = kernels[:ONE_SIDE_NAMED]
    listed = []
    for k, name in zip(shown, short_names([k.name for k in shown]), strict=True):
        m = k.movement
        assert m is not None
        listed.append(f"{name} {pct(m.efficiency[side])} of its {m.bound[side]} roof")
    more = len(kernels) - ONE_SIDE_NAMED
    tail = f"; {more} more" if more > 0 else ""
    other = "before" if word == "after" else "after"
    return (
        f"{count(len(kernels), 'kernel')} placed {word} only (no work known {other}): "
        f"{'; '.join(listed)}{tail}"
    )


def _gate(console: Console, verdict: Verdict, names: Mapping[str, str]) -> None:
    """The gate's verdict, only where a threshold was given (or a side fails it); each
    kernel named as the table names it, on one line."""
    if not gate_set(verdict):
        console.print(f"Gate: {NO_GATE}")
        return
    console.print(Text(f"Gate: {'PASS' if verdict.passed else 'FAIL'}", style="bold"))
    for c in verdict.checks:
        if c.failed or c.name == "end-to-end":
            wrapped(console, f"{'x' if c.failed else 'ok'} {check_reason(c, names)}", "  ", "    ")
    for w in verdict.blocked_by:
        wrapped(console, f"x {block_reason(w)}", "  ", "    ")


def _warnings(console: Console, cmp: Comparison, names: Mapping[str, str]) -> None:
    """Each side's data-quality warnings, after the numbers they qualify, folded by kind."""
    if not cmp.warnings:
        return
    console.print("Warnings (data quality):")
    for f in folds(cmp.warnings):
        mark = " (fails the gate)" if f.blocks_gate else ""
        wrapped(console, f"! {f.side}: {fold_text(f, names)}{mark}", "  ", "    ")


def _row(k: KernelChange, bare: bool) -> list[str | NameCell]:
    share = share_text(k.attribution)
    how = f"similar {k.score:.2f}" if k.how == "similarity" and k.score else matched_words(k.how)
    return [
        NameCell((k.name,) if k.base == k.new else (k.base or k.name, k.new or k.name)),
        duration(k.total_ns[0]),
        duration(k.total_ns[1]),
        speedup_cell(k.speedup, k.interval, bare),
        share,
        how,
    ]


def render_compare_json(cmp: Comparison, verdict: Verdict) -> str:
    return (
        json.dumps(compare_dict(cmp, verdict), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )


def compare_dict(cmp: Comparison, verdict: Verdict) -> dict[str, Any]:
    e = cmp.end_to_end
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "compare",
        "tool": {"name": "roofscope", "version": __version__},
        "base": {"label": cmp.base_label, "runs": cmp.runs[0]},
        "new": {"label": cmp.new_label, "runs": cmp.runs[1]},
        "devices": {
            "base": cmp.devices[0],
            "new": cmp.devices[1],
            "across_gpus": cmp.across_gpus,
            "note": across_gpus_text(cmp),
        },
        "end_to_end": {
            "kernel_time_s": [e.kernel_ns[0] / 1e9, e.kernel_ns[1] / 1e9],
            "wall_s": [seconds(e.wall_ns[0]), seconds(e.wall_ns[1])],
            "idle_s": [seconds(e.idle_ns[0]), seconds(e.idle_ns[1])],
            "speedup": e.speedup,
            "interval": _interval(e.interval),
            "wall_speedup": e.wall_speedup,
            "implied_wall_speedup": e.implied_wall_speedup,
        },
        "kernels": [_kernel(k) for k in cmp.kernels],
        "added": list(cmp.matching.added),
        "removed": list(cmp.matching.removed),
        "warnings": [_warning(w) for w in cmp.warnings],
        "categories": categories_json(cmp),
        **({} if cmp.operators is None else {"operators": operators_json(cmp.operators)}),
        "gate": {
            "passed": verdict.passed,
            "reasons": gate_reasons(verdict),
            "blocked_by": [_warning(w) for w in verdict.blocked_by],
            "checks": [
                {
                    "name": c.name,
                    "slower_pct": c.slower_pct,
                    "threshold_pct": c.threshold_pct,
                    "beyond_noise": c.beyond_noise,
                    "failed": c.failed,
                    "reason": check_reason(c),
                }
                for c in verdict.checks
            ],
        },
    }


def _warning(w: SideWarning) -> dict[str, Any]:
    return {**asdict(w), "blocks_gate": w.blocks_gate}


def _interval(i: Interval | None) -> dict[str, Any] | None:
    return interval_dict(i)


def _kernel(k: KernelChange) -> dict[str, Any]:
    m = k.movement
    return {
        "base_name": k.base,
        "new_name": k.new,
        "matched_by": k.how,
        "score": k.score,
        "calls": list(k.calls),
        "total_s": [k.total_ns[0] / 1e9, k.total_ns[1] / 1e9],
        "mean_s": [seconds(k.mean_ns[0]), seconds(k.mean_ns[1])],
        "base_share": k.base_share,
        "speedup": k.speedup,
        "interval": _interval(k.interval),
        "delta_s": k.delta_ns / 1e9,
        "attribution": k.attribution,
        "roofline": None
        if m is None
        else {
            "level": m.level,
            "intensity": list(m.intensity),
            "achieved_flops_s": list(m.achieved_flops_s),
            "achieved_bytes_s": list(m.achieved_bytes_s),
            # efficiencies side by side only where both are of the same kind of roof
            "efficiency": list(m.efficiency) if m.same_bound else [None, None],
            "bound": list(m.bound),
            "placements": [
                {"bound": b, "efficiency": e} for b, e in zip(m.bound, m.efficiency, strict=True)
            ],
        },
    }
