"""README.md and docs/*.md: every command in them works, every relative link resolves.

Every fenced shell block carries a marker on the line before it:
  <!-- docs: run -->              executed (in a temporary folder, offline, the venv's bin first on PATH); a page's
                                  run blocks (``bash`` and ``python``) share one folder, in page order
  <!-- docs: run-small (why) -->  executed like ``run`` after SMALL_SIZES shrinks its sizes (``--limit 40`` -> 2, ...);
                                  a line that PARSE_ONLY says cannot run here (a real model, an install, a Ray
                                  instance, an upload, a placeholder, minutes of work) is parsed instead, and
                                  FIXTURES writes what the reader writes by hand (a submission.json) or another page
                                  made (a materialized data/)
  <!-- docs: parse (why) -->      not executed (a GPU model, a Hub push, a Ray cluster, a server, minutes of work):
                                  every ``lurch`` line goes through the real CLI parser (``lurch eval`` through
                                  lm-eval's), ``--tasks`` / ``--config`` names must be registered, ``make X`` must
                                  be a Makefile target and ``scripts/...`` must exist
Run blocks are written to be fast (a tiny ``--limit``); the whole file takes about a minute.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SHELL = ("bash", "sh", "shell", "console")
MARK = re.compile(r"^<!-- docs: (run-small|run|parse)\b[^>]*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    mark: str | None  # "run", "run-small", "parse" or None
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, each with the docs marker on the line before it (if any)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, lang = match.group(1), match.group(2).lower()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence[:3])
                    and not lines[j].strip(fence[0]).strip()), len(lines))
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(prev)
        found.append(Block(page, i + 1, lang, mark.group(1) if mark else None, "\n".join(lines[i + 1:end])))
        i = end + 1
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]
SHELL_BLOCKS = [block for block in ALL_BLOCKS if block.lang in SHELL]


def test_pages_exist_and_readme_is_short():
    names = {page.name for page in PAGES}
    for page in ("find_origin.md", "graph.md", "implicit_hop.md", "recon.md", "evaluation.md", "datasets.md",
                 "report.md", "leaderboard.md", "scale_out.md", "real_models.md", "validity.md", "performance.md",
                 "development.md"):
        assert page in names
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 260


def test_every_shell_block_is_marked():
    unmarked = [block.where() for block in SHELL_BLOCKS if block.mark is None]
    assert not unmarked, f"shell blocks without <!-- docs: run -->, run-small (why) or parse (why): {unmarked}"
    assert any(block.mark == "run" for block in SHELL_BLOCKS)
    assert any(block.mark == "run-small" for block in SHELL_BLOCKS)


# ---------------------------------------------------------------------------------------------------- commands


def commands(text: str) -> list[list[str]]:
    """The simple commands of a shell block: continuation lines joined, comments dropped, split at ``&&``,
    ``||``, ``;`` and ``|``; redirections and leading ``VAR=value`` assignments removed; ``...`` placeholders
    dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        current: list[str] = []
        skip_next = False
        for i, token in enumerate(tokens):
            redirect = bool(token) and set(token) <= set("<>&") and ("<" in token or ">" in token)
            if skip_next:
                skip_next = False
            elif redirect:
                skip_next = True  # the redirection's target
            elif token.isdigit() and i + 1 < len(tokens) and tokens[i + 1][:1] in "<>":
                continue  # the file descriptor of ``2>&1``
            elif token in ("&&", "||", ";", "|", "&"):
                found.append(current)
                current = []
            elif token != "...":
                current.append(token)
        found.append(current)
    result = []
    for command in found:
        while command and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", command[0]):
            command = command[1:]
        if command:
            result.append(command)
    return result


def test_commands_splits_like_a_shell():
    text = ("HF_HUB_OFFLINE=1 lurch eval --model hf \\\n    --tasks a,b   # note\nmake demo && ls > out.txt 2>&1\n"
            "lurch materialize ... --resume\n")
    assert commands(text) == [["lurch", "eval", "--model", "hf", "--tasks", "a,b"], ["make", "demo"], ["ls"],
                              ["lurch", "materialize", "--resume"]]


def _registered_names() -> frozenset[str]:
    from lurch_tasks.harness.lm_eval_cli import our_task_names

    return our_task_names()


def _option_values(args: list[str], name: str) -> list[str]:
    values = []
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith(name + "="):
            values.append(arg[len(name) + 1:])
    return values


