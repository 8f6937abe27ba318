"""The check-up at every scale: the options (declared and checked once), the engine that
reads each run into a mergeable partial, merges them and analyses, and where the runs are
read (this process, local worker processes, a Dask cluster). The command line (``cli/``)
and the Python API (``api/``) are thin adapters over it."""
