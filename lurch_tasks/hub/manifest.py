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
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.files import atomic_output, inside

MANIFEST_NAME = "lurch-manifest.json"
JOURNAL_NAME = ".lurch-journal.json"
STAGING_MARKER = ".lurch-staging"
CARD_NAME = "README.md"
SHARDS_SUFFIX = ".lurch-shards"  # the staging folder of a sharded run (hub.shards)
PLAN_NAME = "plan.json"  # what marks a sharded run's staging folder
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


def read_owned_manifest(folder: Path) -> dict[str, Any] | None:
    """``read_manifest`` for a run about to replace files in ``folder``: the manifest is untrusted input (a folder
    received from someone else), so every config entry must be a mapping whose files are paths inside its own
    config folder (no ``..``, absolute path or symbolic link leading out); otherwise one line, before any work."""
    manifest = read_manifest(folder)
    if manifest is None:
        return None
    where = f"manifest: {str(folder / MANIFEST_NAME)}"
    for name, entry in manifest["configs"].items():
        files = entry.get("files") if isinstance(entry, dict) else None
        if not _plain_name(name) or not isinstance(files, dict):
            raise ValueError(f"{where}: config entry {name!r} is not allowed; allowed: a config name with its files "
                             "as `lurch materialize` wrote them")
        for relative, sha in files.items():
            inside(folder, relative, where)
            if not relative.startswith(f"{name}/") or not isinstance(sha, str):
                raise ValueError(f"{where}: file {relative!r} of config {name!r} is not allowed; allowed: a file in "
                                 f"{name}/ with its SHA-256")
    return manifest


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _plain_name(name: object) -> bool:
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def read_journal(out_dir: Path) -> dict[str, Any] | None:
    """The journal of an interrupted replacement in ``out_dir`` (None when there is none), checked as untrusted
    input: it may name only a staging folder this tool creates for ``out_dir`` (a hidden sibling
    ``.OUT.tmp-*`` holding the staging marker, or the sharded run's ``.OUT.lurch-shards``) and configs by plain
    name; anything else is one line, and nothing is touched. ``staging`` is returned as a checked Path."""
    path = out_dir / JOURNAL_NAME
    journal = read_json(path, "journal") if out_dir.is_dir() else None
    if journal is None:
        return None
    where = f"journal: {str(path)!r}"
    names, staging = (journal.get("names"), journal.get("staging")) if isinstance(journal, dict) else (None, None)
    if not isinstance(names, list) or not isinstance(staging, str) or not staging:
        raise ValueError(f"{where} is not a journal `lurch materialize` wrote; allowed: the journal of an interrupted "
                         "run (move this file away if you did not interrupt one here)")
    folder = _journal_staging(out_dir, staging)
    if folder is None:
        raise ValueError(f"{where} names the staging folder {staging!r}, which is not one lurch creates for "
                         f"{str(out_dir)!r}; allowed: a sibling '.{out_dir.name}.tmp-*' holding {STAGING_MARKER} or "
                         f"'.{out_dir.name}{SHARDS_SUFFIX}' (move the journal away if you did not interrupt a run "
                         "here)")
    for name in names:
        if not _plain_name(name):
            raise ValueError(f"{where} names the config {name!r}; allowed: plain config names (no path)")
        inside(out_dir, name, where)
    return {"staging": folder, "names": list(names)}


def _journal_staging(out_dir: Path, staging: str) -> Path | None:
    """``out_dir``'s staging folder named by a journal, if it is one this tool would create (else None)."""
    named = Path(staging)
    parent = Path(os.path.abspath(out_dir)).parent
    if named.name in ("", ".", "..") or Path(os.path.abspath(named)).parent.resolve() != parent.resolve():
        return None
    folder = parent / named.name
    if named.name == f".{out_dir.name}{SHARDS_SUFFIX}":
        mark = folder / PLAN_NAME
    elif named.name.startswith(f".{out_dir.name}.tmp-"):
        mark = folder / STAGING_MARKER
    else:
        return None
    if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or mark.is_symlink() or not mark.is_file())):
        return None
    return folder


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
