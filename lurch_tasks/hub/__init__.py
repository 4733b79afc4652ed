"""Hub-ready dataset folders (DESIGN 7): one module per job.

- ``layout``: fixed output parameters, file names, fingerprints, reading a folder's footers
- ``card``: the dataset card (README.md)
- ``build``: ``materialize``, builder -> Parquet + card, atomically
- ``validation``: ``validate_folder``, row-by-row checks of a folder
- ``upload``: ``push`` to the Hub
"""

from .build import materialize
from .card import render_card
from .layout import fingerprint, plan_chunks, read_summary, summarize_folder
from .upload import check_repo_id, hub_files, push
from .validation import validate_folder

__all__ = ["check_repo_id", "fingerprint", "hub_files", "materialize", "plan_chunks", "push", "read_summary",
           "render_card", "summarize_folder", "validate_folder"]
