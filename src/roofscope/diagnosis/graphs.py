"""Kernels replayed by CUDA/HIP graphs (``cudaGraphLaunch``, ``hipGraphLaunch``): no advice to
launch them as a graph, which they already are; and the graph launches whose kernels the
trace lost (a known loss of the PyTorch profiler on ROCm and CUDA), counted.

The facts are the evidence's ``GraphFacts`` (diagnosis/evidence.py), read from the model's
``graph_launches`` (docs/formats/pytorch-kineto.md, "Graph launches").
"""

from __future__ import annotations

from roofscope.diagnosis.evidence import GraphFacts, ProgramView
from roofscope.diagnosis.findings import Finding
from roofscope.model import words

MOST_SHARE = 0.5  # of the dispatches replayed by graphs: their launches are no longer the cost
# what is left to try once the kernels replay as a graph: the host's launch cost is paid
# once per graph, but each kernel still pays its own start-up and tail on the GPU
LEFT_TO_TRY = (
    "fuse the short kernels (torch.compile, fused operators) or give each more work "
    "(larger batches), since a graph saves the host's launch cost, not each kernel's "
    "start-up and tail on the GPU"
)


def mostly(replayed: int, of: int) -> bool:
    """Whether graphs replayed MOST_SHARE or more of ``of`` dispatches."""
    return of > 0 and replayed >= MOST_SHARE * of


def short_cost(p: ProgramView, short: int) -> str:
    """What the short dispatches pay for: the host's launches, or where graphs replay most
    of them, each kernel's own start-up and tail."""
    if mostly(p.graphs.short_dispatches if p.graphs else 0, short):
        return "each kernel's start-up and tail is a large part of their cost"
    return "launch overhead is a large part of their cost"


def short_advice(p: ProgramView, short: int) -> str:
    """The short-kernel prescription, told which of the ``short`` dispatches a graph replays."""
    g = p.graphs.short_dispatches if p.graphs else 0
    if not g:
        return "fuse the short kernels, or launch them as a HIP/CUDA graph"
    if not mostly(g, short):
        return (
            f"fuse the short kernels, or launch the {words.count(short - g, 'dispatch')} "
            f"outside graphs as a HIP/CUDA graph ({g:,} already replay in one)"
        )
    return f"{_of(g, short)} already replay as a HIP/CUDA graph: {LEFT_TO_TRY}"


GRAPH_PHRASE = "capture launch sequences in HIP/CUDA graphs"
FEED = (
    f"keep the GPU fed: fuse small kernels, {GRAPH_PHRASE}, "
    "remove synchronisations (device syncs, blocking copies) between launches, overlap "
    "host work with streams"
)


def feed_advice(p: ProgramView) -> str:
    """The idle-time advice, told what graph launches replayed: FEED where none did; where
    graphs replay most dispatches, the gaps lie between replays and fusing kernels inside a
    graph would not shorten them, so the host's side alone; else the graph phrase names the
    dispatches outside graphs."""
    g = p.graphs.dispatches if p.graphs else 0
    if not g:
        return FEED
    if mostly(g, p.dispatches):
        return (
            f"keep the GPU fed: {_of(g, p.dispatches)} already replay as HIP/CUDA graphs, so "
            "the gaps lie mostly between replays: overlap the host's work between steps "
            "(scheduling, sampling, input preparation) with the GPU's; remove "
            "synchronisations (device syncs, blocking copies) between steps"
        )
    outside = words.count(p.dispatches - g, "dispatch")
    said = f"capture the {outside} outside graphs in HIP/CUDA graphs ({g:,} already replay in one)"
    return FEED.replace(GRAPH_PHRASE, said)


def _of(replayed: int, of: int) -> str:
    return f"all {of:,} dispatches" if replayed == of else f"{replayed:,} of {of:,} dispatches"


def graph_kernels_missing(p: ProgramView) -> Finding | None:
    """Graph launches with no kernel in the trace: the graph ran, its kernels were not
    recorded, so kernel time and counts are low by what those graphs ran."""
    facts = p.graphs
    if facts is None or not facts.empty:
        return None
    return Finding(
        "graph-kernels-missing",
        None,
        "program",
        "medium",
        f"{_launches(facts)}, {facts.empty:,} with no kernel in the trace: the kernels those "
        "graphs replayed were not recorded, so kernel time, counts and idle time leave them out",
        "read kernel time as a lower bound; profile again with a tracer that records graph "
        "kernels (nsys --cuda-graph-trace=node, rocprofv3 --kernel-trace) or with a newer "
        "PyTorch profiler, and check its log for dropped activity records",
        {"graph_launches": facts.launches, "graph_launches_without_kernels": facts.empty},
    )


def _launches(facts: GraphFacts) -> str:
    return words.count(facts.launches, "graph launch")
