"""Readers of AMD's profilers: rocprof v1, rocprofv3, rocpd, rocprof-compute, rocminfo."""
