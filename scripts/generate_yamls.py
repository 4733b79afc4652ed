"""Regenerate yaml_tasks/*.yaml from the task registry (tests fail when the committed files drift)."""

from pathlib import Path

from lurch_tasks.harness.yamls import write_all

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "yaml_tasks"
    for path in write_all(target):
        print(path.relative_to(target.parent))
