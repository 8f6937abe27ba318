"""Per-process rocpd databases with the real schema, as a many-rank job leaves them.

    python bench/gen_rocpd.py OUT_DIR [--ranks 64] [--repeat 4] [--slow-rank 37] [--slow 1.2]

Each database is a copy of tests/data/rocpd-mi250x/finite-difference_results.db (rocprofv3's
DDL, 1004 dispatches) whose kernel dispatches and their events are repeated ``--repeat`` times,
one after another in time, so 64 ranks x 4 x 1004 = 257,024 dispatches. Every rank gets its own
pid (10000 + rank), its MPI rank in the process environment (OMPI_COMM_WORLD_RANK, which
roofscope reads as the rank) and its own file name ``<host>/<pid>_results.db``. On
``--slow-rank`` the dispatches of two kernels (the laplacian and the fill kernel) last
``--slow`` times as long. Only SQL inserts and updates on the copy; the template is untouched.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
from pathlib import Path

TEMPLATE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "data"
    / "rocpd-mi250x"
    / "finite-difference_results.db"
)
SLOW_KERNELS = ("laplacian_kernel", "fillBufferAligned")


def table(con: sqlite3.Connection, prefix: str) -> str:
    """The uuid-suffixed physical table behind a rocpd view."""
    (name,) = con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", (f"{prefix}_%",)
    ).fetchone()
    return str(name)


def columns(con: sqlite3.Connection, name: str) -> list[str]:
    return [str(r[1]) for r in con.execute(f"PRAGMA table_info('{name}')")]


def make_rank(out: Path, rank: int, repeat: int, slow: float) -> Path:
    pid = 10_000 + rank
    path = out / "node0" / f"{pid}_results.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TEMPLATE, path)
    con = sqlite3.connect(path)
    with con:
        event, kernel = table(con, "rocpd_event"), table(con, "rocpd_kernel_dispatch")
        process = table(con, "rocpd_info_process")
        extent = f'SELECT max(id), min(start), max("end") FROM {kernel}'
        (n, lo, hi) = con.execute(extent).fetchone()
        span = hi - lo + 1_000_000
        ev_cols, k_cols = columns(con, event), columns(con, kernel)
        for k in range(1, repeat):
            ev = ", ".join(f"id + {k * n}" if c == "id" else c for c in ev_cols)
            con.execute(f"INSERT INTO {event} SELECT {ev} FROM {event} WHERE id <= {n}")
            shifted = {
                "id": f"id + {k * n}",
                "event_id": f"event_id + {k * n}",
                "dispatch_id": f"dispatch_id + {k * n}",
                "start": f"start + {k * span}",
                "end": f'"end" + {k * span}',
            }
            sel = ", ".join(shifted.get(c, f'"{c}"') for c in k_cols)
            con.execute(f"INSERT INTO {kernel} SELECT {sel} FROM {kernel} WHERE id <= {n}")
        if slow != 1.0:
            symbol = table(con, "rocpd_info_kernel_symbol")
            like = " OR ".join(f"display_name LIKE '%{s}%'" for s in SLOW_KERNELS)
            con.execute(
                f"""UPDATE {kernel} SET "end" = start + CAST(round(("end" - start) * {slow})
                AS INTEGER) WHERE kernel_id IN (SELECT id FROM {symbol} WHERE {like})"""
            )
        (env,) = con.execute(f"SELECT environment FROM {process}").fetchone()
        environment = {**json.loads(env), "OMPI_COMM_WORLD_RANK": str(rank)}
        update = f"UPDATE {process} SET pid = ?, environment = ?"
        con.execute(update, (pid, json.dumps(environment)))
    con.close()
    return path


def generate(out: Path, ranks: int, repeat: int, slow_rank: int, slow: float) -> list[Path]:
    return [make_rank(out, r, repeat, slow if r == slow_rank else 1.0) for r in range(ranks)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--slow-rank", type=int, default=37)
    parser.add_argument("--slow", type=float, default=1.2)
    args = parser.parse_args()
    paths = generate(args.out, args.ranks, args.repeat, args.slow_rank, args.slow)
    print(f"wrote {len(paths)} databases under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
