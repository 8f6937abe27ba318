"""Operators and launches staged in DuckDB and nested there (readers/torch/kineto_nest.py):
the sweep's answers against their closed forms, and the same tables whatever the batch."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from roofscope.readers.load import load
from roofscope.readers.torch import kineto_nest, kineto_rows
from roofscope.readers.torch.kineto_nest import Sweep
from roofscope.readers.torch.kineto_stack import Nesting, innermost

DATA = Path(__file__).parent / "data" / "kineto"
H100 = DATA / "h100_bert_small_metadata_first.json.gz"
MI300X = DATA / "mi300x_bert_small_metadata_first.json.gz"
TABLES = ("operators", "op_launches", "user_ranges", "range_launches")


def _intervals(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """Operators nested, disjoint and (as a damaged trace may have them) overlapping."""
    out = []
    for _ in range(n):
        start = rng.randrange(0, 200)
        out.append((start, start + rng.choice([0, 1, 3, 10, 50, 120])))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_the_sweep_gives_each_operator_and_launch_its_closed_form(seed: int) -> None:
    """On one thread's operators ordered by (start, -end, reading order), an operator's parent
    is the last earlier one whose end is at or after its start; a launch's operator the last
    one with start <= launch <= end (a plain search of every pair)."""
    rng = random.Random(seed)
    ops = sorted(
        ((s, e, seq) for seq, (s, e) in enumerate(_intervals(rng, 40))),
        key=lambda o: (o[0], -o[1], o[2]),
    )
    launches = sorted((rng.randrange(0, 260), 100 + n) for n in range(30))
    rows = [(0, s, e, seq, 0) for s, e, seq in ops] + [(0, s, None, seq, 1) for s, seq in launches]
    rows.sort(key=lambda r: (r[1], r[4], -(r[2] or 0), r[3]))
    got = _answers([r[:4] for r in rows[:25]], [r[:4] for r in rows[25:]])
    for i, (start, _, seq) in enumerate(ops):
        earlier = [o[2] for o in ops[:i] if o[1] >= start]
        assert got[(False, seq)] == (earlier[-1] if earlier else -1)
    for at, seq in launches:
        open_ = [o[2] for o in ops if o[0] <= at <= o[1]]
        assert got[(True, seq)] == (open_[-1] if open_ else -1)


def _answers(*batches: list[tuple[object, ...]]) -> dict[tuple[bool, object], int]:
    """The sweep's answers by (is a launch, seq), its rows given in batches."""
    sweep, got = Sweep(), dict[tuple[bool, object], int]()
    for batch in batches:
        ops, launches = sweep.run(batch)
        got |= {(False, s): p for s, p in zip(ops["seq"], ops["parent"], strict=True)}
        got |= {(True, s): f for s, f in zip(launches["seq"], launches["leaf"], strict=True)}
    return got


def test_a_new_thread_starts_with_no_operator_open() -> None:
    rows = [(1, 0, 100, 0), (1, 5, None, 1), (2, 6, None, 2), (2, 7, 9, 3), (2, 8, None, 4)]
    expected = {(False, 0): -1, (True, 1): 0, (True, 2): -1, (False, 3): -1, (True, 4): 3}
    assert _answers(rows[:2], rows[2:]) == expected  # thread 2 in a batch of its own
    assert _answers(rows[:3], rows[3:]) == expected


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    profile = load([str(path)])
    return {t: profile.con.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_the_tables_are_the_same_staged_in_batches_of_seven_rows(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Staged and streamed back 7 rows at a time (every batch as DuckDB lists), the
    operators, launches and ranges are row for row those of one batch."""
    whole = _tables(path)
    assert whole["operators"] and whole["op_launches"]
    monkeypatch.setattr(kineto_nest, "BATCH", 7)
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 1 << 30)
    monkeypatch.setattr(kineto_rows, "SMALL_BATCH", 1 << 30)
    assert _tables(path) == whole
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 0)  # every batch through numpy
    assert _tables(path) == whole


def test_no_staging_table_outlives_the_read() -> None:
    profile = load([str(H100)])
    tables = {
        r[0] for r in profile.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    }
    assert not tables & set(kineto_nest.TABLES)


def test_an_operator_time_past_64_bits_is_left_out_of_the_nesting(tmp_path: Path) -> None:
    """A damaged operator (its ts 10^16 µs: 10^19 ns, past 64 bits) is staged without its
    times, so no launch is put inside it; the launch's own operator is still found."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
        {"ph": "X", "cat": "cpu_op", "name": "aten::x", "pid": 1, "tid": 1, "ts": 10**16, "dur": 1},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 12, "dur": 1, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 3,
         "args": {"correlation": 7, "device": 0, "stream": 7}},
    ]  # fmt: skip
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    profile = load([str(path)])
    ops = profile.con.execute("SELECT op_id, name, start_ns, end_ns FROM operators").fetchall()
    assert ops == [(0, "aten::mm", 10_000, 15_000)]
    assert profile.con.execute("SELECT * FROM op_launches").fetchall() == [(0, 7, 12_000, 0)]


