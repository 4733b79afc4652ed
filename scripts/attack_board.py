"""Attack `lurch leaderboard build` with hostile submissions (issue 26, items 4-8 and 10).

Builds one valid submission (`lurch eval --model lurch-solver --tasks memory_drift --limit 2 --log_samples`, or
``--valid FOLDER``) and from it hostile ones: archive bombs (a million members, a 2 GiB zip, many empty files), corrupt
and unsupported archives, planted task names, one model name under another revision, injection in the model name, and
broken JSON shapes. Then it validates every submission, each in its own process (wall time, and peak RSS from the
child's own ``getrusage``), and builds one board from all of them, printing the board's rows and every submission's
reason. Last, the doc-cache case: a tampered submission against a locally edited doc cache.

    python scripts/attack_board.py --work /tmp/attack            # this checkout
    PYTHONPATH=/path/to/old/checkout python scripts/attack_board.py --work /tmp/attack-before --timeout 120

Children inherit ``PYTHONPATH``, so the second line measures another version of lurch-tasks with the same attacks.
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

VALID_NAME = "lurch-solver"
ZERO_CHUNK = b"\0" * (1 << 20)


# ------------------------------------------------------------------ building the submissions


def make_valid(work: Path, version: str) -> Path:
    folder = work / "valid"
    if (folder / "submission.json").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    done = subprocess.run([sys.executable, "-c", "import sys; from lurch_tasks.cli import main; sys.exit(main())",
                           "eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--limit", "2",
                           "--log_samples", "--output_path", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    metadata = {"schema_version": 1, "model": {"name": VALID_NAME, "revision": version},
                "run": {"lm_eval_model": "lurch-solver", "model_args": "", "chat_template": False, "generation": {}},
                "date": "2026-12-03", "lurch_tasks_version": version, "tasks": ["memory_drift"], "seed": 0,
                "subset": True, "contact": "attacker@example.org"}
    (folder / "submission.json").write_text(json.dumps(metadata, indent=2))
    return folder


def copy(valid: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(valid, target)
    return target


def samples(folder: Path, task: str) -> Path:
    return next(folder.rglob(f"samples_{task}_2*.jsonl"))


def results(folder: Path) -> Path:
    return next(folder.rglob("results_*.json"))


def edit_line(path: Path, edit, line: int = 0) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line] = edit(lines[line])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def edit_record(path: Path, edit, line: int = 0) -> None:
    def apply(text: str) -> str:
        record = json.loads(text)
        edit(record)
        return json.dumps(record)

    edit_line(path, apply, line)


def edit_results(folder: Path, edit) -> None:
    path = results(folder)
    document = json.loads(path.read_text())
    document = edit(document) or document
    path.write_text(json.dumps(document))


def edit_metadata(folder: Path, **fields) -> None:
    path = folder / "submission.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


def zip_folder(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, path.relative_to(folder).as_posix())
    return target


def patch_zip(archive: Path, member: str, offset_local: int, offset_central: int, value: bytes) -> None:
    """Overwrite a field of ``member`` in both its local header and its central directory entry."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as bundle:
        info = bundle.getinfo(member)
        start = bundle.start_dir
    data[info.header_offset + offset_local:info.header_offset + offset_local + len(value)] = value
    position = start
    while data[position:position + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[position + 28:position + 34])
        if data[position + 46:position + 46 + name_len].decode() == member:
            data[position + offset_central:position + offset_central + len(value)] = value
            break
        position += 46 + name_len + extra_len + comment_len
    archive.write_bytes(bytes(data))


def tar_xz_members(target: Path, count: int) -> Path:
    with lzma.open(target, "wb", preset=9) as raw, tarfile.open(fileobj=raw, mode="w|") as bundle:
        for number in range(count):
            bundle.addfile(tarfile.TarInfo(f"f{number}"), io.BytesIO(b""))
            bundle.members.clear()  # the writer keeps every header otherwise
    return target


