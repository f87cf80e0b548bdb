"""``range_relaunch_sensor``: a backfill launched from the ``record_pipeline`` job's page runs each range of days
as one run, as an asset backfill does.

Dagster 1.13's job backfill tags each range run (31 days at most, the assets' backfill policy) with the range and
also with its first day's partition, which wins: the run would write that one day and the backfill would report
the range done. The record IO manager refuses such a run at its first step (``refuse_truncated_range``); this
sensor then requests the same range again as one run tagged with the range only, as an asset backfill's and
``ingest-assets harvest``'s range runs are, keeping the backfill's own tags and naming the refused run
(``ingest/relaunch-of``). The refused run is no failure of the provider's: the failure sensor leaves it alone.
"""

from __future__ import annotations

import dagster as dg

from ingest_assets.defs.records.partitions import RANGE_END_TAG, RANGE_START_TAG, truncated_range

RELAUNCH_TAG = "ingest/relaunch-of"


def relaunch_tags(tags) -> dict[str, str] | None:
    """The tags of the run that does what a truncated range run (:func:`truncated_range`) was asked to: the range,
    and the launcher's own tags (Dagster's ``dagster/...`` tags are Dagster's to set); None for any other run."""
    found = truncated_range(tags)
    if found is None:
        return None
    own = {key: value for key, value in tags.items() if not key.startswith("dagster/")}
    return {**own, RANGE_START_TAG: found[0], RANGE_END_TAG: found[1]}


def range_relaunch_sensor(job) -> dg.SensorDefinition:
    @dg.run_failure_sensor(name="range_relaunch_sensor", monitored_jobs=[job], request_job=job,
                           minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
                           description="Runs again, as one run of the whole range, a range run of a backfill launched "
                                       "from the job's page (which Dagster would run as its first day only)")
    def range_relaunch(context: dg.RunFailureSensorContext):
        run = context.dagster_run
        tags = relaunch_tags(run.tags)
        if tags is None:
            return dg.SkipReason(f"run {run.run_id} failed on its own account: nothing to run again")
        return dg.RunRequest(run_key=f"range-relaunch|{run.run_id}", tags={**tags, RELAUNCH_TAG: run.run_id})

    return range_relaunch
