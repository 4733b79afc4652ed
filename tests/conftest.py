import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

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


@pytest.fixture()
def disk(tmp_path, monkeypatch):
    """The table cache switched on in a fresh folder with a fresh MAC key (``disk_cache``), for the cache's tests."""
    from lurch_tasks.core import disk_cache

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LURCH_CACHE_DIR", str(tmp_path / "cache"))
    disk_cache._table_secret.cache_clear()
    yield tmp_path / "cache"
    disk_cache._table_secret.cache_clear()



def _shares_a_module_fixture(path: str) -> bool:
    """Whether the test file defines a module-scoped fixture (and does not opt out with ``SPREAD_OVER_WORKERS =
    True``): read from its source, since xdist's controller schedules node ids and never imports the tests."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError:
        return False
    return 'scope="module"' in source and "SPREAD_OVER_WORKERS = True" not in source


def pytest_xdist_make_scheduler(config, log):
    """Under ``pytest -n 2 --dist loadgroup`` (``make test``): the tests of a file that defines a module-scoped
    fixture (a SmolLM2 run through lm-eval, a materialized folder, a report) run on one worker, so the fixture is
    built once per run instead of once per worker that draws one of its tests; every other test is scheduled on
    its own. (xdist's own loadgroup reads ``xdist_group`` marks through ``item._nodeid``, which pytest 9 no
    longer uses, so it would silently spread every test.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if _shares_a_module_fixture(str(Path(config.rootpath) / path)) else nodeid

    return ModuleFixtureScheduling(config, log)
