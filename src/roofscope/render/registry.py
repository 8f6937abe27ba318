"""Every output roofscope writes, by the kind of result it renders and its name: the one
registry the CLI and the API ask (``renderer("report", "html").render(report)``).

A renderer is small (:class:`Renderer`): its name, the suffix of the file it writes, and
``render(result)``. Each view module loads only when its renderer renders, so asking the
registry costs nothing a command does not use (``--help`` loads no view).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar, overload

import msgspec

from roofscope.errors import UsageError

if TYPE_CHECKING:
    from roofscope.catalogue.ceilings import Ceiling
    from roofscope.report import Report
    from roofscope.verify.compare import Comparison
    from roofscope.verify.gate import Verdict

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", bound=str | bytes, covariant=True)
Kind = Literal["report", "compare", "chart"]


class Renderer(Protocol[In, Out]):
    """One output of one kind of result."""

    @property
    def name(self) -> str: ...
    @property
    def suffix(self) -> str: ...  # of the file it writes: ".html", ".svg", ".png"
    def render(self, result: In) -> Out: ...


class Gated(msgspec.Struct, frozen=True):
    """What the comparison's outputs render: the comparison, the gate's verdict, and the
    ceilings and GPU of each side (baseline, candidate) that the roofline movement is drawn on."""

    comparison: Comparison
    verdict: Verdict
    ceilings: tuple[tuple[Ceiling, ...], tuple[Ceiling, ...]] = ((), ())
    gpus: tuple[str, str] = ("baseline", "candidate")


class Options(msgspec.Struct, frozen=True):
    """What a view may be asked: the rows it shows (None: its own default) and colour (None:
    only on a terminal)."""

    top: int | None = None
    color: bool | None = None


NO_OPTIONS = Options()


class _View(msgspec.Struct, frozen=True):
    """A renderer of the registry: the kind of result it renders, its name and suffix."""

    kind: ClassVar[Kind]
    name: ClassVar[str]
    suffix: ClassVar[str]
    options: Options = NO_OPTIONS

    def render(self, result: Any) -> str | bytes:
        raise NotImplementedError


# -- the check-up of one profile ----------------------------------------------------------------


class _ReportText(_View, frozen=True):
    kind, name, suffix = "report", "text", ".txt"

    def render(self, result: Report) -> str:
        from roofscope.render.report.text import render_text  # rich: only for the terminal

        top, color = self.options.top, self.options.color
        return render_text(result, top=20 if top is None else top, color=color)


class _ReportJson(_View, frozen=True):
    kind, name, suffix = "report", "json", ".json"

    def render(self, result: Report) -> str:
        from roofscope.render.report.json import render_json

        return render_json(result)


class _ReportHtml(_View, frozen=True):
    kind, name, suffix = "report", "html", ".html"

    def render(self, result: Report) -> str:
        from roofscope.render.report.html import render_html

        return render_html(result)


class _ReportNotebook(_View, frozen=True):
    kind, name, suffix = "report", "notebook", ".html"

    def render(self, result: Report) -> str:
        from roofscope.render.report.notebook import report_fragment

        return report_fragment(result)


class _Hotspots(_View, frozen=True):
    kind, name, suffix = "report", "hotspots", ".svg"

    def render(self, result: Report) -> str:
        from roofscope.render.charts.hotspots import hotspot_svg

        return hotspot_svg(result, 20 if self.options.top is None else self.options.top)


class _Roofline(_View, frozen=True):
    kind, name, suffix = "report", "roofline", ".svg"

    def render(self, result: Report) -> str:
        from roofscope.render.charts.roofline import roofline_svg

        return roofline_svg(result)


class _Timeline(_View, frozen=True):
    kind, name, suffix = "report", "timeline", ".svg"

    def render(self, result: Report) -> str:
        from roofscope.render.charts.timeline import timeline_svg

        return timeline_svg(result)


# -- baseline against candidate -----------------------------------------------------------------


class _CompareText(_View, frozen=True):
    kind, name, suffix = "compare", "text", ".txt"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.out import render_compare_text

        return render_compare_text(result.comparison, result.verdict)


class _CompareJson(_View, frozen=True):
    kind, name, suffix = "compare", "json", ".json"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.out import render_compare_json

        return render_compare_json(result.comparison, result.verdict)


class _CompareHtml(_View, frozen=True):
    kind, name, suffix = "compare", "html", ".html"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.html import render_compare_html

        (base, new), gpus = result.ceilings, result.gpus
        return render_compare_html(result.comparison, result.verdict, base, new, gpus)


class _CompareNotebook(_View, frozen=True):
    kind, name, suffix = "compare", "notebook", ".html"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.notebook import compare_fragment

        return compare_fragment(result.comparison, result.verdict, result.ceilings, result.gpus)


class _Markdown(_View, frozen=True):
    kind, name, suffix = "compare", "markdown", ".md"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.gate import markdown

        return markdown(result.comparison, result.verdict)


class _Junit(_View, frozen=True):
    kind, name, suffix = "compare", "junit", ".xml"

    def render(self, result: Gated) -> str:
        from roofscope.render.compare.gate import junit

        return junit(result.comparison, result.verdict)


class _Waterfall(_View, frozen=True):
    kind, name, suffix = "compare", "waterfall", ".svg"

    def render(self, result: Gated) -> str:
        from roofscope.render.charts.waterfall import waterfall_svg

        return waterfall_svg(result.comparison)


class _Movement(_View, frozen=True):
    kind, name, suffix = "compare", "movement", ".svg"

    def render(self, result: Gated) -> str:
        from roofscope.render.charts.movement import movement_svg

        (base, new), gpus = result.ceilings, result.gpus
        return movement_svg(result.comparison, base, new, gpus)


# -- a chart's SVG as an image ------------------------------------------------------------------


class _Png(_View, frozen=True):
    kind, name, suffix = "chart", "png", ".png"

    def render(self, result: str) -> bytes:
        from roofscope.render.charts.png import png_bytes  # vl-convert: only for --png

        return png_bytes(result)


VIEWS: tuple[type[_View], ...] = (
    *(_ReportText, _ReportJson, _ReportHtml, _ReportNotebook, _Hotspots, _Roofline, _Timeline),
    *(_CompareText, _CompareJson, _CompareHtml, _CompareNotebook, _Markdown, _Junit),
    *(_Waterfall, _Movement, _Png),
)
REGISTRY: dict[tuple[Kind, str], type[_View]] = {(v.kind, v.name): v for v in VIEWS}
ADDED: dict[tuple[Kind, str], Renderer[Any, Any]] = {}  # outputs made outside roofscope
CHARTS: dict[Kind, tuple[str, ...]] = {
    "report": ("hotspots", "roofline", "timeline"),  # what --svg and --png write
    "compare": ("waterfall", "movement"),
}


@overload
def renderer(
    kind: Literal["report"], name: str, options: Options = ...
) -> Renderer[Report, str]: ...
@overload
def renderer(
    kind: Literal["compare"], name: str, options: Options = ...
) -> Renderer[Gated, str]: ...
@overload
def renderer(kind: Literal["chart"], name: str, options: Options = ...) -> Renderer[str, bytes]: ...
def renderer(kind: Kind, name: str, options: Options = NO_OPTIONS) -> Renderer[Any, Any]:
    """The renderer of ``kind``'s output ``name``; a name it does not know is an error that
    lists the ones it does."""
    if (kind, name) in ADDED:
        return ADDED[kind, name]
    view = REGISTRY.get((kind, name))
    if view is None:
        known = ", ".join(sorted(n for k, n in (*REGISTRY, *ADDED) if k == kind))
        raise UsageError(f"no {kind} renderer named {name!r}; known: {known}")
    return view(options)


def add(kind: Kind, output: Renderer[Any, Any]) -> None:
    """Register an output made outside roofscope (docs/ARCHITECTURE.md, "Add an output"); a
    name the kind has already is an error, never a silent replacement."""
    if (kind, output.name) in REGISTRY or (kind, output.name) in ADDED:
        raise UsageError(f"a {kind} renderer named {output.name!r} exists; choose another name")
    ADDED[kind, output.name] = output


def report_dict(report: Report) -> dict[str, Any]:
    """The ``analyze --json`` document before it is written (the API's ``to_dict``)."""
    from roofscope.render.report.json import to_dict

    return to_dict(report)


def compare_dict(gated: Gated) -> dict[str, Any]:
    """The ``compare --json`` document before it is written."""
    from roofscope.render.compare.out import compare_dict as document

    return document(gated.comparison, gated.verdict)
