"""rocprof-compute (Omniperf) workloads: the folder, its pmc_perf files, sysinfo."""