def _argparse_ok(parse) -> str | None:
    """None if ``parse()`` accepts its arguments, else argparse's message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parse()
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {exit_.code}"
    return None


def _metadata_problem(args: list[str]) -> str | None:
    from lurch_tasks.core.registry import get_task
    from lurch_tasks.harness.metadata import ALIASES, HARNESS_KEYS

    knobs = set()
    for name in _registered_names():
        with contextlib.suppress(Exception):
            knobs |= set(get_task(name).config.__dataclass_fields__)
    for text in _option_values(args, "--metadata"):
        try:
            metadata = json.loads(text)
        except json.JSONDecodeError as err:
            return f"--metadata is not JSON: {err}"
        unknown = set(metadata) - set(HARNESS_KEYS) - set(ALIASES) - knobs - {"chat_template", "num_samples"}
        if unknown:
            return f"--metadata keys unknown: {sorted(unknown)}"
    return None


def check_lurch(args: list[str]) -> str | None:
    """None if ``lurch ARGS`` parses (without running), else why not."""
    names = _registered_names()
    for value in _option_values(args, "--tasks"):
        unknown = [n for n in value.split(",") if n.split("__", 1)[0] not in names]
        if unknown:
            return f"--tasks names not registered: {unknown}"
    for value in _option_values(args, "--config"):
        if value not in names:
            return f"--config {value!r} is not registered"
    if args and args[0] == "eval":
        from lm_eval._cli import HarnessCLI

        from lurch_tasks.harness.lm_eval_cli import lm_eval_argv

        try:
            argv = lm_eval_argv(args[1:])
        except ValueError as err:
            return str(err)
        problem = _metadata_problem(args)
        return problem or _argparse_ok(lambda: HarnessCLI()._parser.parse_args(argv[1:]))
    from lurch_tasks.cli import build_parser

    return _argparse_ok(lambda: build_parser().parse_args(args))


def check_lm_eval(args: list[str]) -> str | None:
    from lm_eval._cli import HarnessCLI

    parser = HarnessCLI()
    argv = args if args and args[0] in ("run", "ls", "validate") else ["run", *args]
    return _metadata_problem(args) or _argparse_ok(lambda: parser._parser.parse_args(argv))


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z][\w-]*):", text, re.M)}


def check_command(command: list[str]) -> str | None:
    """None if the command is fine as far as can be told without running it, else why not."""
    head, args = command[0], command[1:]
    if head in ("lurch", ".venv/bin/lurch"):
        return check_lurch(args)
    if head in ("lm_eval", "lm-eval"):
        return check_lm_eval(args)
    if head == "make":
        targets = [a for a in args if not a.startswith("-") and "=" not in a]
        missing = [t for t in targets if t not in make_targets()]
        return f"not a Makefile target: {missing}" if missing else None
    script = next((a for a in (args if head.endswith("python") or head.endswith("python3") else [head])
                   if a.startswith("scripts/")), None)
    if script is not None and not (ROOT / script).is_file():
        return f"no such file: {script}"
    return None


# ------------------------------------------------------------------------------------------------ run-small blocks

# (pattern, replacement, why), applied in order to each line of a run-small block: the docs' sizes become tiny ones
SMALL_SIZES: tuple[tuple[str, str, str], ...] = (
    (r"--limit \d+", "--limit 2", "two docs of each task (or family) instead of 14-80"),
    (r"--n \d+", "--n 2", "two instances (diagnose: the first two questions' case)"),
    (r'"num_samples": \d+', '"num_samples": 1', "one instance per grid cell"),
    (r"num_samples=\d+", "num_samples=1", "one RECON case per cell"),
    (r"--reps \d+", "--reps 2", "two simulated data sets, not 200"),
    (r"lurch materialize(?![^#\n]*--(limit|finalize))", "lurch materialize --limit 2",
     "a config's whole grid is hundreds of rows"),
    (r"lurch audit-shortcuts(?![^#\n]*--n )", "lurch audit-shortcuts --n 8",
     "8 rows: on 2 the best-of-variants strategies fit by luck and the audit fails"),
    (r"lurch diagnose(?![^#\n]*--retrievers)", "lurch diagnose --retrievers bm25",
     "the dense retriever alone takes ~12 s"),
)
OUR_MODELS = ("lurch-solver", "lurch-random", "lurch-simulated", "dummy")
FAST_SCRIPTS = ("scripts/glm_coverage.py",)  # seconds once SMALL_SIZES applies; every other script takes minutes
# inputs a page's lines read that another page writes (the run there covers them)
ELSEWHERE = {"commands.md": ("runs/solver", "sub/")}


def _script(command: list[str]) -> str | None:
    return next((a for a in command if a.startswith("scripts/")), None)


# (why, test on (page name, command)): a run-small line with a command that matches is parsed, not run
PARSE_ONLY: tuple[tuple[str, object], ...] = (
    ("installs packages (nothing may download)", lambda page, c: c[0] in ("pip", "apt-get")),
    ("make builds a venv or runs the suite", lambda page, c: c[0] == "make"),
    ("a real model or server (a PATH, a Hub id, a URL)",
     lambda page, c: any(m not in OUR_MODELS for m in _option_values(c, "--model"))),
    ("starts a Ray instance (tens of seconds)", lambda page, c: "ray" in _option_values(c, "--backend")),
    ("uploads (only --dry-run runs)", lambda page, c: "push" in c[1:3] and "--dry-run" not in c),
    ("a script that takes minutes", lambda page, c: _script(c) not in (None, *FAST_SCRIPTS)),
    ("plain lm_eval indexes all of lm-eval's own tasks (~10 s); tests/test_harness.py runs this very command",
     lambda page, c: c[0] in ("lm_eval", "lm-eval")),
    ("reads a folder another page writes", lambda page, c: any(a in ELSEWHERE.get(page, ()) for a in c)),
)
# (page, the first line containing this): shell run just before that line, and why
FIXTURES = {
    ("evaluation.md", "dataset_path"): (
        "data/ is the folder datasets.md materializes",
        "lurch materialize --config find_the_origin --limit 2 --out data/ --quiet"),
    ("leaderboard.md", "lurch leaderboard build a/ b/"): (
        "a/ and b/submission.json are written by hand, as the page's example shows",
        """python - <<'EOF'
