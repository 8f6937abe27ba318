"""The cluster summary: each run reduced where it is read to a mergeable partial result.

``partial.reduce_run`` reads one run, ``partial.merge`` merges partials in any order and
grouping, ``summary.summary`` makes the document.
"""
