"""Write the product's russian profile with the tuned weights in every level (for ``pipeline match``).

    python tuned_profile.py RUN_FOLDER OUT.json

RUN_FOLDER is the tuning run's folder (its ``tune/result.json``); the levels keep the product's
search and weakening knobs, so ``OUT.json:hard`` is the product's Hard on the tuned weights.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.profile import load_profile  # the engine checks the written profile

PRODUCT = Path(__file__).resolve().parents[2] / "engine" / "profiles" / "russian-start.json"


def main() -> None:
    run, out = Path(sys.argv[1]), Path(sys.argv[2])
    result = json.loads((run / "tune" / "result.json").read_text())
    if result["decision"] != "accepted":
        raise SystemExit(f"the tuning was {result['decision']}: no tuned weights to play")
    profile = json.loads(PRODUCT.read_text())
    for level in profile["levels"].values():
        level["weights"] = dict(result["weights"])
    profile["provenance"] = {**profile.get("provenance", {}), "description": f"tuned weights of {run.name}"}
    out.write_text(json.dumps(profile, indent=2, sort_keys=True) + "\n")
    load_profile(out, "russian")


if __name__ == "__main__":
    main()
