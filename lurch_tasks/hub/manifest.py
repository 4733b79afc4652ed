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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.files import atomic_output

MANIFEST_NAME = "lurch-manifest.json"
JOURNAL_NAME = ".lurch-journal.json"
STAGING_MARKER = ".lurch-staging"
CARD_NAME = "README.md"
MANIFEST_FORMAT = 2  # 2: per-config shortcut_audit (measured over all files when a run is finalized)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json_atomic(path: Path, data: Any) -> None:
    with atomic_output(path, binary=True) as out:
        out.write(manifest_bytes(data))


def read_json(path: Path, what: str) -> Any:
    """The JSON in ``path`` (None when absent); a one-line ValueError naming the file when unreadable."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{what}: {str(path)!r} is unreadable ({type(error).__name__}); allowed: the file "
                         "`lurch materialize` wrote") from None


def config_entry(files: Mapping[str, str], summary: Any) -> dict[str, Any]:
    """The manifest entry of a config: ``files`` maps its relative paths to their SHA-256; ``summary`` is its
    ``layout.ConfigSummary`` (with the fingerprint and shortcut audit measured over all its files)."""
    meta = summary.meta
    return {
        "files": dict(sorted(files.items())),
        "rows": summary.num_examples,
        "fingerprint": summary.fingerprint,
        "family_version": meta["family_version"],
        "config_hash": meta["config_hash"],
        "task": meta["task"],
        "shortcut_audit": summary.shortcut_audit,
    }


def folder_entry(folder: Path, summary: Any) -> dict[str, Any]:
    """``config_entry`` with the SHA-256 of the files as they are on disk in ``folder/<config>``."""
    files = sorted(p for p in (folder / summary.name).iterdir() if p.is_file())
    return config_entry({f"{summary.name}/{p.name}": file_sha256(p) for p in files}, summary)


def build_manifest(card_sha256: str, configs: dict[str, dict[str, Any]], generator: str) -> dict[str, Any]:
    """The manifest of a folder whose card has ``card_sha256``: ``configs`` maps names to their entries."""
    return {"format": MANIFEST_FORMAT, "generator": generator, "card_sha256": card_sha256,
            "configs": dict(sorted(configs.items()))}


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """The manifest file's bytes (the same on every file system)."""
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")


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
