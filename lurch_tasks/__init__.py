"""lurch-tasks: deterministic synthetic long-context reasoning benchmarks."""

from __future__ import annotations

__version__ = "0.1.0"
