"""``lurch push``: upload a materialized folder to the Hugging Face Hub (huggingface_hub)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import __version__
from .card import card_configs
from .manifest import MANIFEST_NAME

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
    """Relative paths ``push`` uploads: README.md and every data file of the configs the card lists."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: {str(folder)!r} does not exist; allowed: a folder written by `lurch materialize`")
    files = ["README.md", MANIFEST_NAME]
    for name, patterns in card_configs(folder).items():
        matched = sorted({p.relative_to(folder).as_posix() for pattern in patterns for p in folder.glob(pattern)})
        if not matched:
            raise ValueError(f"README.md: config {name!r} data_files {patterns} match no file; allowed: existing files")
        files += matched
    if not (folder / MANIFEST_NAME).is_file():  # a dry run fails as the real push must: nothing unchecked is uploaded
        raise ValueError(f"folder: {str(folder)!r} has no {MANIFEST_NAME}; allowed: a folder written by "
                         "`lurch materialize`")
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
