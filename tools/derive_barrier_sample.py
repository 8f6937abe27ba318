"""Derive tests/data/rocprofv1-barrier-mi250x from the real rocprof v1 laplacian trace.

No permissively licensed rocprof v1 output with ``<barrier packet>`` rows was found (the one
public sample, a multi-GPU training job's results.stats.csv, carries no licence), so this
inserts barrier rows into the real MI250X trace the way rocprof v1's tblextr lists them:
one ``"<barrier packet>"`` row after every 100th ``laplacian_kernel`` dispatch, on queue 1 of
the same GPU, waiting for that dispatch: Begin, End and Complete are the dispatch's, the
launch fields are 0, ``sig``/``obj`` ``0x0``. Rows are renumbered (``Index``) in file order.
``results.stats.csv`` is then rebuilt from the rows as tblextr's ``gen_table_bins`` does
(calls, total, integer mean, total * 100 / sum of all totals, largest first); the same
function reproduces the real laplacian stats file byte for byte from the real trace,
which this script checks before writing.

Run: python tools/derive_barrier_sample.py (from the repository root).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

SOURCE = Path("tests/data/rocprofv1-mi250x/laplacian")
TARGET = Path("tests/data/rocprofv1-barrier-mi250x")
BARRIER = "<barrier packet>"
EVERY = 100


def stats(rows: list[list[str]]) -> str:
    """results.stats.csv of rows (KernelName at 1, DurationNs last), as tblextr bins them."""
    bins: dict[str, list[int]] = {}
    for row in rows:
        entry = bins.setdefault(row[1], [0, 0])
        entry[0] += 1
        entry[1] += int(row[-1])
    whole = sum(total for _, total in bins.values())
    lines = ['"Name","Calls","TotalDurationNs","AverageNs","Percentage"']
    for name, (calls, total) in sorted(bins.items(), key=lambda kv: -kv[1][1]):
        lines.append(f'"{name}",{calls},{total},{total // calls},{total * 100 / whole!r}')
    return "\n".join(lines) + "\n"


def with_barriers(header: list[str], rows: list[list[str]]) -> list[list[str]]:
    col = {name: i for i, name in enumerate(header)}
    out: list[list[str]] = []
    seen = queued = 0
    for row in rows:
        out.append(list(row))
        if row[col["KernelName"]] != "laplacian_kernel":
            continue
        if seen % EVERY == 0:
            barrier = ["0"] * len(header)
            for keep in ("gpu-id", "pid", "tid", "DispatchNs", "BeginNs", "EndNs", "CompleteNs"):
                barrier[col[keep]] = row[col[keep]]
            barrier[col["KernelName"]] = BARRIER
            barrier[col["queue-id"]], barrier[col["queue-index"]] = "1", str(queued)
            barrier[col["sig"]] = barrier[col["obj"]] = "0x0"
            barrier[col["DurationNs"]] = str(int(row[col["EndNs"]]) - int(row[col["BeginNs"]]))
            out.append(barrier)
            queued += 1
        seen += 1
    for index, row in enumerate(out):
        row[col["Index"]] = str(index)
    return out


def write_csv(header: list[str], rows: list[list[str]]) -> str:
    """rocprof v1's quoting: the header and the text fields quoted, numbers bare."""
    text = {"KernelName", "sig", "obj"}
    buf = io.StringIO()
    buf.write(",".join(f'"{h}"' for h in header) + "\n")
    for row in rows:
        fields = zip(header, row, strict=True)
        buf.write(",".join(f'"{v}"' if h in text else v for h, v in fields) + "\n")
    return buf.getvalue()


def main() -> None:
    original = (SOURCE / "results.csv").read_text()
    header, *rows = list(csv.reader(io.StringIO(original)))
    assert write_csv(header, rows) == original, "the writer must reproduce the real file"
    assert stats(rows) == (SOURCE / "results.stats.csv").read_text(), "tblextr's binning"
    derived = with_barriers(header, rows)
    TARGET.mkdir(exist_ok=True)
    (TARGET / "results.csv").write_text(write_csv(header, derived))
    (TARGET / "results.stats.csv").write_text(stats(derived))


if __name__ == "__main__":
    main()
