"""``python -m engine``: see :mod:`engine.cli`; this process gets :func:`engine.runtime.configure_process`."""

from __future__ import annotations

import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main(configure=True))