def zip_bomb(target: Path, members: int, size: int) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bundle:
        for number in range(members):
            with bundle.open(f"samples_bomb{number}_2026-01-01T00-00-00.jsonl", "w", force_zip64=True) as out:
                for _ in range(size // len(ZERO_CHUNK)):
                    out.write(ZERO_CHUNK)
    return target


def empty_files_zip(target: Path, count: int) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as bundle:
        for number in range(count):
            bundle.writestr(f"e{number}", b"")
    return target


def hostile(valid: Path, work: Path) -> dict[str, Path]:
    """Every hostile submission, by name (built once; kept in ``work``)."""
    made: dict[str, Path] = {}
    base = work / "hostile"
    base.mkdir(parents=True, exist_ok=True)

    def folder(name: str) -> Path:
        made[name] = copy(valid, base / name)
        return made[name]

    def archive(name: str, build) -> None:
        path = base / name
        if not path.exists():
            build(path)
        made[name] = path

    # archives
    archive("bomb-1M-members-xz.tar", lambda p: tar_xz_members(p, 1_000_000))  # xz inside a .tar name
    archive("bomb-2GiB.zip", lambda p: zip_bomb(p, 8, 256 << 20))
    archive("bomb-200k-empty.zip", lambda p: empty_files_zip(p, 200_000))
    valid_zip = zip_folder(valid, work / "valid.zip")

    def corrupt_deflate(path: Path) -> None:
        data = bytearray(valid_zip.read_bytes())
        with zipfile.ZipFile(valid_zip) as bundle:
            info = max(bundle.infolist(), key=lambda i: i.compress_size)
        middle = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
        data[middle:middle + 64] = bytes(64)
        path.write_bytes(bytes(data))

    archive("corrupt-deflate.zip", corrupt_deflate)

    def corrupt_xz(path: Path) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:xz") as bundle:
            bundle.add(valid, arcname=".")
        data = bytearray(buffer.getvalue())
        data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
        path.write_bytes(bytes(data))

    archive("corrupt.tar.xz", corrupt_xz)

    def encrypted(path: Path) -> None:
        shutil.copy(valid_zip, path)
        patch_zip(path, "submission.json", 6, 8, struct.pack("<H", 0x1))

    archive("encrypted.zip", encrypted)

    def unsupported(path: Path) -> None:
        shutil.copy(valid_zip, path)
        patch_zip(path, "submission.json", 8, 10, struct.pack("<H", 99))  # 99: WinZip AES

    archive("unsupported-method.zip", unsupported)

    def bad_crc(path: Path) -> None:
        shutil.copy(valid_zip, path)
        patch_zip(path, "submission.json", 14, 16, struct.pack("<I", 0xDEADBEEF))

    archive("bad-crc.zip", bad_crc)

    def truncated(path: Path) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
            bundle.add(valid, arcname=".")
        path.write_bytes(buffer.getvalue()[:len(buffer.getvalue()) // 2])

    archive("truncated.tar.gz", truncated)

    # planted task names (claims recomputed: the solver scores every doc 1.0, and the counts stay equal)
    planted = folder("planted-find_the_origin-as-random")
    shutil.copy(samples(planted, "find_the_origin"), samples(planted, "find_the_origin_random"))
    edge = folder("planted-edge-as-clique")
    shutil.copy(samples(edge, "memory_drift_edge"), samples(edge, "memory_drift_clique"))

    def same_claims(document: dict) -> None:
        document["results"]["memory_drift_clique"] = {**document["results"]["memory_drift_edge"],
                                                      "alias": "memory_drift_clique"}

    edit_results(edge, same_claims)

    # JSON shapes
    edit_record(samples(folder("doc-without-id"), "recon_chain"), lambda r: r["doc"].pop("id"))
    edit_results(folder("results-a-list"), lambda d: [d])
    edit_results(folder("effective-null"), lambda d: d["n-samples"]["recon_chain"].update(effective=None))
    edit_results(folder("effective-string"), lambda d: d["n-samples"]["recon_chain"].update(effective="2"))
    inf = folder("effective-infinity")
    edit_results(inf, lambda d: d["n-samples"]["recon_chain"].update(effective=float("inf")))
    edit_results(folder("effective-nan"), lambda d: d["n-samples"]["recon_chain"].update(effective=float("nan")))
    edit_record(samples(folder("resps-an-int"), "find_the_origin"), lambda r: r.update(resps=7, filtered_resps=7))
    edit_record(samples(folder("params-a-list"), "find_the_origin"), lambda r: r["doc"].update(params=[1, 2]))
    edit_record(samples(folder("params-not-json"), "find_the_origin"), lambda r: r["doc"].update(params="{nope"))
    edit_record(samples(folder("difficulty-a-string"), "recon_chain"), lambda r: r["doc"].update(difficulty="hard"))
    edit_line(samples(folder("deep-nesting"), "recon_chain"),
              lambda text: text[:-1] + ', "deep": ' + "[" * 200_000 + "]" * 200_000 + "}")
    edit_results(folder("claimed-infinity"),
                 lambda d: d["results"]["recon_chain"].update({"score,none": float("inf")}))
    huge = folder("claimed-huge-int")
    text = results(huge).read_text().replace('"score,none": 1.0', '"score,none": 1' + "0" * 400, 1)
    results(huge).write_text(text)
    # same name, same revision as the valid one (a second copy): refused as a twin
    folder("same-name-same-revision")
    # hostile but valid: these must be on the board, as their own rows, written inert
    edit_metadata(folder("same-name-other-revision"), model={"name": VALID_NAME, "revision": "attacker-rev"})
    edit_metadata(folder("injection-name"), model={"name": "evil | 1 |\n| 0 | forged \x1b[31m=cmd|' /C calc'!A0",
                                                   "revision": "=HYPERLINK(\"http://x\")\u202e"})
    return made


# ------------------------------------------------------------------ running them


def run_child(code: str, args: list[str], timeout: float) -> tuple[int | None, float, str, str]:
    """Run ``python -c code args`` (its own session, killed whole on timeout): (exit code or None on timeout, wall
    seconds, stdout, stderr). Children report their own peak RSS (``getrusage``)."""
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)
        out, err = child.communicate()
        return None, time.monotonic() - started, out, err
    return child.returncode, time.monotonic() - started, out, err


PEAK = """
def peak_mb():  # VmHWM: this process's own peak (ru_maxrss would carry the parent's across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

VALIDATE = PEAK + """
import json, sys
from pathlib import Path
from lurch_tasks.leaderboard.validate import validate
try:
    verdict = validate(Path(sys.argv[1]))
    print(json.dumps({"ok": verdict.ok, "problems": list(verdict.problems)}))
except BaseException as error:
    print(json.dumps({"ok": False, "crash": f"{type(error).__name__}: {str(error)[:200]}"}))
print(json.dumps({"peak_mb": peak_mb()}))
"""

BUILD = PEAK + """
import sys
from lurch_tasks.cli import main
try:
    code = main()
finally:
    print(f"peak RSS {peak_mb():.0f} MB", file=sys.stderr)
sys.exit(code)
"""


def validate_each(made: dict[str, Path], timeout: float) -> list[dict]:
    rows = []
    for name, path in made.items():
        code, wall, out, err = run_child(VALIDATE, [str(path)], timeout)
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        verdict = lines[0] if lines else {}
        peak = lines[-1].get("peak_mb", float("nan")) if lines else float("nan")
        if code is None:
            outcome = f"TIMEOUT after {timeout:.0f} s"
        elif "crash" in verdict:
            outcome = f"CRASH {verdict['crash']}"
        elif not verdict:
            outcome = f"DIED (exit {code}): {err.strip().splitlines()[-1][:160] if err.strip() else ''}"
        elif verdict["ok"]:
            outcome = "pass"
        else:
            outcome = f"{len(verdict['problems'])} problem(s): {verdict['problems'][0][:150]}"
        rows.append({"submission": name, "wall_s": wall, "peak_mb": peak, "outcome": outcome})
        print(f"{name:38} {wall:7.1f} s {peak:7.0f} MB  {outcome}", flush=True)
    return rows


def build_board(valid: Path, made: dict[str, Path], work: Path, timeout: float) -> None:
    out = work / "board"
    shutil.rmtree(out, ignore_errors=True)
    args = ["leaderboard", "build", str(valid), *map(str, made.values()), "--out", str(out), "--bootstrap", "50",
            "--quiet"]
    code, wall, stdout, stderr = run_child(BUILD, args, timeout)
    print(f"\nboard of 1 valid + {len(made)} hostile submissions: exit {code}, {wall:.1f} s")
    print(stdout)
    tail = stderr.strip().splitlines()
    print("\n".join(tail[-40:]) if code != 0 else "\n".join(line for line in tail if "left out" in line
                                                             or "peak RSS" in line))
    if code == 0:
        board = json.loads((out / "leaderboard.json").read_text())
        print("\nrows (model, revision):", [(r["model"], r.get("revision")) for r in board["overall"]])
        print("partial rows (model, revision):", [(r["model"], r.get("revision")) for r in board.get("partial", [])])
        families = {f: [(r["model"], r.get("revision")) for r in rows] for f, rows in board["families"].items()}
        print("recon family rows:", families.get("recon"))


# ------------------------------------------------------------------ the doc cache


POISON = """
import json, os, sys
from pathlib import Path
import pyarrow as pa
from lurch_tasks.harness import doc_cache
from lurch_tasks.leaderboard.validate import validate
folder = Path(sys.argv[1])
first = validate(folder)  # fills the cache with the genuine docs
path = next(folder.rglob("samples_find_the_origin_2*.jsonl"))
lines = path.read_text().splitlines()
record = json.loads(lines[0])
record["doc"]["prompt"] = record["doc"]["prompt"].replace("the", "teh", 1)  # a tampered doc
lines[0] = json.dumps(record)
path.write_text("\\n".join(lines) + "\\n")
refused = validate(folder)
# the local attacker rewrites the cached row to the tampered doc, with a fresh checksum in whatever the format holds
entry = next(p for p in (doc_cache.docs_dir() or Path("/")).glob("find_the_origin-*.arrow"))
table = pa.ipc.open_file(pa.memory_map(str(entry))).read_all()
rows = table.column("row").to_pylist()
indices = table.column("index").to_pylist()
position = indices.index(record["doc"]["index"])
rows[position] = json.dumps(record["doc"], ensure_ascii=False, separators=(",", ":"))
columns = {"index": indices, "row": rows}
if "crc32" in table.column_names:
    import zlib
    columns["crc32"] = [zlib.crc32(r.encode()) for r in rows]
else:  # the MAC cannot be recomputed without the key: the attacker keeps the old one (or any other)
    columns["mac"] = table.column("mac").to_pylist()
new = pa.table({name: columns[name] for name in table.schema.names}, schema=table.schema.remove_metadata())
with pa.ipc.new_file(str(entry), table.schema) as writer:
    writer.write_table(new.replace_schema_metadata(table.schema.metadata))
poisoned = validate(folder)
print(json.dumps({"genuine": first.ok, "tampered_without_poison": refused.ok, "tampered_with_poisoned_cache":
                  poisoned.ok, "reason": (poisoned.problems or ("",))[0][:160]}))
"""


def doc_cache_case(valid: Path, work: Path) -> None:
    target = copy(valid, work / "poison")
    os.environ["LURCH_CACHE_DIR"] = str(work / "poison-cache")
    os.environ["XDG_CONFIG_HOME"] = str(work / "poison-config")
    shutil.rmtree(work / "poison-cache", ignore_errors=True)
    code, wall, out, err = run_child(POISON, [str(target)], 600)
    print(f"\ndoc cache poisoning ({wall:.1f} s, exit {code}): {out.strip() or err.strip()[-600:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="folder for the submissions and the board")
    parser.add_argument("--valid", type=Path, help="a valid submission folder (default: made with lurch eval)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds one validation or the build may take")
    parser.add_argument("--skip-each", action="store_true", help="only build the board")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ["LURCH_CACHE_DIR"] = "off"
    version = subprocess.run([sys.executable, "-c", "import lurch_tasks; print(lurch_tasks.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    os.chdir(args.work)  # children's sys.path starts with their cwd: never a checkout that would shadow PYTHONPATH
    valid = args.valid.resolve() if args.valid else make_valid(args.work, version)
    started = time.monotonic()
    made = hostile(valid, args.work)
    print(f"{len(made)} hostile submissions made in {time.monotonic() - started:.1f} s "
          f"({', '.join(f'{p.name} {p.stat().st_size / 1024:.0f} KB' for p in made.values() if p.is_file())})\n")
    if not args.skip_each:
        rows = validate_each(made, args.timeout)
        worst = max(rows, key=lambda r: r["wall_s"])
        print(f"\nworst: {worst['submission']}: {worst['wall_s']:.1f} s, peak RSS {worst['peak_mb']:.0f} MB")
    build_board(valid, made, args.work, args.timeout * 4)
    doc_cache_case(valid, args.work)


if __name__ == "__main__":
    main()
