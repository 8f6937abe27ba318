"""The roofline part of the terminal view: device and ceilings with sources, one row per kernel."""

from __future__ import annotations

from rich.console import Console

from roofscope.analysis.roofline import Bound, KernelRoofline, PlacedBy
from roofscope.catalogue import vector_rates
from roofscope.catalogue.ceilings import is_integer
from roofscope.render.columns import NameCell, fitted_table, wrapped
from roofscope.render.device_choice import detected_from
from roofscope.render.numbers import count, number, pct, si
from roofscope.render.report.sources import document
from roofscope.report import Report


def roofline_section(console: Console, report: Report, top: int) -> None:
    section = report.roofline
    r, choice = section.result, section.choice
    if not r.ceilings:
        if section.problem:
            wrapped(console, section.problem[0].upper() + section.problem[1:] + ".", "", "  ")
        return
    said = {"user": "given by the user", "measured": "measured", "catalogue": "catalogue"}
    given = " and ".join(
        said[o] for o in sorted({c.origin for c in r.ceilings}, key=list(said).index)
    )
    where = f"ceilings {given}"
    if choice.device is not None or choice.attribute_ceilings:
        where = f"{choice.name} ({choice.arch}, {detected_from(choice)})"
    scope = f" · per {choice.scope.upper()}" if choice.scope != "device" else ""
    ops = "IOP" if r.main_ceiling and is_integer(r.main_ceiling) else "FLOP"
    ridge = ", ".join(f"{number(ai)} {ops}/B ({lvl})" for lvl, ai in r.ridge.items())
    wrapped(console, f"Roofline · {where}{scope}", "", "  ", style="bold")
    if section.problem:
        wrapped(console, f"{section.problem}.", "  ", "    ")
    if r.main_ceiling and ridge:
        console.print(f"  ridge point of {r.main_ceiling}: {ridge}")
    if line := work_line(report):
        wrapped(console, line, "  ", "    ")
    by_source: dict[str, list[str]] = {}
    for c in r.ceilings:  # "measured: roofline.csv (HBMBw)": one line per file, not per column
        base = document(c.source)  # a catalogue value: its document, not where in it
        if base == c.source and base.endswith(")"):
            base = base.rsplit(" (", 1)[0]
        base = vector_rates.SHORT if c.source.startswith(vector_rates.PREFIX) else base
        by_source.setdefault(base, []).append(f"{c.name} {si(c.value, c.unit_of_value)}")
    for source, shown in by_source.items():
        wrapped(console, f"ceilings: {', '.join(shown)}", "  ", "    ")
        wrapped(console, f"source: {source}", "    ", "      ", style="dim")
    if not r.kernels:
        return
    headers = ["Kernel", "AI [FLOP/B]", "Achieved", "Attainable", "Eff.", "Bound", "Ceiling"]
    rows = [(_row(k), "bold red" if k.beyond_hardware else None) for k in r.kernels[:top]]
    # narrow: the ceiling's name goes first (the bound says the kind), then the attainable
    console.print(fitted_table(headers, rows, width=console.width, name=0, drop=(6, 3)))
    if any(k.placed_by is PlacedBy.IOPS for k in r.kernels[:top]):
        console.print("  kernels on an integer ceiling: AI in IOP/B, rates in IOP/s")


def work_line(report: Report) -> str | None:
    """Where the kernels' work came from, when the trace's operators gave it: their shapes
    (compulsory bytes, the assumption for fp32 GEMMs) or a compiler's annotations."""
    kernels = report.roofline.result.kernels
    shapes = sum(k.work_source.startswith("shapes") for k in kernels)
    noted = sum(k.work_source.startswith("annotations") for k in kernels)
    if not shapes and not noted:
        return None
    ops = report.operators
    fp32 = ops.fp32_matmul if ops is not None else "fp32-vector"
    parts = []
    if shapes:
        parts.append(
            f"{count(shapes, 'kernel')} from its operators' recorded shapes (FLOPs by the "
            f"operator's formula, bytes as each operand read and the output written once; fp32 "
            f"GEMMs under {fp32}: --fp32-matmul)"
        )
    if noted:
        parts.append(f"{count(noted, 'kernel')} from the compiler's kernel_flop/kernel_num_gb")
    return "work: " + "; ".join(parts)


def _row(k: KernelRoofline) -> list[str | NameCell]:
    level = k.limiting_level or "hbm"
    ai = k.intensity.get(level)
    if k.placed_by is PlacedBy.BANDWIDTH:
        achieved = si(k.achieved_bytes_s.get(level), "B/s")
        ceiling = f"{level} bandwidth" if k.limiting_level else "-"
    else:
        achieved = si(k.achieved_flops_s, _ops(k))
        ceiling = k.ceiling or (f"no {k.missing_ceiling} ceiling" if k.missing_ceiling else "-")
    eff = pct(k.efficiency)
    bound = k.bound or ("unknown (no byte counters)" if k.no_bound else "-")
    if k.bound is Bound.MEMORY and k.limiting_level:
        bound = f"memory ({k.limiting_level})"
    return [
        NameCell((k.name,)),
        number(ai),
        achieved,
        si(k.attainable_flops_s, _ops(k)),
        eff,
        bound,
        ceiling,
    ]


def _ops(k: KernelRoofline) -> str:
    return "IOP/s" if k.placed_by is PlacedBy.IOPS else "FLOP/s"