def test_a_launch_time_past_64_bits_is_in_no_user_range(tmp_path: Path) -> None:
    """Found by the fuzz campaign: a launch whose ts is 1e999999999 (staged without its
    start) ended the read in a traceback when the user ranges were matched to launches. It
    is in no range now; the launch beside it is in the range around it."""
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 10,
         "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 12, "dur": 1, "args": {"correlation": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": "TS", "dur": 1, "args": {"correlation": 8}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 3,
         "args": {"correlation": 7, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 3,
         "args": {"correlation": 8, "device": 0, "stream": 7}},
    ]  # fmt: skip
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}).replace('"TS"', "1e999999999"))
    profile = load([str(path)])
    held = profile.con.execute(
        "SELECT r.name, l.correlation FROM range_launches l JOIN user_ranges r USING (range_id)"
    ).fetchall()
    assert held == [("step", 7)]


def _stream(rng: random.Random, threads: int) -> list[tuple[int, int, int | None, int]]:
    """Rows (thread, start, end, seq; end None for a launch) of random operators and
    launches on ``threads`` threads, in the sweep's order."""
    rows: list[tuple[int, int, int | None, int, int]] = []
    seq = 0
    for thread in range(threads):
        for start, end in _intervals(rng, 25):
            rows.append((thread, start, end, seq, 0))
            seq += 1
        for _ in range(15):
            rows.append((thread, rng.randrange(0, 260), None, seq, 1))
            seq += 1
    rows.sort(key=lambda r: (r[0], r[1], r[4], -(r[2] or 0), r[3]))
    return [r[:4] for r in rows]


@pytest.mark.parametrize("seed", range(20))
def test_the_sweep_numbers_the_operators_around_a_launch_as_sql_did(seed: int) -> None:
    """Kept: the operators a launch is in, and every one around them (their parents, up);
    numbered in the sweep's order (thread by thread, then time); each kept one's parent and
    each launch's operator given by number, -1 for none; answered in batches of 9 rows."""
    rows = _stream(random.Random(seed), 3)
    batches = [rows[i : i + 9] for i in range(0, len(rows), 9)]
    answers = _answers(*batches)
    order, number = _kept(rows, answers)
    sweep = Sweep()
    for batch in batches:
        sweep.run(batch)
    sweep.finish()
    numbered = sweep.numbered
    assert numbered["seq"] == order
    assert numbered["op_id"] == list(range(len(order)))
    assert numbered["parent"] == [number[answers[(False, s)]] for s in order]
    launches = [r[3] for r in rows if r[2] is None]
    assert sweep.launched["seq"] == launches
    assert sweep.launched["op_id"] == [number[answers[(True, s)]] for s in launches]


