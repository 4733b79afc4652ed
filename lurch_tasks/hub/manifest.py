"""What a materialize run owns: the manifest, the replacement journal and the staging marker.

- ``lurch-manifest.json`` (written last by every run): per config its files with SHA-256, row count,
  fingerprint, family_version and config_hash, plus the card's SHA-256. A later run replaces only paths
  the manifest lists *and* whose bytes still match it; anything else in the folder belongs to the user.
- ``.lurch-journal.json``: written before the renames that replace configs in an existing folder and
  removed after the last one; a run that finds it completes the interrupted replacement first.
- ``.lurch-staging`` inside a staging folder: the owning process id, so stale staging folders of killed
  runs can be told from live ones and removed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..core.files import atomic_output

MANIFEST_NAME = "lurch-manifest.json"
JOURNAL_NAME = ".lurch-journal.json"
STAGING_MARKER = ".lurch-staging"
CARD_NAME = "README.md"
MANIFEST_FORMAT = 1


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json_atomic(path: Path, data: Any) -> None:
    with atomic_output(path) as out:
        json.dump(data, out, indent=2, sort_keys=True)
        out.write("\n")


def read_json(path: Path, what: str) -> Any:
    """The JSON in ``path`` (None when absent); a one-line ValueError naming the file when unreadable."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{what}: {str(path)!r} is unreadable ({type(error).__name__}); allowed: the file "
                         "`lurch materialize` wrote") from None


def config_entry(folder: Path, name: str, meta: dict[str, Any]) -> dict[str, Any]:
    files = sorted(p for p in (folder / name).iterdir() if p.is_file())
    return {
        "files": {f"{name}/{p.name}": file_sha256(p) for p in files},
        "rows": meta["num_examples"],
        "fingerprint": meta["fingerprint"],
        "family_version": meta["family_version"],
        "config_hash": meta["config_hash"],
        "task": meta["task"],
    }


def build_manifest(folder: Path, configs: dict[str, dict[str, Any]], generator: str) -> dict[str, Any]:
    """The manifest of ``folder`` once its card is written: ``configs`` maps names to their entries."""
    return {"format": MANIFEST_FORMAT, "generator": generator, "card_sha256": file_sha256(folder / CARD_NAME),
            "configs": dict(sorted(configs.items()))}


def read_manifest(folder: Path) -> dict[str, Any] | None:
    manifest = read_json(folder / MANIFEST_NAME, "manifest")
    if manifest is not None and (not isinstance(manifest, dict) or not isinstance(manifest.get("configs"), dict)):
        raise ValueError(f"manifest: {str(folder / MANIFEST_NAME)!r} is not a lurch manifest; allowed: the file "
                         "`lurch materialize` wrote")
    return manifest


def owned_config(folder: Path, name: str, manifest: dict[str, Any] | None) -> bool:
    """``folder/name`` holds exactly the files an earlier run wrote there, byte for byte."""
    entry = (manifest or {}).get("configs", {}).get(name)
    target = folder / name
    if not entry or not target.is_dir():
        return False
    present = sorted(f"{name}/{p.name}" for p in target.iterdir())
    if present != sorted(entry["files"]):
        return False
    return all(file_sha256(folder / relative) == sha for relative, sha in entry["files"].items())


def owned_card(folder: Path, manifest: dict[str, Any] | None) -> bool:
    card = folder / CARD_NAME
    return bool(manifest) and card.is_file() and file_sha256(card) == manifest.get("card_sha256")


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True
