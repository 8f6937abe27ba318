"""roofscope peaks: the arithmetic, the measurement on a fake backend, the ceilings file."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roofscope.catalogue.ceilings import read_ceilings_file
from roofscope.errors import UsageError
from roofscope.measure import peaks, peaks_file
from roofscope.measure.peaks import (
    HBM_BYTES,
    MATRIX_N,
    VECTOR_ELEMENTS,
    VECTOR_STEPS,
    DeviceInfo,
    Measurement,
    Prepared,
    Skipped,
    Unsupported,
    copy_bandwidth,
    fma_flops,
    matmul_flops,
    measure,
    rate,
    timed_runs,
    triad_bandwidth,
)
from roofscope.measure.peaks_file import Provenance, write_ceilings

GIB = 2**30

# --- the arithmetic ------------------------------------------------------------------------


def test_copy_counts_read_and_write() -> None:
    assert copy_bandwidth(GIB, [1.25e-3]) == 2 * 2**30 / 1.25e-3  # 1717986918400.0 B/s


def test_triad_counts_three_arrays() -> None:
    assert triad_bandwidth(GIB, [2e-3]) == 3 * 2**30 / 2e-3


def test_matmul_counts_two_flops_per_multiply_add() -> None:
    assert matmul_flops(8192, 8192, 8192, [5e-4]) == 2 * 8192**3 / 5e-4  # 2.2e15 FLOP/s


def test_fma_counts_two_flops_per_step() -> None:
    assert fma_flops(2**26, 512, [1e-3]) == 2 * 2**26 * 512 / 1e-3


def test_rate_is_work_over_the_median_run() -> None:
    assert rate(10.0, [1.0, 5.0, 2.0]) == 5.0  # median 2 s
    assert rate(10.0, [1.0, 2.0, 3.0, 4.0]) == 4.0  # median 2.5 s


def test_warmups_are_discarded_before_the_median() -> None:
    runs = timed_runs([9.0, 9.0, 9.0, 1e-3, 2e-3, 3e-3], 3)
    assert runs == (1e-3, 2e-3, 3e-3)
    assert copy_bandwidth(1000, runs) == 2000 / 2e-3
    with pytest.raises(ValueError, match="leave none"):
        timed_runs([1.0, 2.0], 2)


def test_a_zero_time_is_refused() -> None:
    with pytest.raises(ValueError, match="not a positive time"):
        rate(1.0, [0.0])


def test_a_measurement_holds_a_positive_finite_rate() -> None:
    with pytest.raises(ValueError, match="hbm-copy"):
        Measurement("hbm-copy", "memory", float("inf"), 1, (1.0,), "m", level="hbm")


# --- the measurement on a fake backend -----------------------------------------------------

H200 = DeviceInfo(
    name="NVIDIA H200",
    runtime="CUDA 12.4",
    framework="PyTorch 2.5.1",
    arch="sm_90",
    driver="550.54.15",
    clock_mhz=1980,
    compute_units=132,
    l2_bytes=60 * 2**20,
    memory_bytes=141 * 10**9,
)
L2_COPY_BYTES = 60 * 2**20 // 4  # a quarter of the L2, already a multiple of 256


def three(median_s: float) -> list[float]:
    """Three warm-ups far off the runs that count, then three runs around ``median_s``."""
    return [9.0, 9.0, 9.0, median_s * 0.5, median_s, median_s * 1.5]


TIMES = {
    f"copy {HBM_BYTES}": three(1.25e-3),
    "triad": three(2e-3),
    f"copy {L2_COPY_BYTES}": three(1e-3),
    f"reread {L2_COPY_BYTES} x {peaks.L2_READS}": three(2e-4),
    "matmul fp64": three(20e-3),
    "matmul fp32": three(25e-3),
    "matmul fp16": three(1e-3),
    "matmul bf16": three(5e-4),
    "fma fp32": three(2e-3),
    "fma fp64": three(4e-3),
}


class Buffer:
    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes


class FakeBackend:
    """Deterministic timings by operation; tf32 and fp8 unsupported, as on an older GPU."""

    def __init__(self, info: DeviceInfo = H200, times: dict[str, list[float]] = TIMES) -> None:
        self.device: int | None = None
        self._info = info
        self._times = times
        self._last = ""
        self.timed: Counter[str] = Counter()  # elapsed_s calls per operation
        self.ops: Counter[str] = Counter()  # operations run, timed or not

    def _did(self, label: str) -> None:
        self._last = label
        self.ops[label] += 1

    def use(self, device: int) -> None:
        self.device = device

    def info(self) -> DeviceInfo:
        return self._info

    def allocate(self, nbytes: int) -> Any:
        return Buffer(nbytes)

    def copy(self, dst: Any, src: Any) -> None:
        assert dst.nbytes == src.nbytes
        self._did(f"copy {src.nbytes}")

    def reread(self, src: Any, window: int, times: int) -> None:
        assert src.nbytes == 2 * window
        self._did(f"reread {window} x {times}")

    def triad(self, a: Any, b: Any, c: Any, scalar: float) -> None:
        self._did("triad")

    def matrices(self, n: int, dtype: str) -> Prepared:
        assert n == MATRIX_N
        if dtype == "tf32":
            raise Unsupported("TF32 needs compute capability 8.0 or newer; this is 7.0")
        if dtype == "fp8":
            raise Unsupported("PyTorch 2.0.1 has no float8 matrix product")
        return Prepared(dtype, f"fake matmul, {dtype}")

    def matmul(self, operands: Any) -> None:
        self._did(f"matmul {operands}")

    def vectors(self, elements: int, steps: int, dtype: str) -> Prepared:
        assert (elements, steps) == (VECTOR_ELEMENTS, VECTOR_STEPS)
        return Prepared(dtype, f"fake chain, {dtype}")

    def fma(self, operands: Any) -> None:
        self._did(f"fma {operands}")

    def synchronize(self) -> None:
        pass

    def elapsed_s(self, op: Callable[[], None]) -> float:
        op()
        k = self.timed[self._last]
        self.timed[self._last] += 1
        return self._times[self._last][k]


def by_name(results: list[Measurement | Skipped]) -> dict[str, Measurement | Skipped]:
    return {r.name: r for r in results}


def test_measure_runs_every_benchmark_and_records_the_skipped() -> None:
    backend = FakeBackend()
    results = measure(backend, device=1, warmups=3, repeats=3)
    assert backend.device == 1
    assert [r.name for r in results] == [
        "hbm-copy", "hbm-triad", "l2-copy", "l2-read",
        "fp64-matrix", "fp32-matrix", "tf32-matrix", "fp16-matrix", "bf16-matrix", "fp8-matrix",
        "fp32-vector", "fp64-vector",
    ]  # fmt: skip
    assert [r for r in results if isinstance(r, Skipped)] == [
        Skipped("tf32-matrix", "TF32 needs compute capability 8.0 or newer; this is 7.0"),
        Skipped("fp8-matrix", "PyTorch 2.0.1 has no float8 matrix product"),
    ]
    assert set(backend.timed.values()) == {6}  # 3 warm-ups + 3 repeats each
    assert backend.ops[f"copy {L2_COPY_BYTES}"] == 6 * peaks.L2_COPIES


def test_measure_values_are_the_work_over_the_median_of_the_repeats() -> None:
    found = by_name(measure(FakeBackend(), warmups=3, repeats=3))
    values = {name: r.value for name, r in found.items() if isinstance(r, Measurement)}
    assert values == {
        "hbm-copy": 2 * 2**30 / 1.25e-3,
        "hbm-triad": 3 * 2**30 / 2e-3,
        "l2-copy": 2 * L2_COPY_BYTES * peaks.L2_COPIES / 1e-3,
        "l2-read": L2_COPY_BYTES * 64 / 2e-4,  # 64 reads of 15 MiB: 5.03e12 B/s
        "fp64-matrix": 2 * 8192**3 / 20e-3,
        "fp32-matrix": 2 * 8192**3 / 25e-3,
        "fp16-matrix": 2 * 8192**3 / 1e-3,
        "bf16-matrix": 2 * 8192**3 / 5e-4,
        "fp32-vector": 2 * 2**26 * 512 / 2e-3,
        "fp64-vector": 2 * 2**26 * 512 / 4e-3,
    }
    bf16 = found["bf16-matrix"]
    assert isinstance(bf16, Measurement)
    assert (bf16.kind, bf16.dtype, bf16.unit, bf16.level) == ("compute", "bf16", "matrix", None)
    assert (bf16.repeats, bf16.runs_s) == (3, (5e-4 * 0.5, 5e-4, 5e-4 * 1.5))
    assert bf16.method == "8192x8192x8192 matrix product (fake matmul, bf16); counts 2*M*N*K FLOPs"
    copy = found["hbm-copy"]
    assert isinstance(copy, Measurement)
    assert (copy.kind, copy.level, copy.ceiling) == ("memory", "hbm", "hbm")
    assert copy.method == "device-to-device copy of 1 GiB; counts 2 x bytes (read + write)"


def test_an_unknown_l2_size_skips_the_l2_benchmark() -> None:
    info = DeviceInfo("Some GPU", "HIP 6.2", "PyTorch 2.5.1")
    found = by_name(measure(FakeBackend(info), warmups=3, repeats=3))
    assert found["l2-copy"] == Skipped(
        "l2-copy", "the L2 size is unknown (not in the device properties)"
    )
    assert found["l2-read"] == Skipped(
        "l2-read", "the L2 size is unknown (not in the device properties)"
    )


def test_an_allocation_that_fails_skips_only_its_benchmark() -> None:
    class Small(FakeBackend):
        def allocate(self, nbytes: int) -> Any:
            if nbytes >= HBM_BYTES:
                raise Unsupported("cannot allocate 1 GiB (out of memory)")
            return Buffer(nbytes)

    found = by_name(measure(Small(), warmups=3, repeats=3))
    assert found["hbm-copy"] == Skipped("hbm-copy", "cannot allocate 1 GiB (out of memory)")
    assert found["hbm-triad"] == Skipped("hbm-triad", "cannot allocate 1 GiB (out of memory)")
    assert isinstance(found["l2-copy"], Measurement)


@pytest.mark.parametrize(
    ("warmups", "repeats", "message"),
    [(-1, 10, "--warmups -1: give 0 or more"), (3, 0, "--repeats 0: give 1 or more")],
)
def test_measure_refuses_impossible_counts(warmups: int, repeats: int, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        measure(FakeBackend(), warmups=warmups, repeats=repeats)


# --- the ceilings file ---------------------------------------------------------------------

PROVENANCE = Provenance(device=0, info=H200, date="2025-06-01T12:00:00+00:00", warmups=3, repeats=3)


def measured() -> list[Measurement | Skipped]:
    return measure(FakeBackend(), warmups=3, repeats=3)


def test_the_file_round_trips_through_read_ceilings_file(tmp_path: Path) -> None:
    results = measured()
    path = tmp_path / "h200.toml"
    write_ceilings(results, PROVENANCE, path)
    read = {c.name: c for c in read_ceilings_file(path)}
    values = {r.name: r.value for r in results if isinstance(r, Measurement)}
    expected = {name.removesuffix("-copy"): v for name, v in values.items()} | {
        "hbm": max(values["hbm-copy"], values["hbm-triad"]),
        "l2": max(values["l2-copy"], values["l2-read"]),
    }
    del expected["hbm-triad"], expected["l2-read"]
    assert {name: c.value for name, c in read.items()} == expected
    assert read["hbm"].value == 2 * 2**30 / 1.25e-3  # the copy beat the triad here
    assert read["l2"].value == 15 * 2**20 * 64 / 2e-4  # the read beat the copies
    assert {c.scope for c in read.values()} == {"device"}
    assert read["bf16-matrix"].source == (
        f"user: {path} (roofscope peaks on NVIDIA H200 (device 0), 2025-06-01T12:00:00+00:00: "
        "median of 3 event-timed runs after 3 warm-ups)"
    )


def test_the_provenance_holds_methods_runs_and_skips(tmp_path: Path) -> None:
    path = tmp_path / "h200.toml"
    write_ceilings(measured(), PROVENANCE, path, scope="device")
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    p = doc["provenance"]
    assert p | {"methods": None, "runs_s": None, "skipped": None} == {
        "method": PROVENANCE.method,
        "gpu": "NVIDIA H200",
        "device": 0,
        "arch": "sm_90",
        "compute_units": 132,
        "runtime": "CUDA 12.4",
        "framework": "PyTorch 2.5.1",
        "driver": "550.54.15",
        "clock_mhz": 1980,
        "l2_bytes": 60 * 2**20,
        "memory_bytes": 141 * 10**9,
        "date": "2025-06-01T12:00:00+00:00",
        "warmups": 3,
        "repeats": 3,
        "methods": None,
        "runs_s": None,
        "skipped": None,
    }
    # 2 GiB / 1.25 ms = 1.718e12 B/s and 3 GiB / 2 ms = 1.611e12 B/s, to 3 figures
    assert p["methods"]["hbm"].startswith("highest of hbm-copy 1.72 TB/s, hbm-triad 1.61 TB/s:")
    assert p["runs_s"]["fp64-matrix"] == [20e-3 * 0.5, 20e-3, 20e-3 * 1.5]
    assert p["skipped"] == {
        "tf32-matrix": "TF32 needs compute capability 8.0 or newer; this is 7.0",
        "fp8-matrix": "PyTorch 2.0.1 has no float8 matrix product",
    }


def test_a_cache_measured_below_memory_is_not_written(tmp_path: Path) -> None:
    """On an H200 the L2 copies (a few microseconds each) reached 3.57 TB/s, below the
    4.3 TB/s of HBM: written, that L2 would make every kernel look cache-bound."""
    slow = dict(TIMES) | {
        f"copy {L2_COPY_BYTES}": three(5e-3),  # 2 * 15 MiB * 64 / 5 ms = 0.403 TB/s
        f"reread {L2_COPY_BYTES} x 64": three(4e-3),  # 15 MiB * 64 / 4 ms = 0.252 TB/s
    }
    results = measure(FakeBackend(times=slow), warmups=3, repeats=3)
    path = tmp_path / "h200.toml"
    write_ceilings(results, PROVENANCE, path)
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "l2" not in doc["ceilings"]
    assert doc["ceilings"]["hbm"] == 2 * 2**30 / 1.25e-3  # 1.72 TB/s
    assert doc["provenance"]["skipped"]["l2"] == (
        "measured 403 GB/s (l2-copy), below hbm 1.72 TB/s: a cache is not slower than "
        "memory, so the benchmark missed its rate; not written"
    )


GOLDEN = """\
# Ceilings of NVIDIA H200 measured by roofscope peaks (2025-06-01T12:00:00+00:00).
# SI units: B/s for memory levels, FLOP/s for DTYPE-UNIT; read by --ceilings.
scope = "gcd"

