"""Answer parsing and metrics; no generation code lives here."""

from .answers import normalize_entity, parse_final_answer
from .items import ItemScores, memory_drift, score_items

__all__ = ["ItemScores", "memory_drift", "normalize_entity", "parse_final_answer", "score_items"]
