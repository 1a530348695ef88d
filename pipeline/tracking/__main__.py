"""``python -m pipeline.tracking replay LOG``: see :func:`pipeline.tracking.mlflow_log.main`."""

from pipeline.tracking.mlflow_log import main

raise SystemExit(main())
