"""The exports run by themselves after a publication: the automation conditions of ``jsonl_export``,
``wikimedia_records`` and ``tag_sitemaps`` evaluated with Dagster's ``evaluate_automation_conditions`` (no daemon)
over the publication ledger as the publishing steps write it (a report registers the day, a publish run releases
it, the promotion marks it published after the canary), for a published day, a day held for review, a rejected
day, a backfill of older days, a publishing run in progress and an export that is refused."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus

from ingest_assets.core.registry import ReviewBlock
from ingest_assets.core.settings import AUTO_EXPORTS, Settings
from ingest_assets.core.sql import make_engine
from ingest_assets.definitions import build_definitions
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.storage import layout
from ingest_assets.storage.avro import INDEX_RECORD
from ingest_assets_tests.support.daemon import submit_asset_backfill

FEB, MAR = date(2026, 2, 26), date(2026, 3, 26)  # two monthly harvests of a hub (ingestion3's last week of the month)
SITEMAPS = {"tag_sitemaps": {None}}


def exports(day: date, provider: str) -> dict[str, set]:
    return {"jsonl_export": {f"{day.isoformat()}|{provider}"}, "wikimedia_records": {f"{day.isoformat()}|{provider}"}}


class Hub:
    """The hub's definitions and ledger, a Dagster instance, and the automation sensor's ticks."""

    def __init__(self, env: dict[str, str], instance: dg.DagsterInstance):
        self.env, self.instance = env, instance
        settings = Settings.from_env(env)
        self.defs = build_definitions(settings)
        self.engine = make_engine(settings.database_url)
        self.ledger = Ledger(self.engine)
        self.cursor = None
        self.now = datetime(2026, 3, 27, 2, tzinfo=timezone.utc)
        instance.add_dynamic_partitions("record_providers", ["maryland", "mdl"])

    def tick(self) -> dict[str, set]:
        """What one evaluation requests: export -> partition keys (None: the unpartitioned sitemaps)."""
        result = dg.evaluate_automation_conditions(defs=self.defs, instance=self.instance, cursor=self.cursor)
        self.cursor = result.cursor
        return {name: keys for name in AUTO_EXPORTS if (keys := result.get_requested_partitions(dg.AssetKey(name)))}

    def report(self, provider: str, day: date, review: bool = False) -> None:
        """The day's report registers its indexing output (held when the provider requires review)."""
        self.now += timedelta(minutes=10)
        output = layout.activity_output(provider, "indexing", day, self.now, INDEX_RECORD).folder
        self.ledger.register(provider, day, output, ReviewBlock(required=review), self.now)

    def publish(self, provider: str, *days: date) -> None:
        """A publish run takes the approved days and, its gates and canary passed, marks them published, with the
        provider's newer published days it built above them (``Publisher.publish``: a backfill behind the live
        index)."""
        self.now += timedelta(minutes=10)
        self.ledger.mark(provider, days, released=True, now=self.now)
        newer = [state.day for state in self.ledger.published_after(provider, min(days)) if state.day not in days]
        self.ledger.published(provider, [*days, *newer], f"dpla-map4-{provider}-{self.now:%Y%m%d%H%M%S}", self.now)

    def close(self) -> None:
        self.engine.dispose()


@pytest.fixture
def hub_env(tmp_path) -> dict[str, str]:
    registry = tmp_path / "registry.yaml"
    registry.write_text("".join(
        f"{name}: {{harvest: {{type: oai, endpoint: '{endpoint}', metadata_prefix: oai_dc}}, mapping: oai_dc, "
        f"label: {label}}}\n" for name, endpoint, label in (
            ("maryland", "https://collections.digitalmaryland.org/oai/oai.php", "Digital Maryland"),
            ("mdl", "https://reflections.mndigital.org/oai/oai.php", "Minnesota Digital Library"))))
    return {"INGEST_HOME": str(tmp_path / "home"), "INGEST_PARTITION_START": "2026-01-01",
            "INGEST_REGISTRY": str(registry)}


@pytest.fixture
def hub(hub_env):
    hub = Hub(hub_env, dg.DagsterInstance.ephemeral())
    yield hub
    hub.close()


def test_a_published_day_is_exported_once_and_days_published_before_automation_are_not(hub):
    hub.report("maryland", FEB)
    hub.publish("maryland", FEB)
    assert hub.tick() == {}  # the first evaluation takes note of what is published
    hub.report("maryland", MAR)
    hub.report("mdl", MAR)
    hub.publish("maryland", MAR)
    hub.publish("mdl", MAR)
    hub.report("retired", MAR)  # a provider no longer in the registry: no partition to request
    hub.publish("retired", MAR)
    assert hub.tick() == {
        "jsonl_export": {f"{MAR}|maryland", f"{MAR}|mdl"}, "wikimedia_records": {f"{MAR}|maryland", f"{MAR}|mdl"},
        **SITEMAPS,  # one sitemap run for both providers' publications
    }
    assert hub.tick() == {}


def test_a_day_held_for_review_or_rejected_is_never_attempted(hub):
    hub.tick()
    hub.report("maryland", MAR, review=True)
    hub.report("mdl", MAR, review=True)
    assert hub.tick() == {}  # held
    hub.ledger.decide("maryland", MAR, False, "reviewer@maryland.example.org", hub.now, "wrong set harvested")
    hub.ledger.decide("mdl", MAR, True, "reviewer@mdl.example.org", hub.now)
    assert hub.tick() == {}  # rejected, and approved but not yet published
    hub.publish("mdl", MAR)  # the review sensor's record_publish run
    assert hub.tick() == {**exports(MAR, "mdl"), **SITEMAPS}