[ceilings]
hbm = 1717986918400.0  # 1.72 TB/s
bf16-matrix = 2199023255552000.0  # 2.2 PFLOP/s

[provenance]
method = "roofscope peaks on NVIDIA H200 (device 0), 2025-06-01T12:00:00+00:00: \
median of 3 event-timed runs after 3 warm-ups"
gpu = "NVIDIA H200"
device = 0
# arch: not readable
# compute_units: not readable
runtime = "CUDA 12.4"
framework = "PyTorch 2.5.1"
# driver: not readable
# clock_mhz: not readable
# l2_bytes: not readable
# memory_bytes: not readable
date = "2025-06-01T12:00:00+00:00"
warmups = 3
repeats = 3

[provenance.methods]
hbm = "copy \\"1 GiB\\""
bf16-matrix = "matmul"

[provenance.runs_s]
bf16-matrix = [0.0005]
hbm-copy = [0.00125]

[provenance.skipped]
fp8-matrix = "no float8\\u000anext line"
"""


def test_the_file_text_is_exact() -> None:
    results: list[Measurement | Skipped] = [
        Skipped("fp8-matrix", "no float8\nnext line"),
        Measurement("bf16-matrix", "compute", 2 * 8192**3 / 5e-4, 1, (5e-4,), "matmul",
                    dtype="bf16", unit="matrix"),
        Measurement("hbm-copy", "memory", 2 * 2**30 / 1.25e-3, 1, (1.25e-3,), 'copy "1 GiB"',
                    level="hbm"),
    ]  # fmt: skip
    bare = DeviceInfo("NVIDIA H200", "CUDA 12.4", "PyTorch 2.5.1")
    provenance = Provenance(0, bare, "2025-06-01T12:00:00+00:00", 3, 3)
    assert peaks_file.ceilings_toml(results, provenance, scope="gcd") == GOLDEN
    assert tomllib.loads(GOLDEN)["provenance"]["skipped"]["fp8-matrix"] == "no float8\nnext line"


def test_an_existing_file_is_kept_without_force(tmp_path: Path) -> None:
    path = tmp_path / "h200.toml"
    path.write_text("mine\n", encoding="utf-8")
    with pytest.raises(UsageError) as e:
        write_ceilings(measured(), PROVENANCE, path)
    assert str(e.value) == f"{path}: exists; pass --force to overwrite it, or another path"
    assert path.read_text(encoding="utf-8") == "mine\n"
    write_ceilings(measured(), PROVENANCE, path, force=True)
    assert read_ceilings_file(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h200.toml"]  # no temporary file left


def test_the_file_is_readable_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "h200.toml"
    write_ceilings(measured(), PROVENANCE, path)
    fresh = tmp_path / "fresh"
    fresh.write_text("", encoding="utf-8")
    assert path.stat().st_mode & 0o777 == fresh.stat().st_mode & 0o777


def test_an_unwritable_folder_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "h200.toml"
    with pytest.raises(UsageError, match=r"h200\.toml: cannot be written \(No such file"):
        write_ceilings(measured(), PROVENANCE, path)
    assert list(tmp_path.iterdir()) == []


def test_nothing_measured_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h200.toml"
    with pytest.raises(UsageError, match="no ceiling was measured"):
        write_ceilings([Skipped("hbm-copy", "out of memory")], PROVENANCE, path)
    assert not path.exists()


@pytest.mark.parametrize(
    ("name", "compute_units", "scope"),
    [
        ("AMD Instinct MI250X", 110, "gcd"),  # one GCD, as ROCm shows it
        ("AMD Instinct MI250X / MI250", 110, "gcd"),  # shared name: only the MI250X fits 110
        ("AMD Instinct MI250X", 220, "device"),
        ("NVIDIA H200", 132, "device"),
        ("NVIDIA H200", None, "device"),
        ("Unknown GPU", 80, "device"),
    ],
)
def test_scope_of_follows_the_catalogue(name: str, compute_units: int | None, scope: str) -> None:
    info = DeviceInfo(name, "HIP 6.2", "PyTorch 2.5.1", compute_units=compute_units)
    assert peaks_file.scope_of(info) == scope


# --- whether a GPU can be measured here ----------------------------------------------------

NOT_INSTALLED = "PyTorch is not installed: pip install torch (a CUDA or ROCm build)"


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="PyTorch is here")
def test_no_gpu_reason_here_is_the_missing_pytorch() -> None:
    assert peaks.no_gpu_reason() == NOT_INSTALLED


def fake_torch(available: bool) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: available)  # type: ignore[attr-defined]
    return torch


def test_no_gpu_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # an import of torch raises ImportError
    assert peaks.no_gpu_reason() == NOT_INSTALLED
    monkeypatch.setitem(sys.modules, "torch", fake_torch(available=False))
    assert peaks.no_gpu_reason() == (
        "no GPU visible to PyTorch (torch.cuda.is_available() is False)"
    )
    monkeypatch.setitem(sys.modules, "torch", fake_torch(available=True))
    assert peaks.no_gpu_reason() is None


# -- the command ----------------------------------------------------------------------------


def test_peaks_without_a_gpu_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from roofscope.cli.app import main

    assert main(["peaks"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "PyTorch is not installed" in err


def test_peaks_writes_a_ceilings_file_that_analyze_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command on the fake backend: the file it writes is what write_ceilings makes of
    the same results, and `analyze --ceilings` takes it (its HBM value becomes the roof)."""
    import roofscope.measure.peaks as peaks_module
    import roofscope.measure.peaks_torch as torch_module
    from roofscope.cli.app import main
    from tests.conftest import DEMO

    monkeypatch.setattr(peaks_module, "no_gpu_reason", lambda: None)
    monkeypatch.setattr(torch_module, "TorchBackend", FakeBackend)
    out = tmp_path / "mine.toml"
    assert main(["peaks", "-o", str(out), "--repeats", "3"]) == 0
    assert capsys.readouterr().out == f"{out}\n"
    hbm = read_ceilings_file(out)
    (ceiling,) = [c for c in hbm if c.kind == "memory" and c.level == "hbm"]
    expected = max(
        m.value for m in measured() if isinstance(m, Measurement) and m.kind == "memory"
        and m.level == "hbm"
    )  # fmt: skip
    assert ceiling.value == expected
    assert main(["peaks", "-o", str(out), "--repeats", "3"]) == 2  # exists: needs --force
    capsys.readouterr()
    assert main(["analyze", str(DEMO), "--ceilings", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any(c["value"] == expected for c in doc["device"]["ceilings"] if c["level"] == "hbm")
