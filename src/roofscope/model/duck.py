"""DuckDB's compiled module: all of DuckDB that roofscope runs.

``import duckdb`` (2.0.1) cost 86 ms of every command on the 2-core machine: the package wraps
the compiled ``_duckdb`` (26 ms) in a Python layer, its relational API and expressions (37 ms)
and its version read through importlib.metadata (23 ms). roofscope composes its own SQL text
(:mod:`roofscope.model.relation`) and runs it with the connection's ``execute``, so it imports
the compiled module alone, which duckdb ships as ``_duckdb`` from 1.4 on (pyproject.toml).
"""

import _duckdb as duckdb

__all__ = ["duckdb"]
