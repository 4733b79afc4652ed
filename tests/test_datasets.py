"""Hugging Face side (DESIGN 7): builder -> Parquet folder + card -> load_dataset offline; determinism,
atomic writes, push dry-run and folder validation. Small overrides keep the whole file fast."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from lurch_tasks.core.generation import generate_row, resolve_task, task_size
from lurch_tasks.core.instance import Instance, content_hash
from lurch_tasks.core.registry import all_tasks
from lurch_tasks.dataset_builders._builder import builder_class, index_ranges, task_features, type_mismatches
from lurch_tasks.dataset_builders.find_the_origin import FindTheOrigin
from lurch_tasks.hub import build as hub_build
from lurch_tasks.hub import card as hub_card
from lurch_tasks.hub import layout as hub_layout
from lurch_tasks.hub import materialize, push, render_card, summarize_folder, validate_folder
from lurch_tasks.hub import upload as hub_upload

CONFIG = "find_the_origin"
SMALL = {"context_tokens": [384, 512], "num_samples": 2, "d_values": [-15, -10, -5, -2, 2, 5, 10, 15]}  # 32 rows
FILE_ROWS = 3  # small files so the folder has many: ceil(32 / 3) = 11 files of 2-3 rows


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, by relative path."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4 : text.index("\n---\n", 3)])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("built")
    return materialize([CONFIG], parent / "out", overrides=SMALL, progress=False, max_rows_per_file=FILE_ROWS)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline flags on, and any socket connection attempt fails the test."""
    import huggingface_hub.constants

    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# ---------------------------------------------------------------- builder


def test_builder_configs_mirror_registered_tasks() -> None:
    registered = sorted(t.name for t in all_tasks() if t.family == "find_the_origin")
    assert sorted(c.name for c in FindTheOrigin.BUILDER_CONFIGS) == registered
    assert FindTheOrigin.DEFAULT_CONFIG_NAME == "find_the_origin"
    assert builder_class("find_the_origin") is FindTheOrigin
    with pytest.raises(ValueError, match="family"):
        builder_class("no_such_family")


def test_features_cover_the_instance_record() -> None:
    features = task_features(CONFIG, SMALL)
    assert list(features) == [f.name for f in dataclasses.fields(Instance)]
    row = generate_row(resolve_task(CONFIG, SMALL), 5)
    assert list(features["difficulty"]) == list(row["difficulty"])
    assert type_mismatches(row, features) == []
    bad = json.loads(json.dumps(row))
    bad["difficulty"]["evidence_scope"] = 0  # an int where float64 is declared would change the content hash
    bad["evidence"][0]["start"] = "7"
    problems = type_mismatches(bad, features)
    assert any("difficulty.evidence_scope" in p for p in problems) and any("evidence[0].start" in p for p in problems)


@pytest.mark.parametrize("n", [0, 1, 5, 63, 64, 65, 1000])
def test_index_ranges_are_contiguous_and_cover(n: int) -> None:
    ranges = index_ranges(n)
    assert [i for a, b in ranges for i in range(a, b)] == list(range(n))
    assert len(ranges) <= 64 and all(a < b for a, b in ranges)




# ---------------------------------------------------------------- materialize + load_dataset


def test_folder_layout_and_card(built: Path) -> None:
    assert sorted(p.name for p in built.iterdir()) == ["README.md", CONFIG, "lurch-manifest.json"]
    names = sorted(p.name for p in (built / CONFIG).iterdir())
    assert names == [f"test-{k:05d}-of-00011.parquet" for k in range(11)]
    header = front_matter(built / "README.md")
    assert header["license"] == "cc-by-sa-4.0"
    assert set(hub_card.TAGS) <= set(header["tags"]) and header["task_categories"] == ["text-generation"]
    assert header["configs"] == [
        {"config_name": CONFIG, "data_files": [{"split": "test", "path": f"{CONFIG}/test-*.parquet"}], "default": True}
    ]
    (info,) = header["dataset_info"]
    assert info["splits"][0]["num_examples"] == 32
    assert datasets.Features._from_yaml_list(info["features"]) == task_features(CONFIG, SMALL)
    body = (built / "README.md").read_text(encoding="utf-8")
    task = resolve_task(CONFIG, SMALL)
    hashes = [content_hash(generate_row(task, i)) for i in range(task_size(task))]
    for needle in (
        hub_layout.fingerprint(hashes),
        generate_row(task, 0)["config_hash"],
        "source_hash",
        "family_version",
        "Fraga",
        f"lurch materialize --config {CONFIG} --out DIR",
        "Apache-2.0",
        "## Fields",
    ):
        assert needle in body
    assert render_card(summarize_folder(built)) == body  # the card is a pure function of the folder


