"""roofscope: a full check-up of GPU programs from the files their profiler already wrote."""

__version__ = "0.1.0"
