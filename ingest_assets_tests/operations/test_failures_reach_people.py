"""Failures reach people: a failed run and a failed blocking check (real runs of the record pipeline on an instance)
are recorded as the provider's last failure and sent by e-mail (a real SMTP server) and to a webhook (a local
receiver), naming provider, day, stage, the message and a link to the run; a refused registry entry is announced
once by the registry's health sensor."""

from __future__ import annotations

from datetime import date, datetime, timezone

import dagster as dg
import pytest

from ingest_assets.core.settings import Settings
from ingest_assets.definitions import build_definitions
from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.operations.failures import Failure, last_failure
from ingest_assets.operations.notify import EmailNotifier, WebhookNotifier, notifiers, notify
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import free_port

DAY = date(2026, 1, 15)
UI = "http://dagster.hub.example:3000"


@pytest.fixture
def hub(tmp_path, mail_server, webhook):
    """A registry whose ``wrong`` provider asks for a format the source lacks (the run fails) and whose ``strict``
    provider allows no mapping failure (its blocking check fails); notices configured for both channels."""
    server, url = serve_in_thread(sample_records(day=DAY))
    oai = f"{{type: oai, endpoint: '{url}', allow_private: true}}"
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"wrong: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: marc21, allow_private: true}}, mapping: oai_dc}}\n"
        f"strict: {{harvest: {oai}, mapping: oai_dc, quality: {{max_failure_rate: 0.0}}}}\n"
    )
    receiver, hook_url = webhook
    settings = Settings.from_env({
        "INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry), "INGEST_UI_URL": UI,
        "INGEST_NOTIFY_EMAIL": "curators@hub.example, oncall@hub.example", "INGEST_SMTP_URL": mail_server.url,
        "INGEST_NOTIFY_FROM": "ingest@hub.example", "INGEST_NOTIFY_WEBHOOK": hook_url,
    })
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", ["wrong", "strict"])
        yield settings, instance, receiver
    server.shutdown()


def fail_and_notice(settings, instance, provider: str):
    """Run the provider's day (it fails) and evaluate ``failure_sensor`` on that failure, as the daemon would."""
    defs = build_definitions(settings)
    result = defs.resolve_job_def("record_pipeline").execute_in_process(
        partition_key=f"{DAY}|{provider}", instance=instance, raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
    assert not result.success
    sensor = defs.get_sensor_def("failure_sensor")
    storage = StorageResource(url=settings.storage_url)
    context = dg.build_run_status_sensor_context(
        sensor_name=sensor.name, dagster_event=result.get_run_failure_event(), dagster_instance=instance,
        dagster_run=result.dagster_run, resources={"storage": storage}).for_run_failure()
    sensor(context)
    return result.run_id


def test_a_failed_run_is_recorded_and_sent_by_mail_and_webhook(hub, mail_server):
    settings, instance, receiver = hub
    run_id = fail_and_notice(settings, instance, "wrong")
    [mail] = mail_server.wait(1)
    assert mail["Subject"] == f"[ingest-assets] run failed: wrong {DAY} at original_records"
    assert mail["From"] == "ingest@hub.example"
    assert mail_server.envelopes == [("ingest@hub.example", ["curators@hub.example", "oncall@hub.example"])]
    body = mail.get_content().replace("\r\n", "\n")  # SMTP carries CRLF line ends
    for expected in ("provider: wrong", f"day: {DAY}", "stage: original_records", "job: record_pipeline",
                     "message: OAI-PMH error cannotDisseminateFormat", f"run: {UI}/runs/{run_id}"):
        assert expected in body, body
    [hook] = receiver.bodies
    assert hook["text"] == body.strip()
    assert (hook["failure"]["provider"], hook["failure"]["days"], hook["failure"]["stage"], hook["failure"]["kind"]) == (
        "wrong", [DAY.isoformat()], "original_records", "run")
    recorded = last_failure(LocalStorage(settings.storage_url), "wrong")
    assert recorded.run_id == run_id and recorded.message.startswith("OAI-PMH error cannotDisseminateFormat")


def test_a_failed_blocking_check_is_a_check_notice(hub, mail_server):
    settings, instance, receiver = hub
    run_id = fail_and_notice(settings, instance, "strict")
    [mail] = mail_server.wait(1)
    assert mail["Subject"] == f"[ingest-assets] check failed: strict {DAY} at mapped_records_mapping_failure_rate"
    failure = receiver.bodies[0]["failure"]
    assert failure["kind"] == "check" and failure["message"].startswith("mapping failure rate 5.3%"), failure
    assert "above the limit 0.0%" in failure["message"] and "strict.quality.max_failure_rate" in failure["message"]
    assert failure["run_url"] == f"{UI}/runs/{run_id}"


def test_a_refused_registry_entry_is_announced_once(hub, mail_server, tmp_path):
    settings, instance, receiver = hub
    settings.registry_path.write_text(settings.registry_path.read_text() + "typo: {vodi: 'https://x.org/void.ttl'}\n")
    sensor = build_definitions(settings).get_sensor_def("registry_health_sensor")
    resources = {"registry": RegistryResource(path=str(settings.registry_path))}
    with dg.build_sensor_context(instance=instance, resources=resources) as context:
        first = sensor(context)
        [evaluation] = first.asset_events
        assert not evaluation.passed and evaluation.asset_key == dg.AssetKey("provider_registry")
        assert "registry key 'typo.vodi': unknown key" in evaluation.description
        assert str(settings.registry_path) in evaluation.description
        [mail] = mail_server.wait(1)
        assert mail["Subject"].strip() == "[ingest-assets] check failed: registry at provider_registry:entries_load"
        assert f"{UI}/assets/provider_registry?view=checks" in mail.get_content()
    with dg.build_sensor_context(instance=instance, resources=resources, cursor=first.cursor) as context:
        again = sensor(context)
    assert isinstance(again, dg.SkipReason) and len(mail_server.messages) == 1 and len(receiver.bodies) == 1


def test_channels_are_on_when_configured_and_one_failing_does_not_stop_the_other(hub):
    settings, _, receiver = hub
    assert notifiers(Settings.from_env({"INGEST_HOME": "/tmp/x"})) == []
    assert [type(c) for c in notifiers(settings)] == [EmailNotifier, WebhookNotifier]
    down = EmailNotifier(f"smtp://127.0.0.1:{free_port()}", ("curators@hub.example",), "ingest@hub.example")
    failure = Failure("run", "record_pipeline", "wrong", (DAY,), "original_records", "boom", "r1", f"{UI}/runs/r1",
                      datetime.now(timezone.utc))
    problems = notify(failure, [down, *notifiers(settings)[1:]])  # no SMTP server there: the webhook still gets it
    assert len(problems) == 1 and problems[0].startswith("e-mail: e-mail notice not sent through 127.0.0.1"), problems
    assert receiver.bodies[-1]["failure"]["run_id"] == "r1"
