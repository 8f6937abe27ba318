"""``roofscope mcp`` (issue 42), spoken to as an agent would: the server started as a
subprocess and reached with the MCP SDK's own client, over stdio (one server for the module)
and over streamable HTTP on 127.0.0.1. Every number is checked against ``analyze --json``
(``compare --json``) of the same input run in this process, and against sums of its rows."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio.from_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult

import roofscope
from roofscope.cli.app import main
from tests.conftest import DATA

ROOT = Path(__file__).parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
ROCPROF = DATA / "rocprofv1-mi250x" / "laplacian"  # AMD, rocprof v1 folder (MI250X)
NCU = DATA / "ncu" / "asymgemm-h200" / "mlp_1b_raw.csv"  # NVIDIA Nsight Compute (H200)
KINETO = DATA / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz"  # PyTorch profiler (H100)
NSYS = DATA / "nsys" / "cloverleaf-a100.sqlite"  # Nsight Systems SQLite (A100)
MI300X = DATA / "kineto" / "mi300x_bert_small_metadata_first.json.gz"  # a compare pair
H100 = DATA / "kineto" / "h100_bert_small_metadata_first.json.gz"
TOOLS = {"analyze", "kernel", "findings", "timeline", "compare", "devices", "formats"}


@functools.cache
def analysed(path: Path) -> roofscope.Report:
    """``analyze`` of ``path`` in this process, once for the module (what each answer is
    checked against)."""
    return roofscope.analyze(path)


@functools.cache
def compared(base: Path, new: Path) -> roofscope.Comparison:
    return roofscope.compare(base, new)


class Agent:
    """A connected client whose calls run on the portal's event loop, from sync tests."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: Client) -> None:
        self.portal, self.client = portal, client

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        result = self.portal.call(self.client.call_tool, tool, arguments)
        assert isinstance(result, CallToolResult)
        return result

    def answer(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(tool, **arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def error(self, tool: str, **arguments: Any) -> str:
        result = self.call(tool, **arguments)
        assert result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]

    def pages(self, tool: str, key: str, **arguments: Any) -> list[dict[str, Any]]:
        """Every page of ``key`` until the cursor ends, in order."""
        got, cursor, offsets = [], None, []
        while True:
            doc = self.answer(tool, **arguments, cursor=cursor)
            meta = doc.get(f"{key}_page", doc)
            offsets.append(meta["offset"])
            got += doc[key]
            cursor = meta["next_cursor"]
            if cursor is None:
                assert len(got) == meta["total"]
                return got


def connect(server: Any) -> Iterator[Agent]:
    with anyio.from_thread.start_blocking_portal() as portal, ExitStack() as stack:
        client = stack.enter_context(portal.wrap_async_context_manager(Client(server)))
        yield Agent(portal, client)


@pytest.fixture(scope="module")
def spare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second root, for the damaged files and the link that leads out."""
    return tmp_path_factory.mktemp("spare")


@pytest.fixture(scope="module")
def agent(spare: Path) -> Iterator[Agent]:
    args = ["-m", "roofscope", "mcp", "--root", str(DATA), "--root", str(spare)]
    params = StdioServerParameters(command=sys.executable, args=args, env=ENV)
    yield from connect(params)


@pytest.fixture(params=["stdio", "http"])
def over(request: pytest.FixtureRequest) -> Agent:
    """The server over stdio, then the same over streamable HTTP on 127.0.0.1: the tests
    that take it run on both transports."""
    agent: Agent = request.getfixturevalue("agent" if request.param == "stdio" else "http_agent")
    return agent


def test_the_tools_are_listed_read_only_with_their_schemas(over: Agent) -> None:
    agent = over
    tools = {t.name: t for t in agent.portal.call(agent.client.list_tools).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.description
    analyze = tools["analyze"].input_schema
    assert analyze["required"] == ["path"]
    assert {"path", "gpu", "kernel", "device", "gap_us", "limit", "cursor"} == set(
        analyze["properties"]
    )
    assert tools["compare"].input_schema["required"] == ["base", "new"]
    assert "required" not in tools["formats"].input_schema


@pytest.mark.parametrize("profile", [ROCPROF, NCU, KINETO, NSYS], ids=lambda p: p.parent.name)
def test_analyze_gives_the_numbers_of_analyze_json(over: Agent, profile: Path) -> None:
    agent = over
    expected = analysed(profile).to_dict()
    doc = agent.answer("analyze", path=str(profile), limit=3)
    for key in ("summary", "run", "device", "selection", "warnings"):
        assert doc[key] == expected[key], key
    assert doc["inputs"] == len(expected["inputs"])
    assert doc["findings_total"] == len(expected["findings"])
    assert [f["rule"] for f in doc["findings_first"]] == [
        f["rule"] for f in expected["findings"][:5]
    ]
    kernels = agent.pages("analyze", "kernels", path=str(profile), limit=3)
    assert kernels == expected["kernels"]  # every page, in order, nothing left out
    # and the rows add up to the summary (a plain-Python aggregation of the answer)
    assert sum(k["calls"] for k in kernels) == doc["summary"]["dispatches"]
    assert sum(k["total_s"] for k in kernels) == pytest.approx(doc["summary"]["kernel_time_s"])


def test_findings_page_to_the_whole_ranked_list_and_filter(agent: Agent) -> None:
    expected = analysed(KINETO).to_dict()["findings"]
    # five pages of three (the embedding gather, aten::index_select, has its work from its
    # shapes: single-dispatch and memory-far-below-roof on its kernel make 13)
    assert len(expected) == 13
    assert agent.pages("findings", "findings", path=str(KINETO), limit=3) == expected
    low = agent.pages("findings", "findings", path=str(KINETO), severity="low", limit=2)
    assert low == [f for f in expected if f["severity"] == "low"] != []
    rule = expected[-1]["rule"]
    assert agent.answer("findings", path=str(KINETO), rule=rule, limit=100)["findings"] == [
        f for f in expected if f["rule"] == rule
    ]


def test_one_kernel_by_a_part_of_its_name(agent: Agent) -> None:
    expected = analysed(KINETO).to_dict()
    top = expected["kernels"][0]  # sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x...
    doc = agent.answer("kernel", path=str(KINETO), name="tilesize128x128x64_warpgroupsize1x1x1")
    assert doc["kernel"] == top
    assert doc["kernel"]["roofline"]["bound"] == "compute"
    assert doc["findings"] == [f for f in expected["findings"] if f["kernel"] == top["name"]]
    many = agent.error("kernel", path=str(KINETO), name="gemm")
    assert many.startswith("roofscope: error: kernel 'gemm': ") and "kernels hold it" in many


def test_timeline_gives_busy_and_idle_per_device(agent: Agent) -> None:
    expected = analysed(NSYS).to_dict()
    doc = agent.answer("timeline", path=str(NSYS))
    assert doc["devices"] == expected["devices"]
    assert doc["window"]["lanes"][0]["device"] == doc["devices"][0]["device"]
    s = doc["summary"]
    assert s["idle_s"] == expected["summary"]["idle_s"]
    assert sum(d["busy_s"] for d in doc["devices"]) == pytest.approx(s["busy_s"])
    assert doc["idle_findings"] == [f for f in expected["findings"] if f["kind"] == "program"]


def test_timeline_gives_busy_and_idle_in_a_window(agent: Agent) -> None:
    """The whole span: the busy time of the summary, idle the rest of the bins; a window: its
    bins' busy time, and its stretches of idle bins, counted here from the report's bins."""
    report = analysed(KINETO)
    lanes = report.checkup.lanes
    assert lanes is not None and len(lanes.lanes) == 1
    busy, bin_ns = lanes.lanes[0].busy_ns, lanes.bin_ns
    whole = agent.answer("timeline", path=str(KINETO))["window"]
    lane = whole["lanes"][0]
    assert lane["busy_s"] == pytest.approx(report.to_dict()["summary"]["busy_s"], abs=1e-9)
    assert lane["idle_s"] == pytest.approx(len(busy) * bin_ns / 1e9 - lane["busy_s"])
    part = agent.answer("timeline", path=str(KINETO), start_s=0.01, end_s=0.02)["window"]
    first, end = 10_000_000 // bin_ns, -(-20_000_000 // bin_ns)
    assert (part["from_s"], part["to_s"]) == (first * bin_ns / 1e9, end * bin_ns / 1e9)
    assert part["lanes"][0]["busy_s"] == sum(busy[first:end]) / 1e9
    runs = [len(list(g)) for idle, g in groupby(busy[first:end], key=lambda b: b == 0) if idle]
    stretches = part["lanes"][0]["idle_stretches"]
    assert part["lanes"][0]["idle_stretches_total"] == len(runs) == len(stretches)
    widths = [round((b - a) * 1e9 / bin_ns) for a, b in stretches]
    assert widths == sorted(runs, reverse=True)
    bad = agent.error("timeline", path=str(KINETO), start_s=0.02, end_s=0.01)
    assert bad == "roofscope: error: window 0.02 to 0.01 s: expected 0 <= start_s < end_s"


def test_timeline_names_each_gap_of_a_window_with_what_filled_it(agent: Agent) -> None:
    """CloverLeaf (nsys SQLite): its idle gaps of at least 10 µs swept from the export's own
    kernel rows; the window lists them longest first, as seconds after the first kernel,
    each with the time the blocking calls (cudaDeviceSynchronize, cudaMemcpy) and the copies
    filled of it, from the export's own rows."""
    from tests.test_gaps import inside, rows, swept

    kernels = rows("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL")
    syncs = rows(
        """SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s
        ON s.id = r.nameId WHERE s.value IN ('cudaDeviceSynchronize_v3020', 'cudaMemcpy_v3020')"""
    )
    moved = rows("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    every = sorted(swept(kernels, 10_000), key=lambda g: (g[0] - g[1], g[0]))
    origin = min(a for a, _ in kernels)
    window = agent.answer("timeline", path=str(NSYS))["window"]
    assert window["gaps_kept"] == window["gaps_in_window"] == len(every) == 195
    listed = window["gaps"]
    assert len(listed) == 20
    for gap, (a, b) in zip(listed, every, strict=False):
        assert (gap["start_s"], gap["end_s"]) == ((a - origin) / 1e9, (b - origin) / 1e9)
        filled = {"sync": inside((a, b), syncs), "copy": inside((a, b), moved)}
        assert gap["inside_s"] == {k: ns / 1e9 for k, ns in filled.items() if ns}
        assert gap["cause"] == next((k for k, ns in filled.items() if 2 * ns >= b - a), None)
    a, b = every[0]
    part = agent.answer("timeline", path=str(NSYS), start_s=(b - origin) / 1e9 - 1e-6,
                        end_s=(b - origin) / 1e9 + 1e-3)["window"]  # fmt: skip
    assert part["gaps"][0]["start_s"] == (a - origin) / 1e9  # overlapped: listed whole
    assert part["gaps_in_window"] == sum(1 for x, y in every if y > b - 1_000 and x < b + 1_000_000)


def test_compare_gives_the_speedup_and_the_gate_verdict(over: Agent) -> None:
    agent = over
    both = compared(MI300X, H100)
    base = both.base[0].to_dict()["summary"]["kernel_time_s"]  # analyze --json of each side
    new = both.new[0].to_dict()["summary"]["kernel_time_s"]
    expected = both.to_dict(both.gate(fail_if_slower=0))
    doc = agent.answer("compare", base=str(MI300X), new=str(H100), fail_if_slower=0, limit=5)
    assert doc["end_to_end"]["kernel_time_s"] == [base, new]
    assert doc["end_to_end"]["speedup"] == pytest.approx(base / new)
    check = doc["gate"]["checks"][0]
    assert check["slower_pct"] == pytest.approx((new / base - 1) * 100)
    assert doc["gate"]["passed"] is (new <= base)  # the H100 ran the model faster: passed
    assert doc["gate"] == expected["gate"]
    kernels = agent.pages("compare", "kernels", base=str(MI300X), new=str(H100), limit=5)
    assert kernels == expected["kernels"]
    assert doc["added_total"] == doc["removed_total"] == 0


def test_compare_names_the_added_and_removed_kernels_among_the_changes(agent: Agent) -> None:
    """Two programs (rocprof v1, MI250X): the kernels of one only are among the changes."""
    stencils = DATA / "rocprofv1-mi250x" / "stencils"
    both = compared(ROCPROF, stencils)
    expected = both.to_dict()
    base, new = ({k.name for k in side[0].kernels} for side in (both.base, both.new))
    kernels = agent.pages("compare", "kernels", base=str(ROCPROF), new=str(stencils), limit=4)
    assert kernels == expected["kernels"]
    doc = agent.answer("compare", base=str(ROCPROF), new=str(stencils))
    assert (doc["added_total"], doc["removed_total"]) == (len(new - base), len(base - new))
    assert (len(new - base), len(base - new)) == (12, 3)  # two programs: no kernel in common
    assert [k["new_name"] for k in kernels if k["matched_by"] == "added"] == expected["added"]
    assert [k["base_name"] for k in kernels if k["matched_by"] == "removed"] == expected["removed"]


def test_devices_and_formats_are_the_commands_lists(agent: Agent) -> None:
    from roofscope.catalogue import devices as catalogue
    from roofscope.readers import registry

    names = [f["name"] for f in agent.answer("formats")["formats"]]
    assert names == [r.name for r in registry.readers()]
    listed = agent.pages("devices", "devices", limit=50)
    assert [d["key"] for d in listed] == [d.key for d in catalogue.catalogue()]
    one = agent.answer("devices", name="mi300x")["devices"]
    assert one == [catalogue.as_dict(d) for d in catalogue.resolve("mi300x")]


def cli_line(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    assert code in (1, 2)
    return capsys.readouterr().err.strip()


def test_bad_paths_are_tool_errors_in_the_commands_words(
    over: Agent, spare: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = over
    outside = agent.error("analyze", path="/etc/hostname")
    assert outside.startswith("roofscope: error: /etc/hostname: outside the folders this server")
    assert f"{DATA.resolve()}, {spare.resolve()}" in outside
    assert "outside the folders" in agent.error("analyze", path=f"{DATA}/../../pyproject.toml")
    if not (spare / "out").is_symlink():  # made by the first transport's run
        (spare / "out").symlink_to("/etc", target_is_directory=True)
    assert "outside the folders" in agent.error("analyze", path=str(spare / "out" / "hostname"))
    missing = spare / "missing.csv"
    assert agent.error("analyze", path=str(missing)) == cli_line(capsys, "analyze", str(missing))
    corrupt = spare / "results.csv"
    corrupt.write_bytes((ROCPROF / "results.csv").read_bytes()[:300] + b"\x00garbage\n")
    assert agent.error("analyze", path=str(corrupt)) == cli_line(capsys, "analyze", str(corrupt))
    assert agent.answer("formats")["formats"]  # the server still answers


def test_bad_options_are_tool_errors(agent: Agent, capsys: pytest.CaptureFixture[str]) -> None:
    cursor = agent.error("analyze", path=str(KINETO), cursor="x9")
    assert cursor.startswith("roofscope: error: cursor 'x9': expected the next_cursor")
    severity = agent.error("findings", path=str(KINETO), severity="urgent")
    assert severity == "roofscope: error: severity 'urgent': expected one of high, medium, low"
    gap = agent.error("analyze", path=str(KINETO), gap_us=-1)
    assert gap.replace("gap_us=", "--gap-us ") == cli_line(
        capsys, "analyze", str(KINETO), "--gap-us", "-1"
    )


def test_the_last_report_is_a_resource_and_the_prompt_walks_the_checkup(agent: Agent) -> None:
    agent.answer("analyze", path=str(KINETO))
    last = agent.portal.call(agent.client.read_resource, "roofscope://report/last.json")
    assert last.contents[0].text == analysed(KINETO).to_json()  # type: ignore[union-attr]
    md = agent.portal.call(agent.client.read_resource, "roofscope://report/last.md")
    assert md.contents[0].text.startswith(f"# roofscope check-up: {KINETO.resolve()}")  # type: ignore[union-attr]
    prompt = agent.portal.call(agent.client.get_prompt, "diagnose", {"path": str(KINETO)})
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    for step in ("Baseline", "Hotspots", "Metrics", "Verification"):
        assert step in text
    assert str(KINETO) in text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_agent(spare: Path) -> Iterator[Agent]:
    port = free_port()
    args = [sys.executable, "-m", "roofscope", "mcp", "--root", str(DATA), "--root", str(spare),
            "--http", str(port)]  # fmt: skip
    server = subprocess.Popen(args, env=ENV, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()  # type: ignore[union-attr]
                time.sleep(0.1)
        yield from connect(f"http://127.0.0.1:{port}/mcp")
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_same_over_streamable_http(http_agent: Agent) -> None:
    expected = analysed(ROCPROF).to_dict()
    assert http_agent.pages("analyze", "kernels", path=str(ROCPROF), limit=2) == expected["kernels"]
    doc = http_agent.answer("analyze", path=str(ROCPROF))
    assert doc["summary"] == expected["summary"]
    assert "outside the folders" in http_agent.error("analyze", path="/etc/hostname")
    both = compared(MI300X, H100)
    gate = http_agent.answer("compare", base=str(MI300X), new=str(H100), fail_if_slower=0)
    assert gate["gate"] == both.to_dict(both.gate(fail_if_slower=0))["gate"]


def test_without_the_sdk_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    hidden = lambda name, *more: None if name == "mcp" else real(name, *more)  # noqa: E731
    monkeypatch.setattr(importlib.util, "find_spec", hidden)
    assert main(["mcp"]) == 2
    assert capsys.readouterr().err == (
        "roofscope: error: roofscope mcp needs the MCP SDK: pip install 'roofscope[mcp]'\n"
    )


def test_without_root_the_server_reads_under_the_roots_the_client_grants() -> None:
    """No ``--root``: the client's MCP roots (asked at each call), a relative path taken from
    the first; here the server runs in this process (the SDK's in-memory transport)."""
    from mcp_types import ListRootsResult, Root

    from roofscope.agent.server import build

    async def granted(context: object) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=(DATA / "kineto").resolve().as_uri())])

    expected = analysed(KINETO).to_dict()["summary"]
    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build([]), list_roots_callback=granted)
        with portal.wrap_async_context_manager(client) as c:
            agent = Agent(portal, c)
            assert agent.answer("analyze", path=KINETO.name)["summary"] == expected
            outside = agent.error("analyze", path=str(NCU))
            assert (
                f"outside the folders this server may read ({(DATA / 'kineto').resolve()})"
                in outside
            )


def test_a_root_that_is_no_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--root", str(KINETO)]) == 2
    assert capsys.readouterr().err == (
        f"roofscope: error: root {KINETO}: no such folder; name a folder to serve\n"
    )


def test_a_granted_root_that_is_no_folder_is_a_tool_error() -> None:
    from mcp_types import ListRootsResult, Root

    from roofscope.agent.server import build

    async def granted(context: object) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=KINETO.resolve().as_uri())])

    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build([]), list_roots_callback=granted)
        with portal.wrap_async_context_manager(client) as c:
            said = Agent(portal, c).error("analyze", path=KINETO.name)
    assert (
        said == f"roofscope: error: root {KINETO.resolve()}: no such folder; name a folder to serve"
    )


