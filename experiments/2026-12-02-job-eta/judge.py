"""Judge the job ETA lines of a timestamped quickstart stderr log against the real time left.

    python experiments/2026-12-02-job-eta/judge.py ERR_FILE END_EPOCH

ERR_FILE: the job's stderr with each line prefixed by its epoch time (``ts %.s`` from
moreutils, or the shell loop in this folder's README). END_EPOCH: when the job ended. A line
counts from the middle of the tuning stage on (half way from ``stage 1/N: tune`` to the next
``stage`` line) and is within bounds when |ETA - real| <= max(30 % of real, 60 s).
"""

from __future__ import annotations

import re
import sys

_ETA = re.compile(r"job ETA ~?(?:(\d+)h(\d+)m|(\d+)m(\d+)s)")


def eta_seconds(line: str) -> float | None:
    m = _ETA.search(line)
    if m is None:
        return None
    if m.group(1) is not None:
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60
    return int(m.group(3)) * 60 + int(m.group(4))


def main(path: str, end: float) -> int:
    rows = []
    for raw in open(path, encoding="utf-8"):
        stamp, _, text = raw.partition(" ")
        try:
            rows.append((float(stamp), text.rstrip("\n")))
        except ValueError:
            continue
    stages = [(t, text) for t, text in rows if text.startswith("stage ")]
    tune = next(t for t, text in stages if ": tune" in text)
    after = next(t for t, _ in stages if t > tune)
    middle = tune + (after - tune) / 2
    judged = ok = 0
    worst = 0.0
    for t, text in rows:
        eta = eta_seconds(text)
        if eta is None or t < middle:
            continue
        real = end - t
        judged += 1
        good = abs(eta - real) <= max(0.3 * real, 60.0)
        ok += good
        worst = max(worst, abs(eta - real) / max(real, 1.0))
        if not good:
            print(f"outside: {t - rows[0][0]:6.0f} s in, ETA {eta:.0f} s, real {real:.0f} s")
    print(f"{ok} of {judged} job ETA lines from the middle of tuning on within 30 % or 60 s "
          f"(worst relative error {worst:.0%}); wall {end - rows[0][0]:.0f} s")
    return 0 if judged and ok == judged else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
