"""Where our Inspect and lighteval tasks keep a doc in their logs, read back by ``analysis.harness_logs`` (one place,
so the writers and the reader cannot drift apart; no harness import, so the reader works without either)."""

DOC_KEY = "doc"  # Inspect: the sample metadata key of the whole doc; lighteval: Doc.specific's
LEAF_KEY = "lurch_task"  # Inspect: the lm-eval task (a member of a group) that built the doc and scores it
SKIPPED_KEY = "lurch_skipped"  # Inspect: the task's metadata naming the leaves the window left out (leaf -> why)
