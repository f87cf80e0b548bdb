"""Automatic refresh of record providers: the schedule in the registry -> one run per provider and day."""

import json
from datetime import date, datetime, timedelta, timezone

import dagster as dg
import pytest

from ingest_assets.defs.records.refresh import refresh_day, refresh_sensor
from ingest_assets.defs.resources import RegistryResource
from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import ProviderEntry

HARVEST = {"type": "oai", "endpoint": "https://example.org/oai", "metadata_prefix": "oai_dc"}


def test_the_day_asked_for_is_the_utc_day_that_ended_before_the_tick():
    entry = ProviderEntry("a", {"harvest": HARVEST})
    assert refresh_day(entry, datetime(2026, 3, 10, 1, 59, tzinfo=timezone.utc)) == date(2026, 3, 8)  # before 02:00
    assert refresh_day(entry, datetime(2026, 3, 10, 2, 0, 1, tzinfo=timezone.utc)) == date(2026, 3, 9)
    berlin = ProviderEntry("b", {"schedule": {"cron": "30 0 * * *", "timezone": "Europe/Berlin"}})
    # 00:30 Berlin on 10 March is 23:30 UTC on 9 March: the last complete UTC day is the 8th
    assert refresh_day(berlin, datetime(2026, 3, 9, 23, 45, tzinfo=timezone.utc)) == date(2026, 3, 8)
    weekly = ProviderEntry("c", {"schedule": {"cron": "0 4 * * 1"}})  # Mondays
    assert refresh_day(weekly, datetime(2026, 3, 12, 12, tzinfo=timezone.utc)) == date(2026, 3, 8)  # Mon 9th 04:00
    assert refresh_day(ProviderEntry("d", {"schedule": False}), datetime.now(timezone.utc)) is None


@pytest.mark.parametrize("schedule, message", [
    ({"cron": "every day"}, "not a valid cron string"),
    ({"timezone": "Mars/Olympus"}, "Mars/Olympus"),
    ("daily", "registry key 'bad.schedule': Input should be a valid dictionary"),
])
def test_a_bad_schedule_is_a_config_error_naming_the_provider(schedule, message):
    with pytest.raises(ConfigError, match=message) as caught:
        refresh_day(ProviderEntry("bad", {"schedule": schedule}), datetime.now(timezone.utc))
    assert caught.value.provider == "bad"


def test_sensor_requests_each_provider_day_once_and_adds_new_providers(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(json.dumps({
        "alpha": {"harvest": HARVEST},
        "quiet": {"harvest": HARVEST, "schedule": False},
        "lod": {"void": "https://example.org/void.ttl"},
        "broken": {"harvest": HARVEST, "schedule": {"cron": "nope"}},
    }))
    sensor = refresh_sensor("record_pipeline", date(2026, 1, 1))
    expected_day = refresh_day(ProviderEntry("alpha", {}), datetime.now(timezone.utc)).isoformat()
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))})
        result = sensor(context)
        assert [(r.run_key, r.partition_key) for r in result.run_requests] == [
            (f"alpha|{expected_day}", f"{expected_day}|alpha")
        ]
        (added,) = result.dynamic_partitions_requests
        assert sorted(added.partition_keys) == ["alpha", "broken", "quiet"]  # record providers only
        instance.add_dynamic_partitions("record_providers", list(added.partition_keys))

        again = sensor(dg.build_sensor_context(instance=instance, cursor=result.cursor,
                                               resources={"registry": RegistryResource(path=str(path))}))
        assert again.run_requests == [] and "not a valid cron string" in again.skip_reason.skip_message

        path.write_text(json.dumps({"alpha": {"harvest": HARVEST}, "beta": {"harvest": HARVEST}}))
        added_later = sensor(dg.build_sensor_context(instance=instance, cursor=result.cursor,
                                                     resources={"registry": RegistryResource(path=str(path))}))
        assert [r.partition_key for r in added_later.run_requests] == [f"{expected_day}|beta"]


def test_days_before_the_first_partition_are_not_requested(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(json.dumps({"alpha": {"harvest": HARVEST}}))
    sensor = refresh_sensor("record_pipeline", datetime.now(timezone.utc).date() + timedelta(days=2))
    with dg.instance_for_test() as instance:
        result = sensor(dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))}))
    assert result.run_requests == []
