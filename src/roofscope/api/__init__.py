"""The Python API: ``roofscope.analyze`` and ``roofscope.compare`` run the check-up the
commands run (``checkup/engine.py``) and hand back objects a notebook or a script can hold
(``Report``, ``Comparison``): the renderers' dataclasses, the JSON documents, pandas tables
(``roofscope[notebook]``), the SVG charts and an inline HTML view. Nothing here prints or
exits: errors are raised as ``roofscope.InputError`` / ``roofscope.UsageError``."""
