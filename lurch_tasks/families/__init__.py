"""Task families, one package each. They register themselves when imported; the registry imports them
through the ``lurch_tasks.families`` entry-point group (see pyproject.toml)."""
