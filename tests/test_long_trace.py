"""Long honest traces: whole seconds by chance are no rounding, and counts print whole.

The long trace is the real Kineto trace tests/data/kineto/inference_rank_1.json.gz (integer µs
timestamps) with its first kernel repeated 1,075,000 times at honest µs starts drawn over
12.8 s, each lasting as long as the real one; six of them start on a whole second, as six
did in the trace of issue 19. It is built in the model (the reader's own rows, copied in
DuckDB): a JSON file of a million kernels takes 15 s to read, so the CLI runs on a shorter
file written the same way.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
import re
from fractions import Fraction
from pathlib import Path

import pytest

from roofscope.analysis.checks import check
from roofscope.analysis.rounding import CHANCE, binomial_tail, timestamp_stamps
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from roofscope.render.report.text import render_text
from roofscope.report import analyse
from tests.conftest import DATA, SHARED_CORPUS, run_json

KINETO = DATA / "kineto" / "inference_rank_1.json.gz"
VCOPY = SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025"
SPAN_US = 12_800_000
CALLS = 1_075_000
ON_THE_SECOND = 6  # starts placed on whole seconds, as in issue 19's trace
F9 = Fraction(1, 10**9)


def honest_starts(first_us: int, count: int, placed: int = ON_THE_SECOND) -> list[int]:
    """µs offsets from ``first_us`` over 12.8 s; the first ``placed`` on whole seconds."""
    rng = random.Random(19)
    whole = [s * 1_000_000 - first_us % 1_000_000 for s in range(1, placed + 1)]
    return whole + [rng.randrange(SPAN_US) for _ in range(count - placed)]


def whole_seconds(first_us: int, dur_us: int, offsets: list[int]) -> int:
    """Begins and ends on a whole second, counted here from the offsets."""
    return sum((first_us + o) % 1_000_000 == 0 for o in offsets) + sum(
        (first_us + o + dur_us) % 1_000_000 == 0 for o in offsets
    )


@pytest.fixture(scope="module")
def long_trace() -> tuple[Profile, int]:
    """The real trace with its first kernel's dispatch repeated CALLS times; and the number
    of its timestamps on whole seconds."""
    profile = load([str(KINETO)])
    con = profile.con
    ((start, end, name_id),) = con.execute(
        "SELECT start_ns, end_ns, name_id FROM dispatches ORDER BY start_ns LIMIT 1"
    ).fetchall()
    first_us, dur_us = start // 1000, (end - start) // 1000
    offsets = honest_starts(first_us, CALLS)
    con.execute(
        """CREATE TEMP TABLE offsets AS SELECT unnest($1::BIGINT[]) AS off,
        generate_subscripts($1::BIGINT[], 1) AS i""",
        [offsets],
    )
    con.execute(f"""CREATE TEMP TABLE proto AS SELECT * FROM dispatches WHERE start_ns = {start};
        DELETE FROM dispatches WHERE start_ns = {start};
        INSERT INTO dispatches SELECT d.* REPLACE (o.i AS dispatch_id,
            {start} + o.off * 1000 AS start_ns, {end} + o.off * 1000 AS end_ns)
        FROM proto d, offsets o;
        UPDATE launches SET dispatches = {CALLS} WHERE name_id = {name_id}""")
    calls = con.execute(f"SELECT count(*) FROM dispatches WHERE name_id = {name_id}").fetchall()
    assert calls == [(CALLS,)]
    return profile, whole_seconds(first_us, dur_us, offsets)


def test_binomial_tail_is_the_sum_of_the_terms() -> None:
    """Against the terms summed exactly (small n) or 1 - P(X < k) (large n), and p^n where
    every trial hits."""
    for n, p, k in [(20, Fraction(3, 10), 10), (40, Fraction(1, 10**9), 2), (18, F9, 1)]:
        tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
        assert binomial_tail(n, float(p), k) == pytest.approx(float(tail), rel=1e-9)
    for n, q, k in [(2_150_006, 1e-6, 6), (2_150_006, 1e-6, 9)]:
        below = sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k))
        assert binomial_tail(n, q, k) == pytest.approx(1 - below, rel=1e-6)
    assert binomial_tail(6, 1e-6, 6) == pytest.approx(1e-36, rel=1e-9)
    assert binomial_tail(2_000_000, 1e-6, 2) == 1.0  # not beyond the mean: no evidence


def test_whole_seconds_by_chance_in_a_long_trace(long_trace: tuple[Profile, int]) -> None:
    """2,150,008 µs timestamps, 6 of them (or more) on whole seconds where chance gives 2.15:
    the tail is above CHANCE, so no ``rounded-timestamp`` (the old check fired on any)."""
    profile, whole = long_trace
    (stamps,) = timestamp_stamps(profile)
    n = 2 * (CALLS + 3)  # the three other real kernels keep their dispatch
    assert (stamps.stamps, stamps.whole, stamps.resolution_ns) == (n, whole, 1000)
    assert whole >= ON_THE_SECOND
    below = sum(math.comb(n, j) * 1e-6**j * (1 - 1e-6) ** (n - j) for j in range(whole))
    assert stamps.chance == pytest.approx(1 - below, rel=1e-6) and stamps.chance > CHANCE
    assert not stamps.rounded
    assert [w.code for w in check(profile)] == []


def test_long_honest_kineto_trace_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same construction as a Kineto file of 20,000 kernels, one starting on a whole
    second (chance gives 0.04 of its 40,000 timestamps there, so one is no evidence; six
    would be, 3e-12 by chance): the CLI warns of nothing (the old check warned of it)."""
    doc = json.loads(gzip.decompress(KINETO.read_bytes()))
    events = doc["traceEvents"]
    kernel = min((e for e in events if e.get("cat") == "Kernel"), key=lambda e: e["ts"])
    first = kernel["ts"]
    repeated = [
        {**kernel, "ts": first + o, "args": {**kernel["args"], "correlation": i}}
        for i, o in enumerate(honest_starts(first, 20_000, placed=1))
    ]
    doc["traceEvents"] = [e for e in events if e.get("cat") != "Kernel"] + repeated
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    got = run_json(capsys, str(path))
    assert got["warnings"] == []
    assert got["kernels"][0]["calls"] == 20_000


