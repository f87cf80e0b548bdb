"""``hub_status``: the hub overview as a table in the UI and as the status page (``layout.status_page_key()``,
served as ``/status.html`` by ``ingest-assets serve-resourcesync``), rebuilt after runs finish."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.records.resources import SearchIndexResource
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.operations.overview import WINDOW_DAYS, HubOverview
from ingest_assets.operations.page import render_page
from ingest_assets.storage.layout import status_page_key

JOB = "hub_status_job"
SUMMARY = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in (
    ("provider", "string"), ("capabilities", "string"), ("last_good_day", "string"), ("days_with_data", "int"),
    ("newest_day", "string"), ("harvested", "int"), ("mapped", "int"), ("failed", "int"), ("indexed", "int"),
    ("last_failure", "string"), ("live", "int"), ("review", "string"),
)])


def summary_rows(overview: HubOverview) -> list[dict]:
    """One row per provider: the overview as the UI's table."""
    rows = []
    for p in overview.providers:
        newest = p.days[-1] if p.days else None
        failure = p.last_failure
        rows.append({
            "provider": p.name, "capabilities": ", ".join(p.capabilities),
            "last_good_day": str(p.last_good_day or ""), "days_with_data": len(p.days),
            "newest_day": str(newest.day) if newest else "", "harvested": newest.harvested if newest else 0,
            "mapped": newest.mapped if newest else 0,
            "failed": newest.harvest_failed + newest.mapping_failed if newest else 0,
            "indexed": newest.indexed if newest else 0,
            "last_failure": (f"REFUSED: {p.problem}" if p.problem else
                             f"{failure.days_text} at {failure.stage}: {failure.message} ({failure.run_url})" if failure else ""),
            "live": p.live_in_index,  # None: nothing of it in the index (or the index did not answer)
            "review": p.review_state or "",
        })
    return rows


@dg.asset(group_name="operations", kinds={"html"})
def hub_status(storage: StorageResource, registry: RegistryResource, search: SearchIndexResource,
               publishing: PublishingResource) -> dg.MaterializeResult:
    """Per provider: last good day, the newest day's counts, the last failure (stage, message, run), registry
    problems, what the live index holds for it and its review state; and the status page with each provider's
    last 90 days plotted."""
    from ingest_assets.records.publishing.status import hub_overview  # SQLAlchemy loads with the run

    store = storage.get_client()
    overview = hub_overview(store, search.get_client(), search.alias, publishing.engine(), registry.load(),
                            datetime.now(timezone.utc), WINDOW_DAYS)
    store.write_bytes(status_page_key(), render_page(overview).encode("utf-8"), overwrite=True)
    rows = summary_rows(overview)
    return dg.MaterializeResult(metadata={
        "providers": dg.MetadataValue.table(records=[dg.TableRecord(r) for r in rows], schema=SUMMARY),
        "registry": dg.MetadataValue.md("\n".join(f"- **{n}**" for n in overview.registry_notes) or "all entries load"),
        "page": dg.MetadataValue.path(store.uri(status_page_key())),
        "window": f"{overview.window[0]} .. {overview.window[1]}",
        "failing_providers": sum(1 for r in rows if r["last_failure"]),
    })


hub_status_job = dg.define_asset_job(JOB, selection=[hub_status], description="Rebuild the hub status table and page.")


@dg.sensor(job_name=JOB, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def hub_status_sensor(context: dg.SensorEvaluationContext):
    """Request one ``hub_status`` run when any other run succeeded or failed since the last evaluation (runs
    finishing together make one status run)."""
    cursors = json.loads(context.cursor) if context.cursor else {}
    finished, newest = [], {}
    for event_type in (dg.DagsterEventType.RUN_SUCCESS, dg.DagsterEventType.RUN_FAILURE):
        found = context.instance.fetch_run_status_changes(event_type, limit=1000, cursor=cursors.get(event_type.value),
                                                          ascending=True)
        newest[event_type.value] = found.cursor or cursors.get(event_type.value)
        finished += [r for r in found.records if r.event_log_entry.job_name != JOB]
    if not finished:
        return dg.SensorResult(skip_reason="no run finished since the last status", cursor=json.dumps(newest))
    latest = max(r.storage_id for r in finished)
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"after-{latest}")], cursor=json.dumps(newest))
