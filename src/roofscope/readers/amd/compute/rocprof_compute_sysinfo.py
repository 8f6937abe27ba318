"""What a rocprof-compute workload folder says about its machine (docs/formats/rocprof-compute.md,
"sysinfo.csv", "roofline.csv").

``sysinfo.csv`` is one header line and one row of values, in four versions: Omniperf 1.x
(``workload_name,host_name,...,gpu_soc,numSE,numCU,...,name,numSQC,hbmBW,ip_blocks``), 2.x
(``workload_name,command,...,gpu_model,gpu_arch,cu_per_gpu,...,hbm_bw,num_xcd,...``), 3.0-3.2
(adds ``gpu_series``, ``gpu_chip_id``, drops ``hbm_bw``) and 3.3 on (adds ``l2_banks``; the
newest start with ``workload_path``). Missing values are written empty, ``N/A``, ``NA`` or 0.
The ``hbm_bw``/``hbmBW`` value is the tool's computed peak, not a measurement: it is kept in
:func:`read_sysinfo`'s dict only, never made a ceiling.

``roofline.csv`` holds the peaks the bundled micro-benchmark measured, one row per device,
in GB/s and GFLOP/s (GOP/s for integers), each with ``Low``/``High`` confidence columns
(whose names carry typos: ``hbmBwHigh``, ``MFMAFI8OpsLow``; only the main columns are read).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from roofscope.catalogue.ceilings import Ceiling, plausible_peak
from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.sniff import read_text

MISSING = frozenset({"", "N/A", "NA", "n/a", "na", "None", "nan"})
LOG_HEAD_BYTES = 1 << 16
_TOOL_LINE = re.compile(r"^(Omniperf|Rocprofiler-Compute) version:\s*(\S+)", re.M | re.I)

# roofline.csv column -> (dtype, unit) of a compute ceiling, or the memory level
_COMPUTE = {
    "FP64Flops": ("fp64", "vector"),
    "FP32Flops": ("fp32", "vector"),
    "FP16Flops": ("fp16", "vector"),
    "BF16Flops": ("bf16", "vector"),
    "FP8Flops": ("fp8", "vector"),
    "I8Ops": ("int8", "vector"),
    "MFMAF64Flops": ("fp64", "matrix"),
    "MFMAF32Flops": ("fp32", "matrix"),
    "MFMAF16Flops": ("fp16", "matrix"),
    "MFMABF16Flops": ("bf16", "matrix"),
    "MFMAF8Flops": ("fp8", "matrix"),
    "MFMAI8Ops": ("int8", "matrix"),
}
_MEMORY = {"HBMBw": "hbm", "MALLBw": "mall", "L2Bw": "l2", "L1Bw": "vl1d", "LDSBw": "lds"}
GIGA = 1e9  # GB/s -> B/s, GFLOP/s -> FLOP/s


def read_sysinfo(path: Path) -> dict[str, str]:
    """The values row of ``sysinfo.csv`` as {column: value}, stripped, otherwise as written."""
    rows = [r for r in csv.reader(io.StringIO(read_text(path))) if any(f.strip() for f in r)]
    if len(rows) < 2:
        raise InputError(
            str(path),
            "has no row of values under its header",
            "re-run rocprof-compute profile (it writes sysinfo.csv when profiling starts)",
        )
    header, values = rows[0], rows[1]
    if len(values) != len(header):
        raise InputError(
            str(path),
            f"its values row has {len(values)} fields where the header names {len(header)}",
            "the file is damaged; copy it again from the workload folder",
            line=2,
        )
    info = {h.strip(): v.strip() for h, v in zip(header, values, strict=True)}
    for key, value in info.items():
        try:
            number = float(value)
        except ValueError:
            continue  # text (names, versions)
        if not abs(number) <= MAX_SYSINFO_NUMBER:  # NaN too
            raise InputError(
                str(path),
                f"field {key} = {value!r} is beyond any GPU's ({words.sig(MAX_SYSINFO_NUMBER)})",
                "the file is damaged; copy it again from the workload folder",
                line=2,
            )
    return info


MAX_SYSINFO_NUMBER = 1e15  # counts, clocks, sizes in bytes: none reaches a petabyte


def sysinfo_run(path: Path, info: dict[str, str]) -> RunInfo:
    """Producer, GPU, arch, compute units, XCDs, partition and the maximum engine and memory
    clocks (``max_sclk``/``max_mclk``, 1.x ``sclk``/``mclk``; no bus width) from a
    sysinfo.csv dict.

    ``gpu`` is ``gpu_model`` (2.x on) or ``name`` (1.x, written in lower case: ``mi100`` is
    given as ``MI100``); ``arch`` is ``gpu_arch`` or ``gpu_soc``. The producer is Omniperf up
    to sysinfo version 2 and rocprof-compute from 3 on; ``log.txt`` beside, when it names
    the tool and its version, says both exactly.
    """
    name = _text_value(info, "name")
    major = re.match(r"\d+", info.get("version", ""))  # 2, 3; absent in 1.x
    producer, tool_version = tool_from_log(path.parent) or (
        "rocprof-compute" if major and int(major.group()) >= 3 else "omniperf",
        None,
    )
    return RunInfo(
        producer=producer,
        producer_version=tool_version,
        gpu=_text_value(info, "gpu_model") or (name.upper() if name else None),
        arch=_text_value(info, "gpu_arch") or _text_value(info, "gpu_soc"),
        compute_units=_count(path, info, "cu_per_gpu") or _count(path, info, "numCU"),
        xcds=_count(path, info, "num_xcd"),
        partition=_text_value(info, "compute_partition"),
        clock_mhz=_clock(info, "max_sclk", "sclk"),
        memory_clock_mhz=_clock(info, "max_mclk", "mclk"),
    )


def _clock(info: dict[str, str], *keys: str) -> float | None:
    """The first of ``keys`` that holds a clock in MHz; None when absent or 0 (unknown).
    :func:`read_sysinfo` has bounded every number already."""
    for key in keys:
        try:
            mhz = float(_text_value(info, key) or "nan")
        except ValueError:
            continue
        if mhz > 0:
            return mhz
    return None


def tool_from_log(folder: Path) -> tuple[str, str] | None:
    """("omniperf" | "rocprof-compute", version) from the first lines of ``log.txt``."""
    try:
        with (folder / "log.txt").open("rb") as f:
            head = f.read(LOG_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    m = _TOOL_LINE.search(head)
    if m is None:
        return None
    return ("omniperf" if m.group(1).lower() == "omniperf" else "rocprof-compute"), m.group(2)


def ceiling_scope(partition: str | None) -> str:
    """What a measured peak covers: the device, or one partition of it (CPX: one XCD)."""
    if partition is None or partition.upper() == "SPX":
        return "device"
    return "xcd" if partition.upper() == "CPX" else partition.lower()


def read_roofline(path: Path, profile: Profile, *, scope: str) -> None:
    """Append the measured peaks of ``roofline.csv`` (device 0's) to ``profile.ceilings``."""
    rows = list(csv.DictReader(io.StringIO(read_text(path))))
    if not rows:
        raise InputError(str(path), "has no device row", "re-run the roofline benchmark")
    peaks = [{col: _peak(path, r, col) for col in (*_MEMORY, *_COMPUTE)} for r in rows]
    devices = [(r.get("device") or "").strip() for r in rows]
    chosen = devices.index("0") if "0" in devices else 0
    for col, value in peaks[chosen].items():
        if value is None:
            continue
        source = f"measured: {path} ({col})"
        if col in _MEMORY:
            ceiling = Ceiling("memory", value * GIGA, source, "measured", scope, level=_MEMORY[col])
        else:
            dtype, unit = _COMPUTE[col]
            ceiling = Ceiling("compute", value * GIGA, source, "measured", scope, dtype, unit)
        profile.ceilings.append(ceiling)
    _warn_if_devices_differ(path, profile, peaks, devices[chosen] or "?")
    profile.add_input(str(path), "rocprof-compute-roofline", len(rows), Role.METADATA)


def _warn_if_devices_differ(
    path: Path, profile: Profile, peaks: list[dict[str, float | None]], device: str
) -> None:
    spread = []
    for col in peaks[0]:
        values = [v for row in peaks if (v := row[col]) is not None]
        if len(set(values)) > 1:
            spread.append((max(values) / min(values), col, values))
    if not spread:
        return
    _, col, values = max(spread)
    unit = "GB/s" if col in _MEMORY else "GFLOP/s"
    profile.warn(
        "roofline-devices-differ",
        f"{path}: the measured peaks of its {len(peaks)} devices differ (e.g. {col} "
        f"{words.plain(min(values))} to {words.plain(max(values))} {unit}); the ceilings are "
        f"device {device}'s",
    )


def _peak(path: Path, row: dict[str, str | None], col: str) -> float | None:
    """A peak in GB/s or GFLOP/s; None when absent, empty or 0 (not supported)."""
    raw = (row.get(col) or "").strip()
    if raw in MISSING:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if value != 0 and not plausible_peak(value * GIGA):  # 0: not measured on this GPU
        raise InputError(
            str(path),
            f"field {col} = {raw!r} (device {row.get('device')}) is not a peak in GB/s or GFLOP/s",
            "re-run the roofline benchmark (rocprof-compute profile --roof-only)",
        )
    return value or None


def _text_value(info: dict[str, str], key: str) -> str | None:
    value = info.get(key, "")
    return None if value in MISSING else value


MAX_COUNT = 1_000_000  # compute units or XCDs of one GPU: a few hundred at most


def _count(path: Path, info: dict[str, str], key: str) -> int | None:
    """A whole number field; None when missing or 0 (how sysinfo writes 'unknown')."""
    value = _text_value(info, key)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not number.is_integer() or not 0 <= number <= MAX_COUNT:
        raise InputError(
            str(path),
            f"field {key} = {value!r} is not a whole number from 0 to {MAX_COUNT:,}",
            "the file is damaged; copy it again from the workload folder",
            line=2,
        )
    return int(number) or None
