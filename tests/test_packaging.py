"""The wheel as pip builds it: every shipped data file inside, and no packaging warning on the way."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIRS = {"lurch_tasks/core/data": ROOT / "lurch_tasks" / "core" / "data",
             "lurch_tasks/yaml_tasks": ROOT / "yaml_tasks"}
DATA_SUFFIXES = {".txt", ".json", ".md", ".yaml"}


def test_the_wheel_ships_every_data_file_without_a_packaging_warning(tmp_path):
    # the installed setuptools, offline (no build isolation: nothing is fetched)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-2000:]
    assert "importable" not in built.stdout + built.stderr, "setuptools warns that a data folder is not a package"
    (wheel,) = tmp_path.glob("lurch_tasks-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for prefix, folder in DATA_DIRS.items():
        shipped = {path.name for path in folder.iterdir() if path.is_file() and path.suffix in DATA_SUFFIXES}
        assert shipped and {f"{prefix}/{name}" for name in shipped} <= names, prefix
    assert "lurch_tasks/core/instance.schema.json" in names
