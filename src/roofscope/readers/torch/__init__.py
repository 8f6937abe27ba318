"""Readers of PyTorch profiler (Kineto) traces."""
