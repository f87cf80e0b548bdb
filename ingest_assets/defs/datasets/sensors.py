"""A sensor turning each new requests file in the storage layout into one run.

Request files are ``_datasets-requests/<yyyymmdd>/<yyyymmdd_hhmmss>-...jsonl``. A file stamped earlier may
become visible later (a slow upload), so the cursor keeps the keys seen within a look-back window rather
than only the newest one; only day folders from the window's start on are listed.
"""

import json
from datetime import timedelta

import dagster as dg

from ingest_assets.defs.resources import StorageResource
from ingest_assets.storage.layout import dataset_key, parse_timestamp, timestamp

LOOKBACK = timedelta(minutes=30)
MAX_RUNS_PER_TICK = 50


def requests_run_config(key: str) -> dict:
    return {"ops": {"dataset_ingest_results": {"config": {"requests_key": key}}}}


def _stamp(key: str) -> str:
    return key.rsplit("/", 1)[-1][:15]  # yyyymmdd_hhmmss


@dg.sensor(job_name="dataset_ingest", minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def dataset_requests_sensor(context: dg.SensorEvaluationContext, storage: StorageResource):
    state = json.loads(context.cursor) if context.cursor else {"since": "", "seen": []}
    seen = set(state["seen"])
    root = dataset_key("requests")
    days = [d for d in storage.get_client().list_children(root) if d >= state["since"][:8]]
    new = [
        key
        for day in days
        for key in storage.get_client().list_keys(f"{root}/{day}")
        if key.endswith(".jsonl") and _stamp(key) >= state["since"] and key not in seen
    ][:MAX_RUNS_PER_TICK]
    if not new:
        return dg.SkipReason(f"no new request files since {state['since'] or 'the start'}")
    seen.update(new)
    newest = max(parse_timestamp(_stamp(k)) for k in seen)
    since = timestamp(newest - LOOKBACK)
    context.update_cursor(json.dumps({"since": since, "seen": sorted(k for k in seen if _stamp(k) >= since)}))
    return [
        dg.RunRequest(run_key=key, run_config=requests_run_config(key), tags={"dataset/requests": key})
        for key in new
    ]