def test_a_backfill_of_older_days_is_folded_into_the_newest_json_l_and_each_day_goes_to_wikimedia(hub):
    hub.tick()
    hub.report("maryland", MAR)
    hub.publish("maryland", MAR)
    assert hub.tick() == {**exports(MAR, "maryland"), **SITEMAPS}
    older = [date(2026, 1, 26), FEB]
    backfill = submit_asset_backfill(hub.instance, hub.env, [f"{day}|maryland" for day in older])
    for day in older:
        hub.report("maryland", day)
    hub.publish("maryland", *older)  # the backfill's run publishes them beneath the newer day
    # the newest day's JSON-L again (it holds the whole published state), never an older day's own: it would
    # never be read; the Wikimedia exports (a day's records each) and the sitemaps wait for the backfill
    assert hub.tick() == {"jsonl_export": {f"{MAR}|maryland"}}
    hub.instance.update_backfill(hub.instance.get_backfill(backfill).with_status(BulkActionStatus.COMPLETED_SUCCESS))
    assert hub.tick() == {"wikimedia_records": {f"{day}|maryland" for day in older}, **SITEMAPS}
    assert hub.tick() == {}


def test_nothing_runs_while_the_publishing_run_is_in_progress(hub):
    hub.tick()
    backfill = submit_asset_backfill(hub.instance, hub.env, [f"{MAR}|maryland"])
    hub.report("maryland", MAR)
    hub.publish("maryland", MAR)  # marked published by search_index while its run goes on
    assert hub.tick() == {}
    assert hub.tick() == {}
    hub.instance.update_backfill(hub.instance.get_backfill(backfill).with_status(BulkActionStatus.COMPLETED_SUCCESS))
    assert hub.tick() == {**exports(MAR, "maryland"), **SITEMAPS}  # remembered until the run ended
    assert hub.tick() == {}


def test_a_day_no_longer_published_when_its_export_is_due_is_not_attempted(hub):
    hub.tick()
    backfill = submit_asset_backfill(hub.instance, hub.env, [f"{MAR}|maryland"])
    hub.report("maryland", FEB)
    hub.publish("maryland", FEB)
    hub.report("maryland", MAR)
    hub.publish("maryland", MAR)
    hub.ledger.rolled_back("maryland", [hub.ledger.get("maryland", MAR).index_name])  # `ingest-assets index rollback`
    hub.instance.update_backfill(hub.instance.get_backfill(backfill).with_status(BulkActionStatus.COMPLETED_SUCCESS))
    # the newest day still published; of the days published, the one still published
    assert hub.tick() == {**exports(FEB, "maryland"), **SITEMAPS}


def test_a_refused_export_fails_once_and_is_not_tried_again(hub):
    hub.tick()
    hub.report("maryland", MAR)
    hub.publish("maryland", MAR)  # published, but its outputs are not in the storage (moved away since)
    requested = hub.tick()
    assert requested == {**exports(MAR, "maryland"), **SITEMAPS}
    job = hub.defs.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey("jsonl_export"), dg.AssetKey("wikimedia_records")})
    run = job.execute_in_process(partition_key=f"{MAR}|maryland", instance=hub.instance, raise_on_error=False)
    assert not run.success
    failures = {e.step_key: e.step_failure_data.user_failure_data.description for e in run.get_step_failure_events()}
    assert "no complete enrichment output for 2026-03-26" in failures["jsonl_export"]
    assert "is not a complete output (no _MANIFEST) (provider 'maryland'" in failures["wikimedia_records"]
    assert not [e for e in run.all_events if e.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY]  # final
    assert hub.tick() == {}  # the request handled the publication: no retry every 30 s
    assert hub.tick() == {}
    hub.publish("maryland", MAR)  # published again: tried again
    assert hub.tick() == {**exports(MAR, "maryland"), **SITEMAPS}


def test_the_setting_chooses_which_exports_run_by_themselves(hub_env):
    hub = Hub({**hub_env, "INGEST_AUTO_EXPORTS": "jsonl_export"}, dg.DagsterInstance.ephemeral())  # no Wikimedia
    hub.tick()
    hub.report("maryland", MAR)
    hub.publish("maryland", MAR)
    assert hub.tick() == {"jsonl_export": {f"{MAR}|maryland"}}
    hub.close()
    defs = build_definitions(Settings.from_env({**hub_env, "INGEST_AUTO_EXPORTS": ""}))
    assert not any(defs.resolve_assets_def(name).automation_conditions_by_key for name in AUTO_EXPORTS)
    assert "exports_automation_sensor" not in {s.name for s in defs.get_repository_def().sensor_defs}


def test_the_exports_are_evaluated_in_the_code_server_and_no_other_condition_is(hub):
    repository = hub.defs.get_repository_def()
    graph = hub.defs.resolve_asset_graph()
    exports_sensor = repository.get_sensor_def("exports_automation_sensor")
    default = repository.get_sensor_def("default_automation_condition_sensor")
    assert exports_sensor.asset_selection.resolve(graph) == {dg.AssetKey(name) for name in AUTO_EXPORTS}
    assert not default.asset_selection.resolve(graph) & {dg.AssetKey(name) for name in AUTO_EXPORTS}
    assert {dg.AssetKey("record_counts"), dg.AssetKey(["linked_data", "export"])} <= default.asset_selection.resolve(graph)
