"""The README's figure and results table, from lm-eval runs (default: the three of `make demo`).

    make demo && python scripts/docs_figure.py             # writes docs/img/drift_curve.png, prints the table rows
    python scripts/docs_figure.py runs/a runs/b --out x.png

The figure is the headline (0 = chance, 1 = perfect; the four families weighted equally) of each length bin, one
line per model: the same re-scoring and the same headline code as `lurch report` and the leaderboard
(`lurch_tasks.analysis`). The table rows are each model's docs, headline and family headlines, as the README shows
them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_RUNS = ("demo_out/runs/solver", "demo_out/runs/random", "demo_out/runs/simulated")
FAMILY_COLUMNS = ("find_the_origin", "graph_reconstruction", "implicit_hop", "recon", "discovery")


def load(run_dirs: list[str]):
    """The re-scored frame of every doc of our tasks in ``run_dirs`` (``lurch report``'s own loader)."""
    from lurch_tasks.analysis.frame import load_runs
    from lurch_tasks.analysis.runs import find_runs

    return load_runs(find_runs([Path(d) for d in run_dirs])).frame


def curves(frame, reps: int = 1000, seed: int = 0) -> dict[str, dict[int, tuple[float, float, float, int]]]:
    """{model: {length bin: (headline of that bin's docs, 95% low, 95% high, docs)}}: the seeded bootstrap of
    ``lurch report`` and the leaderboard, docs resampled within each task (RECON: category) of the bin."""
    from lurch_tasks.analysis.headline import bootstrap

    return {str(model): {int(length): (*bootstrap(docs, reps, seed)["overall"], len(docs))
                         for length, docs in rows.groupby("length", sort=True)}
            for model, rows in frame.groupby("model", sort=True)}


def table_rows(frame) -> list[str]:
    """One Markdown row per model: | model | docs | headline | one column per family |."""
    from lurch_tasks.analysis.headline import family_headlines, overall

    rows = []
    for model, docs in frame.groupby("model", sort=True):
        families = family_headlines(docs)
        cells = [f"`{model}`", str(len(docs)), f"{overall(docs):.3f}"]
        cells += [f"{families[f]:.3f}" if f in families else "-" for f in FAMILY_COLUMNS]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def draw(lines: dict[str, dict[int, tuple[float, float, float, int]]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 3.4), dpi=100)
    for model, points in lines.items():
        xs = sorted(points)
        ax.plot(xs, [points[x][0] for x in xs], marker="o", linewidth=1.8, label=model.replace("$", ""))
        ax.fill_between(xs, [points[x][1] for x in xs], [points[x][2] for x in xs], alpha=0.15)
    docs = {x: n for points in lines.values() for x, (_, _, _, n) in points.items()}
    ticks = sorted(docs)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [f"{x // 1024}k\n{docs[x]} docs" if x >= 1024 else f"{x}\n{docs[x]} docs" for x in ticks])
    ax.minorticks_off()
    ax.tick_params(axis="x", labelsize=8)
    ax.axhline(0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("prompt length (tokens), docs per model")
    ax.set_ylabel("headline (0 chance, 1 perfect)")
    ax.set_title("make demo: headline against prompt length (bands: 95% bootstrap CIs)", fontsize=10)
    ax.legend(frameon=False, fontsize=9, loc="center left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None})  # no version stamp: the same runs give the same bytes
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", default=list(DEMO_RUNS), help="lm-eval --output_path folders "
                        "(default: make demo's three)")
    parser.add_argument("--out", default="docs/img/drift_curve.png", help="the PNG to write")
    args = parser.parse_args()
    frame = load(args.runs)
    draw(curves(frame), Path(args.out))
    print(f"wrote {args.out}")
    print("\n".join(table_rows(frame)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
