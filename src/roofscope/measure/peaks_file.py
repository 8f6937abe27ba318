"""The ``--ceilings`` file that ``roofscope peaks`` writes: the best measurement per ceiling in
SI units, with the device, the method and every timed run as provenance."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from roofscope.catalogue.ceilings import DTYPES, LEVELS, UNITS
from roofscope.errors import UsageError
from roofscope.measure.peaks import DeviceInfo, Measurement, Skipped
from roofscope.outfile import write_atomically
from roofscope.render.numbers import si

_UNIT = {"compute": "FLOP/s", "memory": "B/s"}  # a measurement's rate, by its kind


class Provenance(msgspec.Struct, frozen=True):
    device: int  # the index measured
    info: DeviceInfo
    date: str  # ISO 8601, e.g. "2025-06-01T12:00:00+00:00"
    warmups: int
    repeats: int

    @property
    def method(self) -> str:
        return (
            f"roofscope peaks on {self.info.name} (device {self.device}), {self.date}: "
            f"median of {self.repeats} event-timed runs after {self.warmups} warm-ups"
        )


def scope_of(info: DeviceInfo) -> str:
    """What the measured device is of its product: "gcd" for one MI250X GCD, else "device".

    Decided by the catalogue: the products the name may be whose whole or one partition has
    the compute units seen; when those disagree, or none fits, "device".
    """
    from roofscope.catalogue import devices

    cu = info.compute_units
    found = devices.find(info.name)
    pool = [found] if found else devices.candidates(info.name)
    fits = [
        d for d in pool if cu is not None and cu in (d.compute_units, d.partition_compute_units)
    ]
    scopes = {devices.scope_for(d, cu) for d in fits}
    return scopes.pop() if len(scopes) == 1 else "device"


def best_per_ceiling(results: Iterable[Measurement | Skipped]) -> dict[str, Measurement]:
    """The highest measurement per ``[ceilings]`` key, memory levels first, then compute;
    a cache level below ``hbm`` left out (see :func:`below_memory`)."""
    best = _all_best(results)
    for dropped in below_memory(best):
        del best[dropped.name]
    return dict(sorted(best.items(), key=lambda kv: _order(kv[1])))


def below_memory(best: dict[str, Measurement]) -> list[Skipped]:
    """Cache levels whose best measurement is below the ``hbm`` one: a cache is not slower
    than the memory behind it, so the benchmark did not reach the cache's rate (launch gaps,
    a buffer that left the cache) and the value would make every kernel look cache-bound."""
    hbm = best.get("hbm")
    if hbm is None:
        return []
    return [
        Skipped(
            key,
            f"measured {human(m)} ({m.name}), below hbm {human(hbm)}: a cache is not slower "
            "than memory, so the benchmark missed its rate; not written",
        )
        for key, m in best.items()
        if m.kind == "memory" and key != "hbm" and m.value < hbm.value
    ]


def _order(m: Measurement) -> tuple[int, int, int]:
    if m.kind == "memory":
        return (0, LEVELS.index(m.level or "hbm"), 0)
    return (1, DTYPES.index(m.dtype or "fp32"), UNITS.index(m.unit or "vector"))


def ceilings_toml(
    results: Sequence[Measurement | Skipped], provenance: Provenance, *, scope: str = "device"
) -> str:
    """The ``--ceilings`` file: ``[ceilings]`` in SI units, then ``[provenance]``."""
    best = best_per_ceiling(results)
    lines = [
        f"# Ceilings of {provenance.info.name} measured by roofscope peaks ({provenance.date}).",
        "# SI units: B/s for memory levels, FLOP/s for DTYPE-UNIT; read by --ceilings.",
        f"scope = {_str(scope)}",
        "",
        "[ceilings]",
        *(f"{k} = {m.value!r}  # {human(m)}" for k, m in best.items()),
        "",
        "[provenance]",
        *_provenance_lines(provenance),
        "",
        "[provenance.methods]",
        *(f"{k} = {_str(_method(k, m, results))}" for k, m in best.items()),
        "",
        "[provenance.runs_s]",
        *(f"{m.name} = [{', '.join(map(repr, m.runs_s))}]" for m in _measured(results)),
    ]
    skipped = [r for r in results if isinstance(r, Skipped)]
    skipped += below_memory(_all_best(results))
    if skipped:
        lines += ["", "[provenance.skipped]", *(f"{s.name} = {_str(s.reason)}" for s in skipped)]
    return "\n".join(lines) + "\n"


def _all_best(results: Iterable[Measurement | Skipped]) -> dict[str, Measurement]:
    """The highest measurement per ``[ceilings]`` key."""
    best: dict[str, Measurement] = {}
    for m in _measured(results):
        if m.ceiling not in best or m.value > best[m.ceiling].value:
            best[m.ceiling] = m
    return best


def _measured(results: Iterable[Measurement | Skipped]) -> list[Measurement]:
    return [r for r in results if isinstance(r, Measurement)]


def _provenance_lines(p: Provenance) -> list[str]:
    i = p.info
    fields: dict[str, str | int | None] = {
        "method": p.method,
        "gpu": i.name,
        "device": p.device,
        "arch": i.arch,
        "compute_units": i.compute_units,
        "runtime": i.runtime,
        "framework": i.framework,
        "driver": i.driver,
        "clock_mhz": i.clock_mhz,
        "l2_bytes": i.l2_bytes,
        "memory_bytes": i.memory_bytes,
        "date": p.date,
        "warmups": p.warmups,
        "repeats": p.repeats,
    }
    return [
        f"{k} = {_str(v) if isinstance(v, str) else v}" if v is not None else f"# {k}: not readable"
        for k, v in fields.items()
    ]


def _method(key: str, chosen: Measurement, results: Sequence[Measurement | Skipped]) -> str:
    rivals = [m for m in _measured(results) if m.ceiling == key]
    if len(rivals) == 1:
        return chosen.method
    each = ", ".join(f"{m.name} {si(m.value, _UNIT[m.kind])}" for m in rivals)
    return f"highest of {each}: {chosen.name}, {chosen.method}"


def human(m: Measurement) -> str:
    return si(m.value, "B/s" if m.kind == "memory" else "FLOP/s")


def _str(text: str) -> str:
    """A TOML basic string."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def write_ceilings(
    results: Sequence[Measurement | Skipped],
    provenance: Provenance,
    path: Path,
    *,
    scope: str = "device",
    force: bool = False,
) -> None:
    """Write the ceilings file through a temporary file in the same folder and a rename."""
    if not best_per_ceiling(results):
        raise UsageError(f"{path}: no ceiling was measured (every benchmark skipped); not written")
    write_atomically(path, ceilings_toml(results, provenance, scope=scope), force=force)