def test_the_rows_are_cut_into_windows_of_whole_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread with more rows than a batch is cut at starts (every row of one start in one
    window, the windows covering every start); threads with fewer are grouped, whole."""
    profile = load([str(H100)])
    con = profile.con
    con.execute(f"CREATE TABLE {kineto_nest.OPS} (thread BIGINT, seq BIGINT, start_ns BIGINT, "
                "end_ns BIGINT)")  # fmt: skip
    con.execute(f"CREATE TABLE {kineto_nest.LAUNCHES} (thread BIGINT, seq BIGINT, "
                "start_ns BIGINT, correlation BIGINT)")  # fmt: skip
    con.execute(f"CREATE TABLE {kineto_nest.THREADS} AS SELECT * FROM (VALUES (7, 0), (8, 1), "
                "(9, 2)) t(thread, rank)")  # fmt: skip
    con.execute(
        f"INSERT INTO {kineto_nest.OPS} SELECT 7, i, i // 3, i // 3 + 1 FROM range(30) r(i)"
    )
    con.execute(
        f"INSERT INTO {kineto_nest.LAUNCHES} SELECT 8 + i % 2, 100 + i, i, i FROM range(6) r(i)"
    )
    monkeypatch.setattr(kineto_nest, "BATCH", 7)
    windows = kineto_nest.windows(profile, kineto_nest.thread_rows(profile))
    low, high = kineto_nest.LOW, kineto_nest.HIGH
    assert windows[-1] == (1, 2, low, high)  # threads 8 and 9: 3 rows each, one window
    cut = windows[:-1]  # thread 7: 30 rows, starts 0-9 three times each, in 5 windows
    assert all(w[:2] == (0, 0) for w in cut) and len(cut) == 5
    assert cut[0][2] == low and cut[-1][3] == high  # every start, each in one window
    assert all(a[3] + 1 == b[2] for a, b in itertools.pairwise(cut))
    sizes = [sum(w[2] <= i // 3 <= w[3] for i in range(30)) for w in cut]
    assert sum(sizes) == 30 and max(sizes) <= 9  # about 30 / 5, in whole starts of 3


def _closed_forms(rows: list[tuple[int, int, int | None, int]]) -> dict[tuple[bool, int], int]:
    """Each row's operator by (is a launch, seq), a plain search of every earlier row: the
    last earlier operator of its thread whose end is at or after its start, -1 for none."""
    got: dict[tuple[bool, int], int] = {}
    for i, (thread, start, end, seq) in enumerate(rows):
        earlier = [r[3] for r in rows[:i] if r[0] == thread and r[2] is not None and r[2] >= start]
        got[(end is None, seq)] = earlier[-1] if earlier else -1
    return got


def _numpy_windows(
    rows: list[tuple[int, int, int | None, int]], cuts: list[int]
) -> list[dict[str, np.ndarray]]:
    """Rows as the numpy windows the nesting reads, cut before each of ``cuts``."""
    bounds = [0, *cuts, len(rows)]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        part = rows[lo:hi]
        out.append({
            "rank": np.array([r[0] for r in part], dtype=np.int64),
            "start_ns": np.array([r[1] for r in part], dtype=np.int64),
            "end_ns": np.array([0 if r[2] is None else r[2] for r in part], dtype=np.int64),
            "seq": np.array([r[3] for r in part], dtype=np.int64),
            "kind": np.array([int(r[2] is None) for r in part], dtype=np.int32),
        })  # fmt: skip
    return [w for w in out if len(w["seq"])]


@pytest.mark.parametrize("seed", range(30))
def test_the_numpy_nesting_numbers_the_operators_as_the_closed_form(seed: int) -> None:
    """The numpy nesting of a large trace (readers/torch/kineto_stack.py), its rows cut into
    windows anywhere (inside a thread, between rows of one start): the kept operators (those
    a launch is in and their parents, up) numbered in the sweep's order, each one's parent
    and each launch's operator by number, against a plain search of every pair."""
    rng = random.Random(seed)
    rows = _stream(rng, 3)
    answers = _closed_forms(rows)
    order, number = _kept(rows, answers)
    nesting = Nesting()
    for window in _numpy_windows(rows, sorted(rng.sample(range(1, len(rows)), 8))):
        nesting.add(window)
    ops, launched = nesting.numbered()
    assert ops["seq"].tolist() == order
    assert ops["op_id"].tolist() == list(range(len(order)))
    assert ops["parent"].tolist() == [number[answers[(False, s)]] for s in order]
    launches = [r[3] for r in rows if r[2] is None]
    assert launched["seq"].tolist() == launches
    assert launched["op_id"].tolist() == [number[answers[(True, s)]] for s in launches]
    assert launched["pos"].tolist() == list(range(len(launches)))


