"""`lurch eval`'s docs are streamed to a memory-mapped Arrow file: same dataset as from_list, never all rows at once."""

from __future__ import annotations

import itertools

import datasets
import pytest

from lurch_tasks.harness.doc_store import batches, rows_to_dataset
from lurch_tasks.harness.family_tasks import interleave, interleave_streams

ROWS = [
    {"id": "a", "prompt": "p" * 10, "extra": None, "meta": {"x": 1}},
    {"id": "b", "prompt": "q", "extra": None, "meta": {"x": 2, "y": [1.5, 2.0]}},
    {"id": "c", "prompt": "r", "extra": "now a string", "meta": {"x": 3, "y": []}},
    {"id": "d", "prompt": "s", "extra": None, "meta": {"y": [0.5], "z": {"deep": True}}},
    {"id": "e", "prompt": "t", "meta": {"x": None}},  # a key the first rows have is missing here
]


@pytest.mark.parametrize("size", [1, 2, 3, 16])
def test_streamed_dataset_equals_from_list(size):
    expected = datasets.Dataset.from_list(ROWS)
    got = rows_to_dataset(iter(ROWS), size)
    assert got.features == expected.features
    assert got.data.table.schema == expected.data.table.schema
    assert got.to_list() == expected.to_list()
    assert got.cache_files  # memory-mapped from a file, not an in-memory table


def test_no_rows_give_the_empty_dataset():
    got = rows_to_dataset(iter([]))
    assert len(got) == 0 and got.column_names == datasets.Dataset.from_list([]).column_names


def test_batches_pull_rows_lazily_and_close_on_prompt_size():
    produced = []

    def rows():
        for i in itertools.count():
            produced.append(i)
            yield {"prompt": "x" * (100 if i == 5 else 1)}

    stream = batches(rows(), size=4, chars=50)
    assert [len(next(stream)) for _ in range(3)] == [4, 2, 4]  # the 100-char prompt closes its batch early
    assert len(produced) == 10  # never more rows pulled than the batches handed out


def test_family_interleave_is_lazy_and_matches_the_list_form():
    columns = [[1, 2, 3], ["a"], [True, False]]
    assert list(interleave_streams([iter(c) for c in columns])) == interleave(columns)
    endless = interleave_streams([itertools.count(), itertools.count(100)])
    assert list(itertools.islice(endless, 5)) == [0, 100, 1, 101, 2]
