"""roofscope's version: its own module, so that no module below the top imports the package's
``__init__`` for it."""

__version__ = "0.1.0"
