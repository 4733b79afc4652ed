"""Regenerate tests/golden/*.json on purpose (after bumping a family_version)."""

import importlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# each defines GOLDEN and golden_fingerprints()
FAMILY_TESTS = ("test_discovery", "test_find_origin", "test_graph", "test_implicit_hop", "test_recon")

if __name__ == "__main__":
    for module_name in FAMILY_TESTS:
        module = importlib.import_module(module_name)
        module.GOLDEN.write_text(json.dumps(module.golden_fingerprints(), indent=2, sort_keys=True) + "\n",
                                 encoding="utf-8")
        print(f"wrote {module.GOLDEN.relative_to(ROOT)}")