def test_load_dataset_offline_equals_generate_row(built: Path, tmp_path: Path, no_network: None) -> None:
    loaded = datasets.load_dataset(str(built), CONFIG, split="test", cache_dir=str(tmp_path / "cache"))
    task = resolve_task(CONFIG, SMALL)
    assert len(loaded) == task_size(task) == 32
    for index, row in enumerate(loaded):
        expected = generate_row(task, index)
        assert row["id"] == expected["id"]
        assert content_hash(row) == content_hash(expected)
    assert loaded[7] == generate_row(task, 7)


def test_bytes_identical_for_num_proc_1_and_2(built: Path, tmp_path: Path) -> None:
    again = materialize(
        [CONFIG], tmp_path / "out", overrides=SMALL, num_proc=2, progress=False, max_rows_per_file=FILE_ROWS
    )
    assert digests(again) == digests(built)


def test_bytes_identical_across_processes_and_hash_seeds(built: Path, tmp_path: Path) -> None:
    code = (
        "import json, sys; from pathlib import Path; from lurch_tasks.hub import materialize; "
        f"materialize([{CONFIG!r}], Path(sys.argv[1]), overrides=json.loads(sys.argv[2]), progress=False, "
        f"max_rows_per_file={FILE_ROWS})"
    )
    procs = []
    for hash_seed in ("1", "4242"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "HF_DATASETS_CACHE": str(tmp_path / f"cache{hash_seed}"),
        }
        out = tmp_path / f"out{hash_seed}"
        procs.append(
            (
                out,
                subprocess.Popen(
                    [sys.executable, "-c", code, str(out), json.dumps(SMALL)],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    for out, proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert digests(out) == digests(built)


def test_writes_are_atomic_and_keep_other_configs(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    shutil.copytree(built, out)
    original = digests(out)
    # Re-running into an existing folder gives the same bytes.
    materialize([CONFIG], out, overrides=SMALL, progress=False, max_rows_per_file=FILE_ROWS)
    assert digests(out) == original
    # Adding a config keeps the existing one byte for byte and lists both in the card.
    materialize(["find_the_origin_random"], out, overrides=SMALL, limit=4, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp dirs left next to out
    now = digests(out)
    assert {k: v for k, v in now.items() if k.startswith(f"{CONFIG}/")} == {
        k: v for k, v in original.items() if k.startswith(f"{CONFIG}/")
    }
    assert [c["config_name"] for c in front_matter(out / "README.md")["configs"]] == [CONFIG, "find_the_origin_random"]
    # Rebuilding a config replaces its whole folder (11 old files -> 1 new).
    materialize([CONFIG], out, overrides=SMALL, limit=4, progress=False)
    assert sorted(p.name for p in (out / CONFIG).iterdir()) == ["test-00000-of-00001.parquet"]
    assert validate_folder(out, progress=False)[CONFIG] == {"rows": 4, "problems": [], "problem_count": 0}
    before = digests(out)
    # Bad arguments fail before any work; a failure during the build leaves the folder untouched.
    with pytest.raises(ValueError, match="config"):
        materialize(["no_such_config"], out, progress=False)
    with pytest.raises(ValueError, match="limit"):
        materialize([CONFIG], out, limit=0, progress=False)
    with pytest.raises(ValueError, match="context_tokens"):
        materialize([CONFIG], out, overrides={"context_tokens": [1]}, progress=False)

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(hub_build, "write_file", explode)
        with pytest.raises(RuntimeError, match="boom"):
            materialize([CONFIG], out, overrides=SMALL, limit=2, progress=False)
    assert digests(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ---------------------------------------------------------------- push


def test_push_dry_run_lists_files_without_network(built: Path, no_network: None) -> None:
    files = push(built, "lurch-org/find-the-origin", dry_run=True)
    parquet = [f"{CONFIG}/test-{k:05d}-of-00011.parquet" for k in range(11)]
    assert files == ["README.md", "lurch-manifest.json", *parquet]


def test_push_creates_repo_and_uploads_listed_files(
    built: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    import huggingface_hub

    calls: list[tuple[str, dict]] = []

    class FakeApi:
        def __init__(self, token: str | None = None) -> None:
            calls.append(("init", {"token": token}))

        def create_repo(self, repo_id: str, **kwargs) -> None:
            calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

        def upload_folder(self, **kwargs) -> None:
            calls.append(("upload_folder", kwargs))

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    files = push(built, "lurch-org/fto", dry_run=False, private=True)
    assert files == push(built, "lurch-org/fto", dry_run=True)
    assert calls[0] == ("init", {"token": "hf_from_env"})
    assert calls[1] == (
        "create_repo",
        {"repo_id": "lurch-org/fto", "repo_type": "dataset", "exist_ok": True, "private": True},
    )
    upload = calls[2][1]
    assert upload["repo_id"] == "lurch-org/fto" and upload["repo_type"] == "dataset"
    assert upload["folder_path"] == str(built) and upload["allow_patterns"] == files
    assert upload["delete_patterns"] == [f"{CONFIG}/*"]  # stale shards of the uploaded configs go in the same commit


@pytest.mark.parametrize(
    "repo_id",
    [
        "find-the-origin",
        "a/b/c",
        "org/",
        "/name",
        "org/na me",
        "org/-name",
        "org/a--b",
        "org/a..b",
        "org/name.git",
        "",
        None,
        "org/" + "x" * 97,
    ],
)
def test_push_rejects_bad_repo_ids(built: Path, repo_id: object) -> None:
    with pytest.raises(ValueError, match="^repo_id: .* is not allowed; allowed: ORG/NAME"):
        push(built, repo_id, dry_run=True)  # type: ignore[arg-type]


def test_push_rejects_bad_folders_and_missing_token(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    with pytest.raises(ValueError, match="^folder: .* does not exist"):
        push(tmp_path / "missing", "org/name", dry_run=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no README.md"):
        push(tmp_path / "empty", "org/name", dry_run=True)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "README.md").write_text("# no header\n")
    with pytest.raises(ValueError, match="no `configs:`"):
        push(tmp_path / "plain", "org/name", dry_run=True)
    header = "---\nconfigs:\n- config_name: x\n  data_files: x/test-*.parquet\n---\n"
    (tmp_path / "plain" / "README.md").write_text(header)
    with pytest.raises(ValueError, match="has no lurch-manifest.json"):  # a card alone is not a dataset we made
        push(tmp_path / "plain", "org/name", dry_run=True)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(hub_upload, "_stored_token", lambda: None)
    with pytest.raises(ValueError, match="^token: none found"):
        push(built, "org/name", dry_run=False)


def test_push_refuses_edited_or_planted_folders(built: Path, tmp_path: Path, no_network: None) -> None:
    """Only what the manifest vouches for is published: an edited data file or card, a stray data file and a
    manifest naming a path outside the folder are each one error before any upload."""
    import json
    import shutil

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(built, target)
        return target

    edited = copy("edited")
    first = sorted((edited / CONFIG).glob("*.parquet"))[0]
    first.write_bytes(first.read_bytes()[:-1] + b"\0")
    with pytest.raises(ValueError, match="changed since `lurch materialize`"):
        push(edited, "org/name", dry_run=True)
    card = copy("card")
    (card / "README.md").write_text((card / "README.md").read_text() + "\nextra prose\n")
    with pytest.raises(ValueError, match="^README.md: changed"):
        push(card, "org/name", dry_run=True)
    stray = copy("stray")
    shutil.copy(first, stray / CONFIG / "test-00099-of-00099.parquet")
    with pytest.raises(ValueError, match="differ from those lurch-manifest.json lists"):
        push(stray, "org/name", dry_run=True)
    planted = copy("planted")
    manifest = json.loads((planted / "lurch-manifest.json").read_text())
    files = manifest["configs"][CONFIG]["files"]
    files["../outside.parquet"] = files.pop(sorted(files)[0])
    (planted / "lurch-manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError):
        push(planted, "org/name", dry_run=True)


# ---------------------------------------------------------------- validate


def test_validate_folder_passes_a_good_folder(built: Path) -> None:
    assert validate_folder(built, progress=False) == {CONFIG: {"rows": 32, "problems": [], "problem_count": 0}}


def test_validate_folder_finds_a_tampered_answer(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(built, out)
    path = out / CONFIG / "test-00001-of-00011.parquet"
    table = pq.read_table(path)
    answers = table.column("answer").to_pylist()
    answers[0] = json.dumps("notthegoldword")
    table = table.set_column(table.schema.get_field_index("answer"), "answer", pa.array(answers, pa.string()))
    pq.write_table(table, path)
    result = validate_folder(out, progress=False)[CONFIG]
    assert result["rows"] == 32
    text = "\n".join(result["problems"])
    assert f"{CONFIG}/test/2: the answer is not the chain's origin" in text  # file 1 holds rows 2..4
    assert "fingerprint" in text
    with pytest.raises(ValueError, match="folder"):
        validate_folder(tmp_path / "missing", progress=False)
