"""The package's version, in one place: ``roofscope --version``, every output's header and
the Dask workers' check read it, without loading the package's API."""

__version__ = "0.1.0"
