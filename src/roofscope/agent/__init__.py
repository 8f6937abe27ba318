"""``roofscope mcp``: the check-up for coding agents, as an MCP server (docs/mcp.md).

A third adapter over the engine beside ``cli/`` and ``api/``: ``tools.py`` answers each tool
from the API's ``Report`` and ``Comparison`` (their JSON, paged by ``pages.py``), ``roots.py``
keeps every read under the roots the client granted or ``--root``, ``server.py`` registers the
tools, resources and the prompt with the ``mcp`` SDK (``roofscope[mcp]``), loaded only here.
"""
