"""The VoID sensor: every minute, check providers' VoID files and request an import when one changed.

Each check updates the provider's status document; it becomes an observation of ``provider_graph`` only when
the VoID URL, its ``modified`` or the error changed (not ~1,440 a day per provider).

Concurrency: each run carries the tag ``ingest/linked-data-provider=<name>``; the instance's dagster.yaml
limits it to one run per provider::

    concurrency:
      runs:
        tag_concurrency_limits:
          - key: "ingest/linked-data-provider"
            value: {applyLimitPerUniqueValue: true}
            limit: 1

A change seen while an import runs queues exactly one follow-up: while a run of that provider is still
waiting to start, no other is requested (the waiting run reads the newest VoID when it starts).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.linked_data.assets import provider_graph, status_metadata
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.providers import linked_data_providers
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.core.errors import IngestError

PROVIDER_TAG = "ingest/linked-data-provider"
TICK_BUDGET_SECONDS = 30.0  # stop starting checks after this; a check is bounded by the VoID timeouts
VOID_TIMEOUT = (3.0, 10.0)
WAITING = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING]


def _rotation(names: list[str], after: str | None) -> list[str]:
    """All names, starting after the cursor's (wrapping around)."""
    start = next((i for i, name in enumerate(names) if after is not None and name > after), 0)
    return names[start:] + names[:start]


@dg.sensor(
    name="linked_data_void_sensor",
    target=provider_graph,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def void_sensor(
    context: dg.SensorEvaluationContext,
    registry: RegistryResource,
    triplestore: TripleStoreResource,
    storage: StorageResource,
):
    """Check providers round-robin within a time budget; report unreachable or bad VoIDs and go on."""
    from ingest_assets.linked_data.watch import check_provider  # the domain loads with the first tick

    try:
        entries = {e.name: e for e in registry.load().providers_with("void")}
    except IngestError as exc:
        return dg.SkipReason(f"registry not loaded: {exc}")
    cursor = json.loads(context.cursor) if context.cursor else {}
    deadline = time.monotonic() + TICK_BUDGET_SECONDS
    existing = set(context.instance.get_dynamic_partitions(linked_data_providers.name))
    requests, events, notes, checked = [], [], [], None
    with triplestore.get_client(writable=False, timeout=VOID_TIMEOUT) as store:
        for name in _rotation(sorted(entries), cursor.get("after")):
            if checked is not None and time.monotonic() > deadline:
                break
            checked = name
            found = check_provider(entries[name], store, triplestore.graphs(name), storage.get_client(),
                                   datetime.now(timezone.utc), timeout=VOID_TIMEOUT)
            if found.error is not None:
                context.log.warning(f"linked data: {found.error}")
                notes.append(f"{name}: {found.error}")
            if found.changed:  # not one observation per provider a minute
                events.append(dg.AssetObservation(provider_graph.key, partition=name,
                                                  metadata=status_metadata(found.document)))
            if not found.due:
                continue
            waiting = context.instance.get_run_records(
                dg.RunsFilter(tags={PROVIDER_TAG: name}, statuses=WAITING), limit=1
            )
            if waiting:
                notes.append(f"{name}: changed again, a follow-up import is already waiting")
                continue
            requests.append(
                dg.RunRequest(
                    run_key=found.run_key,
                    partition_key=name,
                    tags={PROVIDER_TAG: name},
                )
            )
    new_partitions = sorted({r.partition_key for r in requests} - existing)
    return dg.SensorResult(
        run_requests=requests,
        cursor=json.dumps({"after": checked}) if checked else context.cursor,
        dynamic_partitions_requests=[linked_data_providers.build_add_request(new_partitions)] if new_partitions else [],
        asset_events=events,
        skip_reason=None if requests else "; ".join(notes) or "no VoID changed",
    )
