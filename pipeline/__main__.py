"""``python -m pipeline VERB ...``: see :mod:`pipeline.cli.main`."""

from pipeline.cli.main import main

raise SystemExit(main(configure=True))
