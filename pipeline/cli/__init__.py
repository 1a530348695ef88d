"""Command line ``python -m pipeline VERB``: verb registry, argument parsing, exit codes.

``main`` builds the parser from the verbs that ``selfplay_verbs`` and ``job_verbs`` register in
``common``. Imports every stage package; nothing imports it but ``pipeline.__main__``.
"""