def test_the_last_report_before_any_analyze_is_an_error_the_client_reads() -> None:
    """The resource says what to do (the SDK would answer only 'Error reading resource')."""
    from mcp.shared.exceptions import MCPError

    from roofscope.agent.server import build

    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build([str(DATA)]))
        with portal.wrap_async_context_manager(client) as c, pytest.raises(MCPError) as said:
            portal.call(c.read_resource, "roofscope://report/last.md")
    assert str(said.value) == "roofscope: error: no report yet: call the analyze tool first"


def children(pid: int) -> list[int]:
    """The processes ``pid`` started, from any of its threads."""
    tasks = Path(f"/proc/{pid}/task").glob("*/children")
    return [int(child) for task in tasks for child in task.read_text().split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_the_stdio_server_answers_from_one_worker_it_forked(agent: Agent, spare: Path) -> None:
    """The worker imports the engine while the server imports the SDK (bench/mcp_startup.py);
    it is the server's only child, started from the same command line."""
    agent.answer("formats")
    mine = children(os.getpid())
    lines = {p: Path(f"/proc/{p}/cmdline").read_text() for p in mine}
    servers = [p for p, line in lines.items() if str(spare) in line and "--http" not in line]
    assert len(servers) == 1
    (worker,) = children(servers[0])
    assert (
        Path(f"/proc/{worker}/cmdline").read_bytes()
        == Path(f"/proc/{servers[0]}/cmdline").read_bytes()
    )


FORKED = """
import json, os, signal, sys
from roofscope.agent.worker import Forked
folders = [sys.argv[1]]
engine = Forked(folders)
said = [engine.reply("formats", {}, folders), engine.reply("analyze", {"path": "/etc/hostname",
        "options": {}, "limit": 1, "cursor": None}, folders)]
os.kill(engine.pid, signal.SIGKILL)
said.append(engine.reply("formats", {}, folders))
engine.close()
print(json.dumps(said))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker is forked")
def test_the_worker_answers_over_its_pipe_and_says_when_it_ended() -> None:
    """In a process of its own: the test's process runs the portal's threads."""
    import json

    from roofscope.readers import registry

    run = subprocess.run([sys.executable, "-c", FORKED, str(DATA)], env=ENV, text=True,
                         capture_output=True, timeout=60, check=True)  # fmt: skip
    (ok, formats), error, ended = json.loads(run.stdout)
    assert ok == "ok"
    assert [f["name"] for f in json.loads(formats)["formats"]] == [
        r.name for r in registry.readers()
    ]
    assert error == ["error", "roofscope: error: /etc/hostname: outside the folders this server "
                     f"may read ({DATA.resolve()}); pass a path under one of them, or start "
                     "`roofscope mcp --root DIR` with its folder"]  # fmt: skip
    assert ended == ["fail", "the worker that answers the tools has ended (killed by signal 9); "
                     "restart the server"]  # fmt: skip


def test_a_fault_of_roofscopes_is_a_tool_error_that_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not the SDK's bare 'Error executing tool': the agent reads what broke; the traceback
    goes to the server's stderr."""
    from roofscope.agent import tools
    from roofscope.agent.server import build

    def broken() -> None:
        raise RuntimeError("the registry broke")

    monkeypatch.setattr(tools, "formats_answer", broken)
    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build([str(DATA)]))
        with portal.wrap_async_context_manager(client) as c:
            said = Agent(portal, c).error("formats")
    assert said == "roofscope: internal error: the registry broke"
    assert "RuntimeError: the registry broke" in capsys.readouterr().err
