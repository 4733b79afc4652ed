"""Task families; importing this package registers every built-in family and task."""

from . import find_origin, graph  # noqa: F401
