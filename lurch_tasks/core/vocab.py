"""Shipped vocabularies (see core/data/README.md for provenance and licences)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class VocabularyInfo:
    """Licence (an SPDX-like Hub id) and a one-line provenance note of a shipped vocabulary."""

    license: str
    note: str


VOCABULARIES = {
    "english_words.txt": VocabularyInfo(
        license="cc-by-sa-4.0",
        note="frequency order from wordfreq (CC BY-SA 4.0, https://doi.org/10.5281/zenodo.7199437), "
        "filtered with SCOWL and better-profanity",
    ),
}
_COMPILED = "compiled by the lurch-tasks authors for the graph family's synthetic world"
for _name, _what in (
    ("first_names.txt", "common given names from many languages"),
    ("last_names.txt", "common surnames from many languages"),
    ("cities.txt", "city | country | nationality adjective (geographic facts)"),
    ("employers.txt", "invented company names (any resemblance to real firms is unintended)"),
    ("occupations.txt", "ordinary occupations"),
    ("event_prefixes.txt", "words for invented event and group names"),
    ("event_topics.txt", "topics for invented event names"),
    ("event_kinds.txt", "kinds of events"),
    ("group_kinds.txt", "kinds of named groups"),
    ("vehicle_colors.txt", "vehicle colours"),
    ("vehicle_types.txt", "vehicle types"),
    ("airline_codes.txt", "two-letter codes used as invented airline prefixes"),
):
    VOCABULARIES[_name] = VocabularyInfo(license="apache-2.0", note=f"{_what}; {_COMPILED}")
VOCABULARIES["recon_catalog.json"] = VocabularyInfo(
    license="apache-2.0", note="RECON domain catalogues (roles, entry types, streams, invalidation kinds, item words); "
    f"{_COMPILED.replace('the graph family', 'the RECON family')}")
# Generated data with no share-alike source carries the code's licence.
DEFAULT_DATA_LICENSE = "apache-2.0"


def data_license(names: tuple[str, ...]) -> str:
    """The licence of data built from these vocabularies (share-alike wins)."""
    licenses = sorted({VOCABULARIES[name].license for name in names})
    share_alike = [lic for lic in licenses if "sa" in lic.split("-")]
    return share_alike[0] if share_alike else DEFAULT_DATA_LICENSE


def _data_file(name: str):
    return resources.files("lurch_tasks.core").joinpath("data", name)


@cache
def load_words(name: str) -> tuple[str, ...]:
    """One entry per line, in file order (for english_words.txt: most frequent first)."""
    text = _data_file(name).read_text("utf-8")
    return tuple(line for line in text.splitlines() if line)


@cache
def source_hash(names: tuple[str, ...]) -> str:
    """SHA-256 over the named vocabulary files' bytes, in the given order."""
    digest = hashlib.sha256()
    for name in names:
        data = _data_file(name).read_bytes()
        digest.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0" + data)
    return digest.hexdigest()
