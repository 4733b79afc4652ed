"""Analyses that need no model call: retrieval-coverage diagnostics of generated instances (``retrieval``)."""
