"""Answer parsing and metrics; no generation code lives here."""

from .answers import normalize_entity, parse_final_answer
from .items import ItemScores, memory_drift, score_items
from .pairs import edge_item, normalize_name, parse_edges

__all__ = [
    "ItemScores", "edge_item", "memory_drift", "normalize_entity", "normalize_name", "parse_edges",
    "parse_final_answer", "score_items",
]
