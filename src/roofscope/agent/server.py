"""The MCP server: the tools of ``tools.py``, the last report as resources, the prompt, over
stdio or streamable HTTP on loopback. Every tool only reads (``readOnlyHint``); none runs a
profiler; a RoofscopeError becomes a tool error whose text is the line the command prints."""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult, ListRootsResult, TextContent, ToolAnnotations
from pydantic import Field

from roofscope.agent.pages import DEFAULT_LIMIT
from roofscope.agent.prompt import diagnose_text
from roofscope.agent.roots import Roots, from_uris
from roofscope.agent.worker import Engine, Local
from roofscope.version import __version__

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
Path = Annotated[str, Field(description="A profile file or folder under the server's roots.")]
Limit = Annotated[int, Field(description="Items per page (1 to 100).", ge=1, le=100)]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page.")]
Gpu = Annotated[str | None, Field(description="The GPU, where the profile does not say it.")]
KernelRe = Annotated[str | None, Field(description="Keep kernels whose name matches.")]
Device = Annotated[int | None, Field(description="Keep this device only.")]
Start = Annotated[float, Field(description="Window start, s after the first kernel began.")]
End = Annotated[float | None, Field(description="Window end, s after the first kernel began.")]
Answer = dict[str, Any]


def build(roots: list[str], engine: Engine | None = None) -> MCPServer:
    """The server; ``roots``: the ``--root`` folders (none: the client's MCP roots, else the
    folder the server was started in); ``engine``: where the calls are answered (by default
    in this process)."""
    server = MCPServer("roofscope", version=__version__, log_level="WARNING",
                       instructions=INSTRUCTIONS)  # fmt: skip
    session = _SERVED[id(server)] = _Sessions(roots, engine)
    _tools(server, session)
    _resources(server, session)
    server.prompt("diagnose", description="Diagnose this profile: the check-up's four steps.")(
        diagnose_text
    )
    return server


INSTRUCTIONS = (
    "roofscope reads GPU profiler output (rocprof, rocprofv3, rocprof-compute, Nsight Compute, "
    "Nsight Systems, PyTorch/Kineto) and gives a check-up: baseline, hotspots, counters and "
    "roofline diagnosis, before/after compare with a gate. Start with `analyze`."
)


class _Sessions:
    """Where each call is answered, and under which roots: ``--root``, else the client's
    (asked at each call through the SDK's ``ListRoots`` resolver), else the folder the server
    was started in."""

    def __init__(self, roots: list[str], engine: Engine | None) -> None:
        self.given = roots
        self.folders = [str(f) for f in Roots.of(roots or ["."]).folders]
        self.engine = engine or Local(self.folders)

    def ask(self, ctx: Context) -> ListRoots | None:
        """The resolver: ask the client for its roots when it has some and none were given."""
        caps = ctx.client_capabilities
        asked = not self.given and caps is not None and caps.roots is not None
        return ListRoots() if asked else None

    async def answer(
        self, what: str, granted: ListRootsResult | None, **args: Any
    ) -> CallToolResult:
        """The tool's answer as JSON text and as structured content, or a tool error whose
        text is the one line the command prints, or says roofscope's own fault (the SDK would
        say only "Error executing tool" of a raised error)."""
        kind, said = self._reply(what, granted, args)
        if kind != "ok":
            return CallToolResult(content=[TextContent(type="text", text=said)], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=said)],
                              structured_content=json.loads(said))  # fmt: skip

    def read(self, what: str) -> str:
        """A resource's text, or a ResourceError the client reads (no report yet)."""
        kind, said = self._reply(what, None, {})
        if kind != "ok":
            raise ResourceError(said)
        return said

    def _reply(
        self, what: str, granted: ListRootsResult | None, args: dict[str, Any]
    ) -> tuple[str, str]:
        if granted is not None:
            self.folders = from_uris([str(r.uri) for r in granted.roots])
        kind, said = self.engine.reply(what, args, self.folders)
        if kind == "fail":  # a fault of roofscope's, not of the input: said whole to the agent
            return kind, f"roofscope: internal error: {said}"
        return kind, said


_SERVED: dict[int, _Sessions] = {}  # each server's, for the resolver (its key: id(server))


def _ask(ctx: Context) -> ListRoots | None:
    """The SDK's resolver of the ``granted`` argument (never in the tools' input schemas)."""
    return _SERVED[id(ctx.mcp_server)].ask(ctx)


Granted = Annotated[ListRootsResult | None, Resolve(_ask)]


