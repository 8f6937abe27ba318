"""How each kernel was launched against the device's compute units: its blocks (workgroups)
and their size, from the ``launches`` table.

Every reader stores ``grid_size`` in threads (work-items): rocprof's grids are work-items,
ncu's "Grid Size" in blocks is multiplied by its "Block Size" (readers/nvidia/ncu_launches.py),
nsys and Kineto likewise; so blocks = grid_size / workgroup_size everywhere (rounded up: a
last partial block is a block). A kernel with several shapes is described by its largest
grid: when even that one holds fewer blocks than the device has SMs (CUs), every launch of it
left SMs without work.

Nsight Compute also writes the waves of each launch (``launch__waves_per_multiprocessor``, its
"Waves Per SM": blocks over the blocks that fit on the device at once); a kernel's most waves
come with its shape where a profile has that counter.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from roofscope.model.access import all_dispatches, counter_values, launches, names, query
from roofscope.model.profile import Profile


class LaunchShape(msgspec.Struct, frozen=True):
    """The largest grid a kernel was launched with."""

    blocks: int  # workgroups (thread blocks) of that grid
    block_size: int  # threads (work-items) per block
    dispatches: int  # launches of the kernel with a known shape
    shapes: int  # distinct (grid, block) shapes among them
    waves: float | None = None  # ncu's most "Waves Per SM" of its launches, where written

    def per_unit(self, units: int) -> float:
        """Blocks per SM (CU): under 1, that share of the device has work; ncu's "waves"
        when one block fits per SM."""
        return self.blocks / units


def launch_shapes(profile: Profile, kernels: Sequence[str]) -> dict[str, LaunchShape]:
    """The largest grid of each of these kernels that has a launch shape."""
    if not kernels:
        return {}
    rows = query(
        profile,
        launches(profile),
        """SELECT n.kernel, max(blocks), arg_max(workgroup_size, blocks), sum(dispatches),
            count(DISTINCT (blocks, workgroup_size))
        FROM (SELECT name_id, workgroup_size, dispatches,
                (grid_size + workgroup_size - 1) // workgroup_size AS blocks
            FROM d WHERE grid_size > 0 AND workgroup_size > 0) JOIN n USING (name_id)
        WHERE n.kernel IN (SELECT unnest($1::VARCHAR[]))
        GROUP BY n.kernel""",
        [list(kernels)],
        n=names(profile),
    ).fetchall()
    waves = ncu_waves(profile, kernels)
    return {
        str(k): LaunchShape(int(blocks), int(size), int(calls or 0), int(shapes), waves.get(k))
        for k, blocks, size, calls, shapes in rows
    }


WAVES = "launch__waves_per_multiprocessor"


def ncu_waves(profile: Profile, kernels: Sequence[str]) -> dict[str, float]:
    """The most waves per SM Nsight Compute wrote for each of these kernels' launches (none
    where no input has the counter: asks DuckDB nothing then)."""
    ids = profile.known_counter_ids([WAVES])
    if not ids:
        return {}
    rows = query(
        profile,
        all_dispatches(profile),
        """SELECT n.kernel, max(c.value) FROM c JOIN d USING (row_id) JOIN n USING (name_id)
        WHERE c.counter_id = $1 AND c.value IS NOT NULL
            AND n.kernel IN (SELECT unnest($2::VARCHAR[]))
        GROUP BY n.kernel""",
        [ids[0], list(kernels)],
        c=counter_values(profile),
        n=names(profile),
    ).fetchall()
    return {str(k): float(w) for k, w in rows}
