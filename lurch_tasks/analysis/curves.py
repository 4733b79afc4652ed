"""Where a length curve breaks: drift onset and effective length, on one curve of (length bin, mean metric).

Both read a curve through its shortest bin, the model's short-context level:

* **drift onset** — the first length bin whose memory drift exceeds the shortest bin's by more than ``margin``
  (the graph paper's "drift sets in at about 2,000 tokens"). None when no bin does; the shortest bin itself can
  never be the onset.
* **effective length** — the longest bin up to which the score *stays* at or above ``fraction`` (default 85%) of
  the shortest bin's: that bin and every shorter one qualify (a recovery after a dip does not extend it). It is
  the shortest bin when the very next bin already falls below, and None when the shortest bin scores 0 or less
  (there is no level to keep).

Curves are sorted by length first; bins with no value (NaN) are skipped, so a curve with holes is read over the
bins it has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DEFAULT_ONSET_MARGIN = 0.1
DEFAULT_EFFECTIVE_FRACTION = 0.85


def _points(lengths: Sequence[float], values: Sequence[float]) -> list[tuple[float, float]]:
    if len(lengths) != len(values):
        raise ValueError(f"a curve needs one value per length bin; got {len(lengths)} bins and {len(values)} values")
    return sorted((float(n), float(v)) for n, v in zip(lengths, values, strict=True)
                  if v is not None and not math.isnan(float(v)))


def drift_onset(lengths: Sequence[float], drift: Sequence[float], margin: float = DEFAULT_ONSET_MARGIN) -> float | None:
    """The first length bin whose memory drift exceeds the shortest bin's by more than ``margin``."""
    points = _points(lengths, drift)
    if len(points) < 2:
        return None
    base = points[0][1]
    return next((length for length, value in points[1:] if value > base + margin), None)


def effective_length(lengths: Sequence[float], scores: Sequence[float],
                     fraction: float = DEFAULT_EFFECTIVE_FRACTION) -> float | None:
    """The longest length bin up to which the score stays at or above ``fraction`` of the shortest bin's."""
    points = _points(lengths, scores)
    if not points or points[0][1] <= 0:
        return None
    floor = fraction * points[0][1]
    kept = points[0][0]
    for length, value in points[1:]:
        if value < floor:
            break
        kept = length
    return kept
