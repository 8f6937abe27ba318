"""Readers of NVIDIA's profilers: Nsight Compute (ncu) and Nsight Systems (nsys)."""
