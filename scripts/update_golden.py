"""Regenerate tests/golden/*.json on purpose (after bumping a family_version)."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_find_origin import GOLDEN, golden_fingerprints  # noqa: E402

if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(golden_fingerprints(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
