"""The command line: one module per command over one set of options."""
