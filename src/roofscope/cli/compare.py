"""``roofscope compare``: baseline against candidate, and the gate for CI.

Every analysis option applies to both sides, as ``analyze`` applies it to one profile;
``--base-gpu`` and ``--new-gpu`` name the GPU of one side where the two ran on different GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec.structs import asdict

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, stem, write_charts
from roofscope.cli.parse import Command, Opt, Pos
from roofscope.outfile import write_atomically

if TYPE_CHECKING:
    from roofscope.render.registry import Gated

EXIT_GATE_FAILED = 3


def compare(
    base: str,
    new: str,
    base_run: list[str] | None = None,
    new_run: list[str] | None = None,
    fail_if_slower: float | None = None,
    fail_if_kernel_slower: float | None = None,
    min_share: float = 0.01,
    junit_out: str | None = None,
    markdown_out: str | None = None,
    base_gpu: str | None = None,
    new_gpu: str | None = None,
    base_capture: list[str] | None = None,
    new_capture: list[str] | None = None,
    as_json: bool = False,
    **given: Any,
) -> int:
    """Baseline against candidate: per-kernel and end-to-end speedup, and a gate for CI."""
    from roofscope.checkup.engine import (  # DuckDB, numpy
        compare_sides,
        prepare,
        side_captures,
        side_gpus,
    )
    from roofscope.checkup.options import GateOptions, Spelling
    from roofscope.cli.progress import spinner
    from roofscope.render.names import full_names
    from roofscope.render.registry import Gated, renderer
    from roofscope.verify.gate import gate

    written = o.files(given)
    options = o.checkup_options(given)
    sides = side_gpus(options.gpu, base_gpu, new_gpu)
    thresholds = GateOptions(
        fail_if_slower=fail_if_slower, fail_if_kernel_slower=fail_if_kernel_slower,
        min_share=min_share,
    ).checked(Spelling.CLI)  # fmt: skip
    settings = prepare(options)
    captures = side_captures(base_capture or [], new_capture or [])
    both = compare_sides(
        [base, *(base_run or [])], [new, *(new_run or [])], settings, sides, captures,
        watch=spinner,
    )  # fmt: skip
    captured = [*(base_capture or []), *(new_capture or [])]
    cmp, keep = both.comparison, [*options.files, *captured, *both.read]
    verdict = gate(cmp, **asdict(thresholds))
    base_roof, new_roof = both.base[0].report.roofline, both.new[0].report.roofline
    gated = Gated(
        cmp, verdict, (base_roof.result.ceilings, new_roof.result.ceilings),
        (base_roof.choice.name or "baseline", new_roof.choice.name or "candidate"),
    )  # fmt: skip
    with full_names(written.whole_names):
        _write_files(
            gated, written, junit_out=junit_out, markdown_out=markdown_out, keep=keep,
            name=f"{stem(base)}-vs-{stem(new)}",
        )  # fmt: skip
        text = renderer("compare", "json" if as_json else "text").render(gated)
    sys.stdout.write(text)
    return 0 if verdict.passed else EXIT_GATE_FAILED


def _write_files(
    gated: Gated,
    written: o.Files,
    *,
    junit_out: str | None,
    markdown_out: str | None,
    name: str,
    keep: list[str],
) -> None:
    """The CI reports, the HTML page (``--html``, or ``-o DIR``'s ``NAME.roofscope.html``) and
    the charts asked for, drawn on each side's ceilings."""
    from roofscope.render.registry import CHARTS, renderer

    force = written.force
    for view, path in (("junit", junit_out), ("markdown", markdown_out), ("html", written.html)):
        path = html_path(path, written.out, name) if view == "html" else path  # -o DIR: now
        if path:
            page = renderer("compare", view).render(gated)
            write_atomically(Path(path), page, force=force, keep=keep)
    if written.svg or written.png:
        charts = {view: renderer("compare", view).render(gated) for view in CHARTS["compare"]}
        why = {"movement": "no kernel has roofline data on both sides"}
        write_charts(charts, written.svg, written.png, force=force, keep=keep, why=why)


COMPARE = Command(
    "compare",
    compare,
    (
        Pos("base", "The baseline profile (file or directory)."),
        Pos("new", "The candidate profile (file or directory)."),
        Opt(("--base-run",), "base_run", "Another run of the baseline.", "many", metavar="PATH"),
        Opt(("--new-run",), "new_run", "Another run of the candidate.", "many", metavar="PATH"),
        *o.GATE,
        Opt(("--junit",), "junit_out", "Write a JUnit XML file.", metavar="FILE"),
        Opt(("--markdown",), "markdown_out", "Write a Markdown summary (CI step).", metavar="FILE"),
        *o.SIDES,
        Opt(("--base-gpu",), "base_gpu", "The baseline's GPU, where it differs: overrides --gpu."),
        Opt(("--new-gpu",), "new_gpu", "The candidate's GPU, where it differs: overrides --gpu."),
        Opt(
            ("--base-graph-capture",),
            "base_capture",
            "The baseline's trace of its CUDA/HIP graphs' capture. Repeatable.",
            "many",
            metavar="PATH",
        ),
        Opt(
            ("--new-graph-capture",),
            "new_capture",
            "The candidate's trace of its CUDA/HIP graphs' capture. Repeatable.",
            "many",
            metavar="PATH",
        ),
        o.JSON,
        *o.FILES,
    ),
)