def _tools(server: MCPServer, sessions: _Sessions) -> None:
    tool = server.tool(annotations=READ_ONLY)
    answer = sessions.answer  # the answer under the roots of this call

    @tool
    async def analyze(
        path: Path, granted: Granted, gpu: Gpu = None, kernel: KernelRe = None,
        device: Device = None, gap_us: float = 10.0, limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> CallToolResult:  # fmt: skip
        """The check-up of one profile (`roofscope analyze --json`): summary, run, device,
        warnings, a page of the kernels (most time first, with counters, limiter and roofline
        place) and the first findings. Page with `cursor`."""
        options = {"gpu": gpu, "kernel": kernel, "device": device, "gap_us": gap_us}
        return await answer("analyze", granted, path=path, options=options, limit=limit,
                            cursor=cursor)  # fmt: skip

    @tool
    async def kernel(path: Path, name: str, granted: Granted, gpu: Gpu = None) -> CallToolResult:
        """One kernel (its name or a part of it only it holds): counters, limiter, roofline
        place, and the findings about it with their evidence and prescription."""
        return await answer("kernel", granted, path=path, name=name, options={"gpu": gpu})

    @tool
    async def findings(
        path: Path, granted: Granted, severity: str | None = None, rule: str | None = None,
        kernel: str | None = None, gpu: Gpu = None, limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> CallToolResult:  # fmt: skip
        """The findings, ranked by what fixing each could save (validity problems first),
        kept by severity (high, medium, low), rule name and kernel name. Paged."""
        return await answer("findings", granted, path=path, options={"gpu": gpu},
                            severity=severity, rule=rule, kernel=kernel, limit=limit,
                            cursor=cursor)  # fmt: skip

    @tool
    async def timeline(
        path: Path, granted: Granted, start_s: Start = 0.0, end_s: End = None,
        device: Device = None, gap_us: float = 10.0, limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> CallToolResult:  # fmt: skip
        """Busy and idle time per device, the idle gaps counted, the busy and idle time in a
        window (start_s to end_s after the first kernel began) with its idle stretches at
        the timeline's bin resolution, and the findings that say why the GPU waited (host
        causes: data loader, synchronisation, JIT). Devices paged."""
        return await answer("timeline", granted, path=path, options={"gap_us": gap_us},
                            window=(start_s, end_s), device=device, limit=limit,
                            cursor=cursor)  # fmt: skip

    @tool
    async def compare(
        base: Path, new: Path, granted: Granted, fail_if_slower: float | None = None,
        fail_if_kernel_slower: float | None = None, min_share: float = 0.01, gpu: Gpu = None,
        limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None,
    ) -> CallToolResult:  # fmt: skip
        """Baseline against candidate (`roofscope compare --json`): end-to-end and per-kernel
        speedup, added and removed kernels, and the CI gate's verdict for the thresholds
        (% slower). Kernel changes paged."""
        gate = {"fail_if_slower": fail_if_slower, "fail_if_kernel_slower":
                fail_if_kernel_slower, "min_share": min_share}  # fmt: skip
        return await answer("compare", granted, sides=(base, new), options={"gpu": gpu},
                            gate=gate, limit=limit, cursor=cursor)  # fmt: skip

    @tool
    async def devices(
        name: str | None = None, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
    ) -> CallToolResult:
        """The GPU catalogue (paged), or the parts a name fits (a100, 'mi300x', 'rtx 4090')
        with their ceilings and each ceiling's source."""
        return await answer("devices", None, name=name, limit=limit, cursor=cursor)

    @tool
    async def formats() -> CallToolResult:
        """The input formats roofscope recognises (by content, not by file name)."""
        return await answer("formats", None)

    del analyze, kernel, findings, timeline, compare, devices, formats


def _resources(server: MCPServer, sessions: _Sessions) -> None:
    @server.resource(
        "roofscope://report/last.json",
        mime_type="application/json",
        description="The last check-up, as `roofscope analyze --json` writes it.",
    )
    def last_json() -> str:
        return sessions.read("last_json")

    @server.resource(
        "roofscope://report/last.md",
        mime_type="text/markdown",
        description="The last check-up, as the terminal shows it, in Markdown.",
    )
    def last_markdown() -> str:  # rendered when read, not with each analyze
        return sessions.read("last_markdown")

    del last_json, last_markdown


def serve(roots: list[str], http: int | None, engine: Engine) -> None:
    """Run until the client goes: stdio, or streamable HTTP on 127.0.0.1:``http``; then
    close the engine (its worker's end awaited)."""
    server = build(roots, engine)
    try:
        if http is None:
            server.run()
        else:
            server.run("streamable-http", host="127.0.0.1", port=http)
    finally:
        engine.close()
