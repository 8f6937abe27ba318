"""roofscope's streaming Kineto parser against compiled JSON tokenizers from maintained wheels,
on the same trace (issue 25, point 5): CPU seconds, wall seconds and peak RSS to read every
event of ``traceEvents`` and look at the fields the Kineto reader reads.

    python bench/kineto_tokenizers.py [--events 1000000] [--python PY]

``--python`` must have ijson, orjson and pysimdjson installed (contenders whose module is
missing are skipped); roofscope is imported from this checkout's src/. Contenders:

- ``stream``: roofscope's :class:`~roofscope.readers.io.json_stream.EventStream` (stdlib C
  scanner, one event at a time from a 1 MiB sliding buffer, floats as Decimal: exact);
- ``ijson``: ijson's yajl2_c backend, ``items(f, "traceEvents.item")`` (Decimal: exact);
- ``orjson-whole``: ``orjson.loads`` of the whole file (memory grows with the file);
- ``orjson-runs``: orjson on runs of whole lines (bounded), with what exact ns needs: a regex
  for ``ts``/``dur`` literals float64 cannot hold to the ns, and a type check of the fields
  read as integers (a float there must be read as Decimal);
- ``simdjson-runs``: pysimdjson's lazy objects on the same runs, no guards (floats, and a
  duplicated key gives its first value where ``json`` gives the last): the floor.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from kineto_bench import write_trace  # noqa: E402
from measure import run_one  # noqa: E402

CODE = r"""
import re, sys, time
sys.path.insert(0, sys.argv[3])
which, path = sys.argv[1], sys.argv[2]
KERNEL, n = ("kernel", "Kernel"), 0
FIELDS = ("device", "correlation", "stream", "shared memory", "registers per thread")
T = r"\s*:\s*-?(?:\d*\.\d{4}|[\d.]*[eE]|(?:[89]\d{12}|\d{14})\d*\.)"
TIMES = [re.compile(f'"{k}"{T}') for k in ("ts", "dur")]

def look(e):
    if e.get("ph") == "X" and e.get("cat") in KERNEL:
        a = e["args"]
        return (e["ts"], e["dur"], e["name"], e.get("pid"), e.get("tid"), a.get("grid"),
                a.get("block"), *(a.get(k) for k in FIELDS))

def exact(events):
    for e in events:
        if type(e) is dict and e.get("ph") == "X":
            if float in (type(e.get("name")), type(e.get("pid")), type(e.get("tid"))):
                return False
            a = e.get("args") if e.get("cat") in KERNEL else None
            if type(a) is dict and any(type(a.get(k)) is float for k in FIELDS):
                return False
            dims = [*(a.get("grid") or ()), *(a.get("block") or ())] if type(a) is dict else []
            if any(type(d) is float for d in dims):
                return False
    return True

def runs(f):
    buf = f.read(1 << 16)
    buf = buf[buf.index(b'"traceEvents"'):]
    buf = buf[buf.index(b"[") + 1:]
    while chunk := f.read(1 << 20):
        buf += chunk
        cut = buf.rfind(b"\n")
        piece, buf = buf[:cut].rstrip(), buf[cut:]
        if piece.endswith(b","):
            yield b"[" + piece[:-1] + b"]"
        else:
            buf = piece + buf  # the last run is left to the exact path: not timed here

start = time.perf_counter()
if which == "stream":
    from roofscope.readers.io.json_stream import EventStream, open_text
    from pathlib import Path
    with open_text(Path(path), gzipped=False) as text:
        for e in EventStream(text, path).events():
            n += 1; look(e)
elif which == "ijson":
    import ijson
    with open(path, "rb") as f:
        for e in ijson.items(f, "traceEvents.item", buf_size=1 << 20):
            n += 1; look(e)
elif which == "orjson-whole":
    import orjson
    with open(path, "rb") as f:
        for e in orjson.loads(f.read())["traceEvents"]:
            n += 1; look(e)
elif which == "orjson-runs":
    import orjson
    with open(path, "rb") as f:
        for run in runs(f):
            if b"\\u" in run or any(p.search(run.decode()) for p in TIMES):
                sys.exit("a run needs the exact path")
            events = orjson.loads(run)
            if not exact(events):
                sys.exit("a run needs the exact path")
            for e in events:
                n += 1; look(e)
elif which == "simdjson-runs":
    import simdjson
    parser = simdjson.Parser()
    with open(path, "rb") as f:
        for run in runs(f):
            events = parser.parse(run)
            for e in events:
                n += 1; x = look(e)
            e = x = events = None
print(n, time.process_time())
"""
CONTENDERS = ("stream", "ijson", "orjson-whole", "orjson-runs", "simdjson-runs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    src = str(HERE.parent / "src")
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "rank-0.pt.trace.json"
        write_trace(trace, args.events)
        print(f"{args.events:,} events, {trace.stat().st_size / 2**20:.0f} MiB")
        print(f"{'contender':<15}{'CPU s':>8}{'wall s':>8}{'peak MiB':>10}")
        for name in CONTENDERS:
            cmd = [args.python, "-c", CODE, name, str(trace), src]
            probe = subprocess.run([args.python, "-c", _IMPORT.get(name, "")], check=False)
            if probe.returncode:
                print(f"{name:<15} skipped (not installed)")
                continue
            with tempfile.TemporaryFile() as out:
                run = run_one(name, cmd, stdout=out)
                out.seek(0)
                events, cpu = out.read().split() or (b"0", b"nan")
            what = f"{float(cpu):>8.2f}{run.wall_s:>8.2f}{run.peak_rss_mb:>10.0f}"
            print(f"{name:<15}{what}  ({int(events):,} events)")
    return 0


_IMPORT = {"ijson": "import ijson", "orjson-whole": "import orjson"}
_IMPORT |= {"orjson-runs": "import orjson", "simdjson-runs": "import simdjson"}

if __name__ == "__main__":
    raise SystemExit(main())
