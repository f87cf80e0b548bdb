"""What every capability shares, bound in this one place: the ``storage``, ``sql`` and ``registry`` resources,
the sensor keeping each capability's provider partitions in step with the registry, declarative automation
(the linked-data export follows its graphs without anyone turning it on) and the in-process executor (a step's
work is far cheaper than a subprocess that imports the code location)."""

from __future__ import annotations

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.providers import registry_partitions_sensor
from ingest_assets.defs.resources import shared_resources

# conditions running Python of ours (the exports read the publication ledger) are evaluated in the code server by
# their capability's sensor, on the assets tagged so; every other condition by this one, in the daemon
CODE_SERVER_AUTOMATION = ("ingest/automation", "code-server")
automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all() - dg.AssetSelection.tag(*CODE_SERVER_AUTOMATION),
    default_status=dg.DefaultSensorStatus.RUNNING,
)


def build_defs(settings: Settings) -> dg.Definitions:
    return dg.Definitions(
        resources=shared_resources(settings),
        sensors=[automation_sensor, registry_partitions_sensor],
        executor=dg.in_process_executor,
    )
