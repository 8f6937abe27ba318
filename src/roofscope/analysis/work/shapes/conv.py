"""Convolution formulas: aten::convolution and its cuDNN/MIOpen forms."""

from __future__ import annotations

import math

import msgspec

from roofscope.analysis.work.shapes.args import MAX_ELEMENTS, Args, OpWork, Unreadable

# --- Convolution: each output element is a dot product of Cin/groups · prod(kernel) pairs,
# 2 · N · Cout · prod(out spatial) · (Cin/groups) · prod(kernel) FLOPs, plus one add per
# output element for a bias; out = (in + 2·pad - dil·(k-1) - 1) // stride + 1 (torch.nn.Conv2d
# docs); a transposed convolution runs the same products from the input side.


class Conv(msgspec.Struct, frozen=True):
    stride: int  # indices of stride, padding, dilation, groups and transposed among the inputs
    padding: int
    dilation: int
    groups: int
    transposed: int = -1
    bias: int = 2  # index of the bias tensor, -1: the operator takes none

    def __call__(self, args: Args) -> OpWork:
        x, w = args.shape(0), args.shape(1)
        if len(x) < 3 or len(w) != len(x) or args.dtype(0) != args.dtype(1):
            raise Unreadable(f"convolution of {list(x)} by {list(w)}")
        groups = self.each(args, self.groups, 1, 1)[0]
        transposed = self.transposed >= 0 and args.flag(self.transposed)
        out = self.out_spatial(args, x[2:], w[2:], transposed)
        if math.prod(out) > MAX_ELEMENTS:
            raise Unreadable(f"output size {list(out)}: more than 2^50 elements")
        cout = w[1] * groups if transposed else w[0]
        flops = 2 * x[0] * math.prod(w) * math.prod(x[2:] if transposed else out)
        bias = x[0] * cout * math.prod(out) if self.bias >= 0 and args.is_tensor(self.bias) else 0
        moved = args.tensor_bytes(0) + args.tensor_bytes(1) + args.tensor_bytes(self.bias)
        moved += x[0] * cout * math.prod(out) * args.element_bytes(0)
        words = "convolution 2·N·Cout·prod(out)·(Cin/groups)·prod(kernel) + bias (torch.nn.ConvNd)"
        return OpWork(float(flops + bias), float(moved), args.ceiling(0, "matrix"), words)

    def out_spatial(self, args: Args, size: tuple[int, ...], kernel: tuple[int, ...],
                    transposed: bool) -> tuple[int, ...]:  # fmt: skip
        n = len(size)
        stride, dil = self.each(args, self.stride, n, 1), self.each(args, self.dilation, n, 1)
        text = args.literal(self.padding).strip("'\"")
        if text == "same" and set(stride) == {1}:  # conv2d.padding: out = in, stride 1 only
            return size
        pad = (0,) * n if text == "valid" else self.each(args, self.padding, n, 0)
        if transposed:
            extra = self.each(args, self.transposed + 1, n, 0)
            sides = zip(size, stride, pad, dil, kernel, extra, strict=True)
            return tuple((i - 1) * s - 2 * p + d * (k - 1) + e + 1 for i, s, p, d, k, e in sides)
        sides5 = zip(size, stride, pad, dil, kernel, strict=True)
        out = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i, s, p, d, k in sides5)
        if min(out) < 1:
            raise Unreadable(
                f"output size {list(out)} from input {list(size)}, kernel {list(kernel)}"
            )
        return out

    @staticmethod
    def each(args: Args, i: int, n: int, default: int) -> tuple[int, ...]:
        """A per-dimension list; one value stands for every dimension. An input that Concrete
        Inputs do not hold (traces before PyTorch 2.1 record none) is unknown, never its
        default: ResNet-50's first convolution (stride 2, padding 3) read with stride 1 and
        no padding counted 3.8x its FLOPs (HTA's resnet50 trace, V100: 300 % of the peak)."""
        if not args.literal(i):
            raise Unreadable(f"input {i} is not in Concrete Inputs: stride, padding unknown")
        values = args.ints(i)
        if len(values) not in (1, n) or min(values) < (1 if default else 0):
            raise Unreadable(f"input {i}: {args.literal(i)!r} for {n} spatial dimensions")
        return values * n if len(values) == 1 else values