def _workload_stamps(folder: Path) -> tuple[int, str]:
    """Dispatches of pmc_perf.csv and the exponent text a spreadsheet left in all its times."""
    with (folder / "pmc_perf.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    texts = {r[c] for r in rows for c in ("Start_Timestamp", "End_Timestamp")}
    (text,) = texts  # every Start and End: the same rounded value
    return len(rows), text


@pytest.mark.parametrize(
    "folder",
    [DATA / "rocprof-compute-mi300a", VCOPY / "MI300A_A1", VCOPY / "MI300X_A1"],
    ids=lambda p: p.name,
)
def test_spreadsheet_rounded_workload_warns_once(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """All of Start and End re-saved as 1.62068E+14 / 8.1097E+14: one warning names the
    rounding (digits of the mantissa, the place of its last digit) and its consequence, the
    dispatches at 0 ns; no ``zero-duration``, ``no-time-for-rates`` or reader warning beside."""
    if not folder.is_dir():
        pytest.skip("needs ../shared/corpus")
    calls, text = _workload_stamps(folder)
    mantissa, exponent = re.fullmatch(r"(\d\.\d+)E\+(\d+)", text).groups()  # type: ignore[union-attr]
    digits = len(mantissa) - 1
    unit_s = 10 ** (int(exponent) - digits + 1) / 1e9
    doc = run_json(capsys, str(folder))
    (warning,) = doc["warnings"]
    assert (warning["code"], warning["count"]) == ("rounded-timestamp", calls)
    assert 2 * calls < 10
    assert warning["message"] == (
        f"{folder / 'pmc_perf.csv'}: {2 * calls} of {2 * calls} timestamps fall on a whole "
        f'second (e.g. "{text}" ns in the file), where even a 1 µs clock puts '
        f"{2 * calls * 1e-6:.7f} by chance: "  # 2 significant figures for 2 * calls < 10
        f"a spreadsheet rounded them to {digits} significant digits, so the durations of its "
        f"{calls} dispatch{'' if calls == 1 else 'es'} may be off by up to {unit_s:g} s, and "
        f"{calls} show 0 ns (Begin "
        "equals End): their kernels get no rate, efficiency or bound; use the file as the "
        "profiler wrote it"
    )


# the columns shown beside the name at each width: the bar, then Cum., then the median give way
# (the name keeps 36 characters before they do)
SHOWN = {
    80: ["1,075,000", "4,300", "100.0%", "4"],
    100: ["1,075,000", "4,300", "100.0%", "4", "4"],
    120: ["1,075,000", "4,300", "100.0%", "100.0%", "4", "4"],
}


@pytest.mark.parametrize("width", [80, 100, 120])
def test_table_shows_counts_whole(long_trace: tuple[Profile, int], width: int) -> None:
    """1,075,000 calls print whole at 80, 100 and 120 columns (they were cut, '107,5…',
    where the column was 6 wide); the name gives way. The kernel lasts 4 µs in the trace:
    4,300 ms in all (the column's unit leaves four digits), 4 µs mean and median, 100.0 % of
    4,300,026 µs (the three others take 6, 15 and 5 µs)."""
    text = render_text(analyse(long_trace[0]), width=width)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("#   Kernel"))
    assert header.split()[2:] == [
        "Calls", "Total", "[ms]", "Share", *(["Cum."] if width > 100 else []), "Mean", "[µs]",
        *(["Median", "[µs]"] if width > 80 else []),
    ]  # fmt: skip
    row = next(line for line in lines if line.startswith("1 "))
    assert len(row) <= width
    name, cells = re.fullmatch(r"1\s+● (\S+)\s+(.*)", row).groups()  # type: ignore[union-attr]
    # the short name: no return type, no namespaces (void at::native::elementwise_kernel<…)
    assert name.startswith("elementwise_ke")
    assert cells.split() == SHOWN[width]
