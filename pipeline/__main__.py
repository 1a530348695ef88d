"""``python -m pipeline VERB ...``: see :mod:`pipeline.cli.main`.

As the entry point it applies the engine's process settings (:func:`engine.runtime.configure_process`:
allocator thresholds for the batch generator, no BLAS probe at numba's start-up) before any verb.
"""

from engine.runtime import configure_process
from pipeline.cli.main import main

configure_process()
raise SystemExit(main())
