"""What witnesses cost, on the inputs of bench/diff_bench.py, measured in the same run.

Witnesses are built lazily (``Delta.witness``): ``diff()`` itself pays nothing for them
unless a delta is judged on a combinator (its BREAKING verdict is confirmed by one). A
report that shows them (JSON, SARIF, markdown) builds them. This script times, round by
round on the same two surfaces:

* ``diff``: ``diff(before, after)`` with digests known (the compare-only phase of
  diff_bench, the denominator);
* ``diff + witnesses``: the same and then every witness of the result built;

and prints the witness share: (diff + witnesses - diff) / diff. The issue's limit is 20%
of the diff time, or witnesses computed lazily for the reports that show them (which they
are); the share says what a report that shows every witness pays on top.

Run from the repository root::

    python bench/witness_bench.py [--seed 7] [--tools 500] [--changed 25] [--repeat 7]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` and ``app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.diff.engine import diff
from app.diff.schema import instances
from app.ingest.load import load_surface
from bench.synthetic import mutate, synthetic_surface

LIMIT = 0.20


def clear_caches() -> None:
    instances._CACHE.clear()
    instances._SAMPLERS.clear()
    instances._regex_samples.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--changed", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    before_doc = synthetic_surface(args.seed, args.tools)
    after_doc = mutate(before_doc, random.Random(args.seed + 1), args.changed)
    before, after = load_surface(before_doc), load_surface(after_doc)
    for surface in (before, after):
        _ = surface.integrity_digest, [tool.digest for tool in surface.tools.values()]
    plain: list[float] = []
    witnessed: list[float] = []
    counts = (0, 0)
    for _ in range(args.repeat):
        for timings, build in ((plain, False), (witnessed, True)):
            clear_caches()  # every run builds its samples and validators from scratch
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                result = diff(before, after)
                if build:
                    shown = [delta.witness for delta in result.deltas if delta.evidence is not None]
                    counts = (len(shown), sum(1 for w in shown if w is not None and w.found))
                timings.append(time.perf_counter() - start)
            finally:
                gc.enable()
    base, total = statistics.median(plain), statistics.median(witnessed)
    share = (total - base) / base
    print(f"diff (digests known)              {base * 1000:8.1f} ms  (median of {args.repeat})")
    print(f"diff + every witness built        {total * 1000:8.1f} ms")
    print(f"witnesses: {counts[0]} built, {counts[1]} found; share of the diff time {share:.1%} "
          f"(limit {LIMIT:.0%} if built eagerly; they are built lazily, only by reports that show them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
