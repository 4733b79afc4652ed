"""The surface of a RECON prompt, as the shortcut strategies and the learned probe read it: where a string is
mentioned in the case, the time of the entry each mention sits in, and the times a question names. Nothing here
reads what an entry states (no link, conclusion or record is interpreted), only where and when text occurs."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from ...core.probe import NEVER, RANK_FEATURES, mention_positions, rank_features
from .case import at

_HEADER_TIME = re.compile(r"^\[Day (\d+), (\d\d):(\d\d)\]")
# "Day 19, 08:32", "Day 23 at about 14:15", "Day 1 between 18:59 and 20:47" (both ends)
_QUESTION_TIME = re.compile(r"Day (\d+)(?:,| at about| around| between| from) (\d\d):(\d\d)"
                            r"(?: (?:and|to) (\d\d):(\d\d))?")
RANKS = RANK_FEATURES[1:]  # first, second, median, last, mean
MISSING = NEVER  # a rank an item does not have (never, or only once, mentioned): the end of the case


@dataclass(frozen=True)
class Case:
    """The text before the question (preamble and case) with each line's start offset and entry time."""

    body: str
    starts: tuple[int, ...]
    minutes: tuple[int | None, ...]  # the entry time of each line (None: not an entry line)

    def minute_at(self, offset: int) -> int | None:
        """The entry time of the line holding ``offset``."""
        return self.minutes[bisect_right(self.starts, offset) - 1]

    def line_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def offsets(self, needle: str) -> list[int]:
        return offsets(self.body, needle)

    def positions(self, needle: str) -> list[float]:
        """Where ``needle`` is mentioned, as fractions of the body (0 = its start)."""
        return mention_positions(self.body, needle)

    def times(self, needle: str) -> list[int]:
        """The entry time of every mention of ``needle`` (mentions outside entries left out)."""
        return [m for k in offsets(self.body, needle) if (m := self.minute_at(k)) is not None]

    def lines_with(self, *needles: str) -> list[int]:
        """Indices of the lines that contain every one of ``needles``."""
        found = None
        for needle in needles:
            lines = {self.line_at(k) for k in offsets(self.body, needle)}
            found = lines if found is None else found & lines
        return sorted(found or ())

    def line(self, k: int) -> str:
        end = self.starts[k + 1] - 1 if k + 1 < len(self.starts) else len(self.body)
        return self.body[self.starts[k]:end]


def _line_minute(line: str) -> int | None:
    head = _HEADER_TIME.match(line)
    if head:
        return at(int(head.group(1)), int(head.group(2)), int(head.group(3)))
    if line.startswith("{"):  # the oracle variant: one JSON entry per line
        try:
            record = json.loads(line)
            hours, minutes = str(record["time"]).split(":")
            return at(int(record["day"]), int(hours), int(minutes))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
    return None


@lru_cache(maxsize=4)
def read_case(body: str) -> Case:
    starts, minutes, offset = [], [], 0
    for line in body.split("\n"):
        starts.append(offset)
        minutes.append(_line_minute(line))
        offset += len(line) + 1
    return Case(body, tuple(starts), tuple(minutes))


def offsets(text: str, needle: str) -> list[int]:
    """Start offsets of every (non-overlapping) occurrence of ``needle``."""
    out: list[int] = []
    if not needle:
        return out
    k = text.find(needle)
    while k >= 0:
        out.append(k)
        k = text.find(needle, k + len(needle))
    return out


def rank(positions: list[float], which: str) -> float:
    """One rank statistic of a mention list (``RANKS``); ``MISSING`` when there is no such mention."""
    return rank_features(positions)[RANK_FEATURES.index(which)]


def question_times(question: str) -> list[int]:
    """Every moment the question names, in its order (a 'between A and B' window gives both ends)."""
    out = []
    for m in _QUESTION_TIME.finditer(question):
        day = int(m.group(1))
        out.append(at(day, int(m.group(2)), int(m.group(3))))
        if m.group(4):
            out.append(at(day, int(m.group(4)), int(m.group(5))))
    return out
