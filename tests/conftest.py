import atexit
import os
import shutil
import tempfile

# No test may touch the network: the Hub libraries must work from local files only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# lm-eval docs are cached on disk (harness.doc_cache): off for the suite, so no test reads or fills the user's
# cache; the cache's own tests switch it on in a temporary folder.
os.environ["LURCH_CACHE_DIR"] = "off"
# The datasets library caches what load_dataset builds from a folder; a test run gets its own cache (one per
# worker, removed at exit), so no test reads rows another run cached under the same name, nor fills the user's.
_DATASETS_CACHE = tempfile.mkdtemp(prefix="lurch-test-datasets-")
os.environ["HF_DATASETS_CACHE"] = _DATASETS_CACHE
atexit.register(shutil.rmtree, _DATASETS_CACHE, True)


def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n 2 --dist loadgroup`` (``make test``), the tests that share a module-scoped fixture of their
    own module run on one worker, so an expensive fixture (a SmolLM2 run through lm-eval, a materialized folder,
    a report) is built once per run instead of once per worker that happens to draw one of its tests. A module
    whose fixture is cheap and whose tests are many sets ``SPREAD_OVER_WORKERS = True`` to opt out."""
    import pytest

    for item in items:
        module = getattr(item, "module", None)
        if module is None or getattr(module, "SPREAD_OVER_WORKERS", False):
            continue
        shared = [fixture for defs in item._fixtureinfo.name2fixturedefs.values() for fixture in defs
                  if fixture.scope == "module" and getattr(fixture.func, "__module__", None) == module.__name__]
        if shared and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(module.__name__))
