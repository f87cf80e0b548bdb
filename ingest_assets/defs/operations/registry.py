"""The provider registry in the UI: an asset with the check ``entries_load``, red while an entry is refused
(naming entry, key and file) or the file does not load (the hub then runs on its last good copy)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.core.registry import Registry
from ingest_assets.defs.resources import RegistryResource
from ingest_assets.operations.failures import Failure
from ingest_assets.operations.notify import Notifier, notify
from ingest_assets.operations.registry_health import registry_problems

REGISTRY = dg.AssetKey("provider_registry")
CHECK = "entries_load"

provider_registry = dg.AssetSpec(
    REGISTRY, group_name="operations", kinds={"yaml"},
    description="The provider registry file (INGEST_REGISTRY). Its check entries_load fails while an entry is refused "
                "or the file does not load.",
)


def registry_result(registry: Registry) -> tuple[bool, str, dict]:
    """``(passed, description, metadata)`` of the registry check."""
    problems = registry_problems(registry)
    description = "\n".join(problems) or f"{len(registry)} entries loaded"
    return not problems, description, {
        "file": registry.source, "entries": len(registry), "refused": dg.MetadataValue.json(sorted(registry.problems)),
        "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "none"),
        "stale": str(registry.stale) if registry.stale else "",
    }


@dg.asset_check(asset=REGISTRY, name=CHECK, description="Every registry entry loads, and the file itself does")
def entries_load(registry: RegistryResource) -> dg.AssetCheckResult:
    passed, description, metadata = registry_result(registry.load())
    return dg.AssetCheckResult(passed=passed, description=description, metadata=metadata,
                               severity=dg.AssetCheckSeverity.ERROR)


def registry_health_sensor(channels: list[Notifier], ui_url: str) -> dg.SensorDefinition:
    @dg.sensor(name="registry_health_sensor", minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
               description="Reports the registry check whenever the registry's problems change, and notifies new ones")
    def registry_health(context: dg.SensorEvaluationContext, registry: RegistryResource):
        loaded = registry.load()  # a file that does not load and has no last good copy fails the tick (red)
        passed, description, metadata = registry_result(loaded)
        problems = registry_problems(loaded)
        state = json.dumps([len(loaded), problems])
        if state == context.cursor:
            return dg.SkipReason(f"unchanged: {description.splitlines()[0]}")
        reported = set(json.loads(context.cursor)[1]) if context.cursor else set()
        now = datetime.now(timezone.utc)
        for line in problems:
            context.log.error(line)
            if line in reported:
                continue  # told already
            failure = Failure("check", "registry", None, (), f"{REGISTRY.to_user_string()}:{CHECK}", line, "",
                              f"{ui_url}/assets/{REGISTRY.to_user_string()}?view=checks", now)
            for problem in notify(failure, channels):
                context.log.warning(f"notice not sent: {problem}")
        return dg.SensorResult(cursor=state, asset_events=[dg.AssetCheckEvaluation(
            asset_key=REGISTRY, check_name=CHECK, passed=passed, description=description, metadata=metadata,
            severity=dg.AssetCheckSeverity.ERROR)])

    return registry_health
