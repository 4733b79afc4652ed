"""Rebuild lurch_tasks/core/data/english_words.txt (maintenance only; not run at test time).

The list is the intersection of
  * wordfreq's English frequency ranking (wordfreq 3.x, data CC BY-SA 4.0), which gives the order, and
  * SCOWL's "american-english-large" lower-case entries (Debian package wamerican-large, SCOWL licence),
    which keeps only dictionary words (no names, brands, typos, contractions),
minus a profanity list (better-profanity 0.7.0 word list, MIT), ranked most frequent first.

Usage: python scripts/build_wordlist.py --dict /usr/share/dict/american-english-large \
           --profanity PATH/profanity_wordlist.txt --size 50000
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "lurch_tasks" / "core" / "data" / "english_words.txt"
WORD = re.compile(r"^[a-z]{3,12}$")


def main() -> None:
    from wordfreq import top_n_list  # dev-only dependency

    parser = argparse.ArgumentParser()
    parser.add_argument("--dict", required=True)
    parser.add_argument("--profanity", required=True)
    parser.add_argument("--size", type=int, default=50000)
    args = parser.parse_args()

    dictionary = {w.strip() for w in Path(args.dict).read_text(encoding="utf-8").splitlines()}
    banned = {w.strip().lower() for w in Path(args.profanity).read_text(encoding="utf-8").splitlines()}
    chosen: list[str] = []
    for word in top_n_list("en", 400_000, wordlist="large"):
        if WORD.match(word) and word in dictionary and word not in banned:
            chosen.append(word)
            if len(chosen) == args.size:
                break
    OUT.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    print(f"wrote {len(chosen)} words to {OUT}")


if __name__ == "__main__":
    main()
