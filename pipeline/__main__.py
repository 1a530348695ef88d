"""``python -m pipeline VERB ...``: see :mod:`pipeline.cli`."""

from pipeline.cli import main

raise SystemExit(main())