def test_innermost_on_operators_that_close_before_the_ones_inside_them() -> None:
    """Overlapping operators (a damaged trace): A [0, 50] then B [10, 100]; at 60 B is the
    one open (A, closed, is under it), at 120 none is; equal starts: the longer one first."""
    ends = np.array([50, 100, 60, 60], dtype=np.int64)  # A, B, C [60, 60], D [60, 60]
    starts = np.array([10, 60, 60, 60, 120], dtype=np.int64)  # B, C, D, a launch at 60, 120
    before = np.array([1, 2, 3, 4, 4], dtype=np.int64)
    assert innermost(ends, before, starts).tolist() == [0, 1, 2, 3, -1]
    assert innermost(ends[:0], before[:0] * 0, starts[:0]).tolist() == []


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_the_tables_are_the_same_nested_in_numpy_and_in_python(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace of fewer than 4,096 operators and launches is nested in Python (no numpy
    loaded), a larger one in numpy: forced each way, in windows of 7 rows and writes of 5
    too, the operators, launches and ranges are row for row the same."""
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 1 << 30)
    python = _tables(path)
    assert python["operators"] and python["op_launches"]
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 0)
    assert _tables(path) == python
    monkeypatch.setattr(kineto_nest, "BATCH", 7)
    monkeypatch.setattr(kineto_nest, "WRITE", 5)  # the answers written 5 rows at a time
    assert _tables(path) == python


def test_an_empty_window_leaves_the_open_operators_open() -> None:
    """A window with no rows (a thread cut at starts that hold none) changes nothing: the
    operator open before it still holds the launch after it."""
    rows = [(0, 0, 100, 0), (0, 50, None, 1)]
    nesting = Nesting()
    first, last = _numpy_windows(rows, [1])
    nesting.add(first)
    nesting.add({c: v[:0] for c, v in first.items()})
    nesting.add(last)
    ops, launched = nesting.numbered()
    assert ops["seq"].tolist() == [0] and launched["op_id"].tolist() == [0]


def _kept(
    rows: list[tuple[Any, ...]], answers: dict[tuple[bool, Any], int]
) -> tuple[list[Any], dict[Any, int]]:
    """The kept operators (those a launch is in, and their parents, up) in the order of
    ``rows`` (the sweep's), by their seq, and each one's number (-1, none, stays -1)."""
    kept: set[int] = set()
    for (is_launch, _), up in answers.items():
        while is_launch and up >= 0 and up not in kept:
            kept.add(up)
            up = answers[(False, up)]
    order = [r[3] for r in rows if r[2] is not None and r[3] in kept]
    return order, {seq: n for n, seq in enumerate(order)} | {-1: -1}


def test_the_staged_and_nested_rows_are_compressed_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Staged through numpy (a trace of 4,096 rows or more), each batch of operators and
    launches, and each batch of nested operators and launches written, is compressed at
    once: every row group of ``operators`` and ``op_launches`` is checkpointed when the
    read ends; a small trace, staged as DuckDB lists, is not compacted."""
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 0)
    profile = load([str(H100)])
    for table in ("operators", "op_launches"):
        sql = f"SELECT DISTINCT persistent FROM pragma_storage_info('{table}')"
        assert profile.con.execute(sql).fetchall() == [(True,)], table
    monkeypatch.setattr(kineto_nest, "SMALL_BATCH", 1 << 30)
    profile = load([str(H100)])
    sql = "SELECT DISTINCT persistent FROM pragma_storage_info('operators')"
    assert profile.con.execute(sql).fetchall() == [(False,)]
