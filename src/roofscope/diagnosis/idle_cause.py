"""What the host did while the GPU sat idle, as the idle-gaps finding words it: the share of
the idle time inside each kind of host range (analysis/input_wait.py), and, when one kind
explains CAUSE_SHARE = half of it or more, the prescription for that cause in place of the
generic one (fuse small kernels, graphs): a faster input pipeline for data-loader steps,
fewer blocking calls for synchronisations and synchronous copies, compiled kernels warmed up
or cached before the measured steps for JIT compilation.
"""

from __future__ import annotations

import msgspec

from roofscope.diagnosis.evidence import ProgramView

CAUSE_SHARE = 0.5  # of the idle time inside one kind of host range: that cause first


class Cause(msgspec.Struct, frozen=True):
    kind: str  # the host_ranges kind
    evidence: str  # its evidence key (seconds)
    idle_ns: int
    share: float  # of the idle time
    said: str  # where the idle time fell, for the summary
    prescription: str  # what to do first


LOADER_FIX = (
    "feed the GPU from a faster input pipeline first: the gaps sit in the data-loader steps "
    "(DataLoader num_workers > 0, pin_memory=True, prefetch_factor, persistent_workers; "
    "decode and augment off the training loop or on the GPU)"
)
SYNC_FIX = (
    "remove the blocking calls first: the gaps sit in device/stream/event synchronisations "
    "and synchronous copies (cudaMemcpy, hipMemcpyWithStream, tensor.item(), .cpu(), "
    ".tolist() in the step); copy with non_blocking=True into pinned memory, synchronise "
    "once per step, not per launch; fusing kernels would not shorten these gaps"
)

COMPILE_FIX = (
    "compile before the measured steps first: the gaps sit in JIT compilation (module loads, "
    "NVRTC/HIPRTC, nvFuser or torch.compile ranges); warm up with a few steps before "
    "profiling (torch.profiler schedule(wait=, warmup=, active=)), cache compiled kernels "
    "between runs (TORCHINDUCTOR_FX_GRAPH_CACHE=1, TORCHINDUCTOR_AUTOGRAD_CACHE=1, the CUDA "
    "JIT cache CUDA_CACHE_PATH); fusing kernels would not shorten these gaps"
)


def causes(p: ProgramView) -> tuple[Cause, ...]:
    """Each kind of host range the input has, with its share of the idle time."""
    if not p.idle_ns:
        return ()
    found = (
        ("data-loader", "data_loader_idle_s", p.loader_idle_ns, "data-loader steps", LOADER_FIX),
        ("sync", "sync_idle_s", p.sync_idle_ns, "blocking runtime calls", SYNC_FIX),
        ("compile", "compile_idle_s", p.compile_idle_ns, "JIT compilation", COMPILE_FIX),
    )
    return tuple(
        Cause(kind, key, ns, ns / p.idle_ns, said, fix)
        for kind, key, ns, said, fix in found
        if ns is not None
    )


def main_cause(p: ProgramView) -> Cause | None:
    """The kind of host range holding CAUSE_SHARE of the idle time or more (the larger)."""
    first = max(causes(p), key=lambda c: c.idle_ns, default=None)
    return first if first is not None and first.share >= CAUSE_SHARE else None
