"""Hub-ready dataset folders (DESIGN 7): one module per job.

- ``layout``: fixed output parameters, file names, fingerprints, reading a folder's footers
- ``plan``: which rows go into which file and which shard writes which file (a pure function of the request)
- ``write``: writing one planned file (the unit every backend maps over)
- ``store``: a folder on any fsspec file system
- ``card``: the dataset card (README.md)
- ``build``: ``materialize``: plan -> files -> card + manifest, moved into place atomically
- ``shards``: sharded runs (``--shard I --num-shards N``, ``--finalize``, ``--resume``)
- ``ray_backend``: the same shards as Ray tasks
- ``validation``: ``validate_folder``, row-by-row checks of a folder
- ``upload``: ``push`` to the Hub
"""

from .build import materialize
from .card import render_card
from .layout import fingerprint, read_summary, summarize_folder
from .plan import MaterializeRequest, assign_shards
from .upload import check_repo_id, hub_files, push
from .validation import validate_folder

__all__ = ["MaterializeRequest", "assign_shards", "check_repo_id", "fingerprint", "hub_files", "materialize", "push",
           "read_summary", "render_card", "summarize_folder", "validate_folder"]
