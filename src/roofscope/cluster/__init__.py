"""A job of many runs (ranks) summarised from mergeable partial results: each run reduced where
it is read (``partial.reduce_run``), in this process, on local worker processes or on a Dask
cluster (``engine.partials``), and the partials merged (``partial.merge``, ``partial.summary``).
"""
