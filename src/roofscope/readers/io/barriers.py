"""Records a profiler lists among its kernels that are no kernel execution: barrier packets.

The one place that decides, by name, that a record is a barrier/marker packet.

rocprof v1 writes them: ``tblextr.py`` (``fill_ops_db``, ROCm/rocprofiler ``bin/tblextr.py``)
renames every HIP op whose name matches ``Marker`` to ``"<barrier packet>"`` and stores it
with the kernels (the ``OPS`` table, whose bins become ``results.stats.csv``), and writes its
events to ``results.json`` in the process ``GPU Barriers<n>`` (pid ``6 + gpu-id + 512``).
In a public multi-GPU training profile (gfx942 GEMMs, RCCL; ``results.stats.csv``) 85,112 such
records held 142.98 s, 35.76 % of what the file calls kernel time.

What they mean: an AQL barrier-AND/OR packet holds its queue until the completion signals it
depends on are done (a kernel on another queue, a copy, another GPU in a collective, the
host). Its begin-to-end time is therefore mostly waiting, not GPU work, and is kept out of
kernel time, the hotspots, the timeline's busy time, the rank view and compare's matching.

Checked and found not to write such records as kernels (so nothing is matched there):
rocprofv3 ``kernel_trace.csv`` and rocpd (kernel-dispatch records only); Kineto on ROCm
(``RoctracerActivityApi`` drops ``HIP_OP_ID_BARRIER``: "Don't record barriers/markers");
Kineto and Nsight Systems on CUDA (synchronisation has its own category, ``cuda_sync``,
never ``kernel``).
"""

from __future__ import annotations

# The names, exactly: with and without the double quotes tblextr keeps in the name it stores
# (a CSV reader drops them, the results.json recovery keeps them). An exact comparison costs
# a scan of millions of rows next to nothing (trimming each name first slowed the load).
BARRIER_NAMES = ("<barrier packet>", '"<barrier packet>"')

MEANING = (
    "a barrier packet holds its queue until the signals it depends on complete, so its time "
    "is mostly waiting on dependencies or other devices (kernels on other queues, copies, "
    "other GPUs, the host), not GPU work"
)


def is_barrier(raw_name: str) -> bool:
    """Whether a raw record name is a barrier/marker packet, not a kernel."""
    return raw_name in BARRIER_NAMES


def barrier_sql(column: str) -> str:
    """The SQL condition, over a text ``column``, that :func:`is_barrier` states."""
    names = ", ".join(f"'{n}'" for n in BARRIER_NAMES)
    return f"coalesce({column} IN ({names}), FALSE)"