import json, lurch_tasks
for folder, model, subset in (("a", "lurch-solver", False), ("b", "lurch-random", True)):
    doc = {"schema_version": 1, "model": {"name": model, "revision": "r1"},
           "run": {"lm_eval_model": model, "model_args": "", "chat_template": False, "generation": {}},
           "date": "2026-12-02", "lurch_tasks_version": lurch_tasks.__version__,
           "tasks": ["implicit_hop_scope", "memory_drift_subgraph"], "seed": 0, "subset": subset,
           "contact": "me@example.org"}
    open(f"{folder}/submission.json", "w").write(json.dumps(doc))
EOF"""),
}


def small(line: str) -> str:
    """The line with SMALL_SIZES applied to its code (not to its comment)."""
    comment = re.search(r"(?:^|\s)#", line)
    code, rest = (line[:comment.start()], line[comment.start():]) if comment else (line, "")
    for pattern, replacement, _ in SMALL_SIZES:
        code = re.sub(pattern, replacement, code)
    return code + rest


def why_parsed(page: str, line: str, skipped_outputs: set[str]) -> str | None:
    """Why a run-small line is parsed rather than run (None: it runs)."""
    if "..." in line.split("#", 1)[0]:
        return "a placeholder stands for the reader's own values"
    for command in commands(line):
        for why, test in PARSE_ONLY:
            if test(page, command):  # type: ignore[operator]
                return why
        if any(a.rstrip("/") in skipped_outputs for a in command):
            return "reads the output of a line that is parsed"
    return None


def plan(block: Block) -> tuple[str, list[tuple[str, str]]]:
    """A run-small block as (the script to run, [(parsed line, why)])."""
    page, script, parsed, outputs, used = block.page.name, [], [], set(), set()
    for line in re.sub(r"\\\n\s*", " ", block.text).splitlines():
        why = why_parsed(page, line, outputs)
        if why:
            parsed.append((line, why))
            outputs |= {v.rstrip("/") for c in commands(line) for v in _option_values(c, "--output_path")}
            continue
        for (fixture_page, marker), (_, shell) in FIXTURES.items():
            if fixture_page == page and marker in line and marker not in used:
                used.add(marker)
                script.append(shell)
        script.append(small(line))
    return "\n".join(script), parsed


def test_run_small_plan():
    text = ("lurch eval --model lurch-solver --tasks recon --limit 60 --output_path runs/solver\n"
            "lurch eval --model hf --model_args pretrained=PATH --tasks recon --output_path runs/mine\n"
            "lurch report runs/solver runs/mine --out report/\nlurch materialize ... --resume\n"
            "lurch materialize --config x --out d/   # note\nlurch audit-shortcuts --config x\n")
    script, parsed = plan(Block(ROOT / "docs" / "x.md", 1, "bash", "run-small", text))
    assert script.splitlines() == ["lurch eval --model lurch-solver --tasks recon --limit 2 --output_path runs/solver",
                                   "lurch materialize --limit 2 --config x --out d/   # note",
                                   "lurch audit-shortcuts --n 8 --config x"]
    assert [why for _, why in parsed] == ["a real model or server (a PATH, a Hub id, a URL)",
                                          "reads the output of a line that is parsed",
                                          "a placeholder stands for the reader's own values"]


def test_every_rule_and_fixture_is_used():
    """No dead entries: each size rule shrinks some line, each parse rule and fixture serves some block."""
    small_blocks = [block for block in SHELL_BLOCKS if block.mark == "run-small"]
    scripts = "\n".join(plan(block)[0] for block in small_blocks)
    for _, shell in FIXTURES.values():
        assert shell in scripts
    lines = [line for block in small_blocks for line in re.sub(r"\\\n\s*", " ", block.text).splitlines()]
    for pattern, _, why in SMALL_SIZES:
        assert any(re.search(pattern, line.split("#", 1)[0]) for line in lines), why
    reasons = {why for block in small_blocks for _, why in plan(block)[1]}
    assert {why for why, _ in PARSE_ONLY} - {"make builds a venv or runs the suite", "uploads (only --dry-run runs)"} \
        <= reasons, sorted({why for why, _ in PARSE_ONLY} - reasons)


def _parse_cases() -> list[tuple[str, list[str]]]:
    """Every command of a parse block, and every command of a run-small line that cannot run here."""
    texts = [(block, block.text) for block in SHELL_BLOCKS if block.mark == "parse"]
    texts += [(block, line) for block in SHELL_BLOCKS if block.mark == "run-small" for line, _ in plan(block)[1]]
    return [(f"{block.where()}: {' '.join(command)[:60]}", command)
            for block, text in texts for command in commands(text)]


PARSE_CASES = _parse_cases()


def test_parse_blocks_exist():
    assert len(PARSE_CASES) > 50


@pytest.mark.parametrize("command", [case[1] for case in PARSE_CASES], ids=[case[0] for case in PARSE_CASES])
def test_command_parses(command):
    problem = check_command(command)
    assert problem is None, f"{' '.join(command)}: {problem}"


@pytest.mark.parametrize("command,bad", [
    (["lurch", "materialize", "--confgi", "x"], "unrecognized"),
    (["lurch", "eval", "--model", "lurch-solver", "--tasks", "memory_drfit"], "memory_drfit"),
    (["lurch", "eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--limti", "2"], "unrecognized"),
    (["lurch", "eval", "--model", "lurch-solver", "--tasks", "x", "--metadata", '{"colour": 1}'], "x"),
    (["lurch", "eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--metadata", '{"colour": 1}'], "colour"),
    (["lurch", "generate", "--config", "find_the_orgin"], "find_the_orgin"),
    (["make", "demos"], "demos"),
    (["python", "scripts/no_such.py"], "no_such"),
    (["lm_eval", "--model", "dummy", "--tasks", "find_the_origin", "--limt", "8"], "unrecognized"),
])
def test_checker_catches(command, bad):
    problem = check_command(command)
    assert problem is not None and bad in problem, problem


# ----------------------------------------------------------------------------------------------- runnable blocks

RUN_PAGES = sorted({block.page for block in ALL_BLOCKS if block.mark in ("run", "run-small")})


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", LURCH_CACHE_DIR=str(tmp_path / "cache"),
               HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"), MPLBACKEND="Agg")
    return env


@pytest.mark.parametrize("page", RUN_PAGES, ids=[str(p.relative_to(ROOT)) for p in RUN_PAGES])
def test_runnable_blocks_run(page, tmp_path):
    env = _env(tmp_path)
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")  # the docs run scripts/... from the repo root
    for block in blocks(page):
        if block.mark not in ("run", "run-small"):
            continue
        if block.lang in SHELL:
            argv = ["bash", "-euo", "pipefail", "-c", plan(block)[0] if block.mark == "run-small" else block.text]
        elif block.lang == "python":
            argv = [sys.executable, "-c", block.text]
        else:
            raise AssertionError(f"{block.where()}: cannot run a {block.lang!r} block")
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{block.where()} exited {done.returncode}:\n{done.stdout[-2000:]}\n" \
                                     f"{done.stderr[-3000:]}"


# -------------------------------------------------------------------------------------------------------- links

LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"^(https?)://[A-Za-z0-9.-]+\.[A-Za-z]{2,}(:\d+)?(/[^\s]*)?$")


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but ``-`` and ``_`` removed,
    spaces to ``-``."""
    text = re.sub(r"`|\*\*|\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            slug = github_slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image outside code (fenced blocks and inline code)."""
    found, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        found += [(number, match.group(3)) for match in LINK.finditer(line)]
    return found


def test_github_slug():
    assert github_slug("Negative controls (zero-gold cells, `false_positive_rate`)") == \
        "negative-controls-zero-gold-cells-false_positive_rate"
    assert github_slug("RECON's cases") == "recons-cases"
    assert github_slug("The referee: `make bench`") == "the-referee-make-bench"


def test_links_resolve():
    problems = []
    for page in PAGES:
        for number, target in links(page):
            where = f"{page.relative_to(ROOT)}:{number}: {target}"
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                if target.startswith("mailto:"):
                    continue
                if not URL.match(target):
                    problems.append(f"{where}: not a well-formed http(s) URL")
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                problems.append(f"{where}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                problems.append(f"{where}: no heading with anchor #{anchor} in {file.name}")
    assert not problems, "\n".join(problems)
    assert sum(len(links(page)) for page in PAGES) > 30


# ------------------------------------------------------------------------------------------ facts the docs state


def test_generation_table_matches_the_yamls():
    """Every row of real_models.md's generation table names its tasks in backticks; each named task's
    ``max_gen_toks`` in its YAML is the row's number (rows of several numbers: one per task, in order)."""
    from lurch_tasks.harness.yamls import yaml_dir

    budgets = {}
    for path in yaml_dir().glob("*.yaml"):
        text = path.read_text(encoding="utf-8")  # regexes: the YAMLs hold lm-eval's !function tags
        task, budget = re.search(r"^task: (\S+)", text, re.M), re.search(r"^\s+max_gen_toks: (\d+)", text, re.M)
        if task and budget:
            budgets[task.group(1)] = int(budget.group(1))
    text = (ROOT / "docs" / "real_models.md").read_text(encoding="utf-8")
    rows = [line for line in text.split("## Generation settings", 1)[1].splitlines() if line.startswith("| `")]
    covered = set()
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        names = [n for n in re.findall(r"`([a-z_]+)`", cells[0]) if n in budgets]
        numbers = [int(n) for n in re.findall(r"\d+", cells[1])]
        for i, name in enumerate(names):
            assert budgets[name] == numbers[min(i, len(numbers) - 1)], (name, budgets[name], row)
        covered |= set(names)
    recon = {name for name in budgets if name.startswith("recon_")}
    assert set(budgets) - covered <= recon, sorted(set(budgets) - covered - recon)
    assert {budgets[name] for name in recon} == {1024}
    assert "every RECON task" in text


def test_demo_configs_cover_the_umbrella():
    """``make demo`` evaluates ``memory_drift`` on the folder it materialized, so every stored config the umbrella's
    family tasks read must be in DEMO_CONFIGS (implicit_hop_broken was missing once: the demo failed)."""
    from lurch_tasks.core.registry import all_families, get_task
    from lurch_tasks.harness.family_tasks import members

    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = re.search(r"^DEMO_CONFIGS := (.*?)\n(?=\S)", text, re.M | re.S).group(1)
    demo = set(block.replace("\\", " ").split()) | {"recon_all"}  # recon_all: its own materialize line
    assert "--config recon_all" in text
    needed = {get_task(name).stored_as or name for family in all_families() for name in members(family)}
    assert needed and needed <= demo, sorted(needed - demo)


def test_every_data_file_of_the_package_is_shipped():
    """``make demo`` installs the wheel (not editable): a data file the code reads but pyproject's package-data
    does not list is missing there (scoring/chance.json was: the demo's first lurch eval failed)."""
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = config["package-data"]
    dirs = {package: ROOT / config["package-dir"].get(package, package.replace(".", "/"))
            for package in config["packages"]}
    missing = []
    for package, folder in dirs.items():
        for path in folder.iterdir():
            if path.is_file() and path.suffix not in (".py", ".pyc") and not any(
                    fnmatch.fnmatch(path.name, pattern) for pattern in patterns.get(package, ())):
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
