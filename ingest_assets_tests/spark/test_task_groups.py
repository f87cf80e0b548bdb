"""Spark tasks take runs of consecutive input parts of one input (inputs cost differently: indexing's harvest parts
are only looked through for deletions): two tasks per core where there are parts enough (a task's start is a fixed
cost), at most four parts per task, a whole number of tasks per core, every part once and in input order (the output
keeps it)."""

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
    (7, 0, 2, [2, 2, 2, 1]),  # uneven: the first tasks take one more
    (4, 8, 2, [1, 1, 1, 1, 2, 2, 2, 2]),  # the benchmark's indexing: each enrichment part a task, the cheap harvest
    (7, 2, 2, [2, 2, 2, 1, 1, 1]),  # parts in tasks of their own, after (a task mixing them was the run's tail)
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
    assert all(len({index for index, _key in group}) == 1 for group in groups)  # one input a task
    for index in {index for index, _key in given}:  # each input in whole waves, or one part a task
        own = [group for group in groups if group[0][0] == index]
        assert len(own) % slots == 0 or len(own) == sum(len(group) for group in own)
