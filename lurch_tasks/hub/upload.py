"""``lurch push``: upload a materialized folder to the Hugging Face Hub (huggingface_hub)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import __version__
from ..core.files import inside
from ..dataset_builders._builder import SPLIT
from .card import card_configs
from .manifest import CARD_NAME, MANIFEST_NAME, file_sha256, read_manifest

_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_repo_id(repo_id: object) -> str:
    """``repo_id`` if it is ``ORG/NAME`` with Hub-legal parts, else a one-line ValueError."""
    allowed = (
        "ORG/NAME: letters, digits, '-', '_', '.'; no '--' or '..'; each part 1-96 chars, alphanumeric at both ends"
    )
    parts = repo_id.split("/") if isinstance(repo_id, str) else []
    ok = (
        len(parts) == 2
        and all(len(part) <= 96 and _PART.fullmatch(part) for part in parts)
        and "--" not in repo_id
        and ".." not in repo_id
        and not repo_id.endswith(".git")
    )
    if not ok:
        raise ValueError(f"repo_id: {repo_id!r} is not allowed; allowed: {allowed}")
    return repo_id


# ---------------------------------------------------------------- push


def hub_files(folder: Path) -> list[str]:
    """Relative paths ``push`` uploads: README.md, the manifest and every data file it lists -- only when the folder
    is what ``lurch materialize`` wrote (the manifest vouches for each file by SHA-256 and for the card), so an
    edited, half-copied or planted folder is never published."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ValueError(f"folder: {str(folder)!r} {what}; allowed: a folder written by `lurch materialize`")
    listed = card_configs(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        raise ValueError(f"folder: {str(folder)!r} has no {MANIFEST_NAME}; allowed: a folder written by `lurch "
                         "materialize` (check it with `lurch validate`)")
    configs = manifest["configs"]
    if sorted(listed) != sorted(configs):
        raise ValueError(f"README.md: lists configs {sorted(listed)}, {MANIFEST_NAME} {sorted(configs)}; allowed: "
                         "the card `lurch materialize` wrote")
    if file_sha256(folder / CARD_NAME) != manifest.get("card_sha256"):
        raise ValueError(f"README.md: changed since `lurch materialize` wrote it (SHA-256 differs from "
                         f"{MANIFEST_NAME}); allowed: an unedited folder (`lurch validate` shows what changed)")
    files = [CARD_NAME, MANIFEST_NAME]
    for name in listed:
        entry = configs[name]
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict) or not entry["files"]:
            raise ValueError(f"{MANIFEST_NAME}: config {name!r} lists no files; allowed: the manifest `lurch "
                             "materialize` wrote")
        if listed[name] != [f"{name}/{SPLIT}-*.parquet"]:
            raise ValueError(f"README.md: config {name!r} data_files {listed[name]} differ from "
                             f"{name}/{SPLIT}-*.parquet; allowed: the card `lurch materialize` wrote")
        on_disk = sorted(p.relative_to(folder).as_posix() for p in (folder / name).glob(f"{SPLIT}-*.parquet"))
        if on_disk != sorted(entry["files"]):
            raise ValueError(f"{name}: data files on disk {on_disk[:3]} differ from those {MANIFEST_NAME} lists; "
                             "allowed: the files `lurch materialize` wrote (`lurch validate` shows what changed)")
        for relative, sha in sorted(entry["files"].items()):
            path = inside(folder, relative, MANIFEST_NAME)
            if not path.is_file() or path.is_symlink() or file_sha256(path) != sha:
                raise ValueError(f"{relative}: missing, a link, or changed since `lurch materialize` wrote it "
                                 f"(SHA-256 differs from {MANIFEST_NAME}); allowed: an unedited folder")
            files.append(relative)
    return files


def push(folder: Path, repo_id: str, *, dry_run: bool, private: bool = False, token: str | None = None) -> list[str]:
    """Upload a materialized folder to the dataset repo ``repo_id``; returns the uploaded relative paths.

    With ``dry_run`` nothing touches the network: the files that would be uploaded are returned. A real
    push creates the repo if needed (``private`` only applies on creation) and, in one commit, uploads
    the files and deletes stale remote data files of the uploaded configs.
    """
    check_repo_id(repo_id)
    files = hub_files(Path(folder))
    if dry_run:
        return files
    configs = sorted(card_configs(Path(folder)))
    upload_files(Path(folder), repo_id, files, private=private, token=token,
                 message=f"lurch-tasks {__version__}: upload {', '.join(configs)}",
                 delete_patterns=[f"{name}/*" for name in configs])
    return files


def upload_files(folder: Path, repo_id: str, files: list[str], *, private: bool, token: str | None, message: str,
                 delete_patterns: list[str] | None = None) -> None:
    """One commit to the dataset repo ``repo_id`` (created if needed) with ``files`` of ``folder``; remote files
    matching ``delete_patterns`` that are not uploaded are deleted."""
    from huggingface_hub import HfApi

    check_repo_id(repo_id)
    token = token or os.environ.get("HF_TOKEN") or _stored_token()
    if not token:
        raise ValueError("token: none found; allowed: pass a token, set HF_TOKEN, or log in with `hf auth login`")
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
    api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="dataset", allow_patterns=files,
                      delete_patterns=delete_patterns, commit_message=message)


def _stored_token() -> str | None:
    """The token saved by ``hf auth login`` (huggingface_hub also checks HF_TOKEN)."""
    from huggingface_hub import get_token

    return get_token()
