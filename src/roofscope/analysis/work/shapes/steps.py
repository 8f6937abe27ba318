"""The sequence-length sums an LLM server writes into the name of each step's range, for
the work of paged attention (:mod:`roofscope.analysis.work.shapes.paged`).

TraceLens's profiler patches (upstream in vLLM from v0.26, vllm-project/vllm#37524; in
SGLang as the detailed ``step[...]`` range) wrap each engine step in a ``record_function``
whose name carries, separately for the context (prefill) and generation (decode) requests,
the request count and Σ N_Q, Σ N_KV, Σ N_Q², Σ N_Q·N_KV (TraceLens
docs/conceptual/inference-analysis.md, "Roofline analysis without per-request details";
TraceLens/TraceUtils/annotation_utils.py lists the grammars). Seen in TraceLens's traces:

    execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)
    execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489...)
    step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]

Pure: a name in, sums or the reason they cannot be trusted out.
"""

from __future__ import annotations

import re

import msgspec

# the ranges worth reading (SQL LIKE patterns): vLLM's detailed step, SGLang's detailed step
STEP_LIKE = ("execute\\_%\\_context\\_%", "step[%sqsq=%")

_VLLM = re.compile(
    r"execute_(\d+)_context_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
    r"_generation_(\d+)\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
)
_SGLANG = re.compile(r"step\[(EXTEND|DECODE|MIXED)\b([^\]]*)\]")
_SGLANG_KEYS = ("sq", "sk", "sqsq", "sqsk")


class Sums(msgspec.Struct, frozen=True):
    """One kind of request of a step: their count and Σ N_Q, Σ N_KV, Σ N_Q², Σ N_Q·N_KV."""

    requests: int
    sq: int
    sk: int
    sqsq: int
    sqsk: int

    def problem(self, kind: str) -> str | None:
        """What makes these sums impossible (each request has 1 <= N_Q <= N_KV), or None."""
        if not self.requests:
            return None if self.sq == self.sk == self.sqsq == self.sqsk == 0 else f"no {kind}s"
        if not self.requests <= self.sq <= self.sqsq or self.sq > self.sk:
            return f"{kind} sq {self.sq}, sk {self.sk}, sqsq {self.sqsq} for {self.requests}"
        if self.sqsk < self.sqsq or self.sqsk > self.sq * self.sk:
            return f"{kind} sqsk {self.sqsk} outside [sqsq {self.sqsq}, sq·sk]"
        return None


class StepSums(msgspec.Struct, frozen=True):
    context: Sums  # prefill requests: causal within their chunk
    generation: Sums  # decode requests: every cached key

    @property
    def tokens(self) -> int:
        return self.context.sq + self.generation.sq


class Damaged(ValueError):
    """A step's name looks like a sums annotation but does not give trustworthy sums."""


def step_sums(name: str) -> StepSums:
    """The sums of a step range's name; raises Damaged, saying what was expected."""
    found = _vllm(name) if name.startswith("execute_") else _sglang(name)
    for sums, kind in ((found.context, "context request"), (found.generation, "generation")):
        problem = sums.problem(kind)
        if problem:
            raise Damaged(f"step {name[:120]!r}: impossible sums ({problem})")
    return found


def _vllm(name: str) -> StepSums:
    match = _VLLM.fullmatch(name)
    if match is None:
        raise Damaged(
            f"step {name[:120]!r}: expected execute_T_context_N(sqAskBsqsqCsqskD)"
            "_generation_N(sqAskBsqsqCsqskD)"
        )
    v = [int(g) for g in match.groups()]
    if v[0] != v[2] + v[7]:
        raise Damaged(f"step {name[:120]!r}: {v[0]} tokens, but sq {v[2]} + {v[7]}")
    return StepSums(Sums(v[1], *v[2:6]), Sums(v[6], *v[7:11]))


def _sglang(name: str) -> StepSums:
    match = _SGLANG.fullmatch(name)
    tokens = match.group(2).split() if match else []
    fields = dict(t.split("=", 1) for t in tokens if re.fullmatch(r"\w+=\d+", t))
    if match is None or len(fields) != len(tokens):
        raise Damaged(f"step {name[:120]!r}: expected step[KIND bs=N c_sq=... g_sqsk=...]")
    kind = match.group(1)
    return StepSums(_sglang_sums(name, fields, "c", kind), _sglang_sums(name, fields, "g", kind))


def _sglang_sums(name: str, fields: dict[str, str], prefix: str, kind: str) -> Sums:
    present = kind == "MIXED" or kind == ("EXTEND" if prefix == "c" else "DECODE")
    keys = [f"{prefix}_{k}" for k in _SGLANG_KEYS]
    if not present:
        return Sums(0, 0, 0, 0, 0)
    if any(k not in fields for k in keys):
        raise Damaged(f"step {name[:120]!r}: expected {', '.join(keys)}")
    count = fields.get(prefix if kind == "MIXED" else "bs")
    if count is None:
        raise Damaged(f"step {name[:120]!r}: expected {prefix if kind == 'MIXED' else 'bs'}=N")
    return Sums(int(count), *(int(fields[k]) for k in keys))
