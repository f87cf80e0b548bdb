"""Spark tasks take runs of consecutive input parts: two tasks per core where there are parts enough (a task's start
is a fixed cost), at most four parts per task, a whole number of tasks per core, every part once and in input order
(the output keeps it)."""

import pytest

from ingest_assets.records.engines.spark import MAX_PARTS_PER_TASK, task_groups


def parts(count: int, harvest: int = 0) -> list[tuple[int, str]]:
    """``count`` enrichment parts then ``harvest`` harvest parts, as indexing's inputs list them."""
    return ([(0, f"enrichment/part-{n:05d}.avro") for n in range(count)]
            + [(1, f"harvest/part-{n:05d}.avro") for n in range(harvest)])


@pytest.mark.parametrize(("count", "harvest", "slots", "sizes"), [
    (8, 0, 2, [2, 2, 2, 2]),  # the benchmark's 8 parts a provider on 2 cores: 4 tasks, not 8
    (4, 0, 2, [1, 1, 1, 1]),  # no more tasks than parts
    (1, 0, 16, [1]),
    (7, 2, 2, [3, 2, 2, 2]),  # uneven: the first tasks take one more; indexing's harvest parts follow in order
    (200, 0, 16, [4] * 8 + [3] * 56),  # 50 million records in 250,000-record parts on 16 cores: at most 4 parts a
    (10, 0, 4, [2, 2, 1, 1, 1, 1, 1, 1]),  # task, and tasks a whole number of waves (64, not 50: 4 waves, none short)
    (0, 0, 2, []),
])
def test_parts_are_cut_into_consecutive_runs_one_a_task(count, harvest, slots, sizes):
    given = parts(count, harvest)
    groups = task_groups(given, slots)
    assert [len(group) for group in groups] == sizes
    assert [part for group in groups for part in group] == given
    assert all(len(group) <= MAX_PARTS_PER_TASK for group in groups)
    assert len(groups) % slots == 0 or len(groups) == len(given)  # whole waves, or one part a task
