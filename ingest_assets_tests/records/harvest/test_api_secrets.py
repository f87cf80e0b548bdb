"""An API key named by the registry (``{env: NAME}`` or ``{file: PATH}``): read when the harvest starts, a clear
error when it cannot be, sent only to the endpoint's origin, and found nowhere the harvest writes or says."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from ingest_assets.core.errors import ConfigError, FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.secrets import SecretUnreadable, resolve_secrets
from ingest_assets.core.settings import Settings
from ingest_assets.records.harvest import REQUEST_LOG, StorageCheckpoint, harvest_records
from ingest_assets_tests.support.api_hubs import PRIMO_KEY, getty
from ingest_assets_tests.support.api_servers import json_answer

CLI = str(Path(sys.executable).parent / "ingest-assets")
TOKEN = "hub token/with+signs & spaces=1"  # what URLs encode differently: every form must be redacted


def forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}


def leaks(text: str, *secrets: str) -> list[str]:
    return [form for secret in secrets for form in forms(secret) if form in text]


@pytest.fixture
def getty_hub(shared_fixtures, http_server):
    return getty(shared_fixtures / "ingestion3", lambda app: http_server(app=app))


def entry_with(hub, **changes) -> ProviderEntry:
    return ProviderEntry("getty", {"harvest": {**hub.block, "allow_private": True, **changes}, "mapping": "getty"},
                         source="/srv/hub/registry.yaml")


@pytest.mark.parametrize(("secret", "env", "message"), [
    ({"env": "PRIMO_API_KEY"}, {}, "environment variable PRIMO_API_KEY is not set"),
    ({"env": "PRIMO_API_KEY"}, {"PRIMO_API_KEY": ""}, "environment variable PRIMO_API_KEY is not set (or empty)"),
    ({"file": "/nonexistent/primo-key"}, {}, "secrets file /nonexistent/primo-key cannot be read: No such file"),
    ({"file": "<folder>"}, {}, "cannot be read: Is a directory"),
    ({"file": "<empty>"}, {}, "is empty"),
])
def test_a_secret_that_cannot_be_read_stops_the_harvest_before_any_request(getty_hub, tmp_path, tmp_storage, started,
                                                                            http, secret, env, message):
    (tmp_path / "empty").write_text("\n")
    secret = {"file": {"<folder>": str(tmp_path), "<empty>": str(tmp_path / "empty")}.get(secret["file"], secret["file"])
              } if "file" in secret else secret
    params = {**getty_hub.block["params"], "apikey": secret}
    entry = entry_with(getty_hub, params=params)  # the registry loads: the form is right
    with pytest.raises(ConfigError) as caught:
        harvest_records(entry, started=started, window=None, http=http, checkpoint=StorageCheckpoint(tmp_storage, "getty"),
                        settings=Settings.from_env(env))
    assert str(caught.value).startswith("registry key 'getty.harvest.params.apikey': ")
    assert message in str(caught.value) and caught.value.file == "/srv/hub/registry.yaml"
    assert getty_hub.app.requests == []


def test_a_blocks_secrets_resolve_by_their_key_below_it_and_one_that_cannot_names_that_key(getty_hub):
    block = entry_with(getty_hub, headers={"X-Hub-Key": {"env": "HUB_HEADER_KEY"}}).settings.harvest
    found = resolve_secrets(block, Settings.from_env({"PRIMO_API_KEY": PRIMO_KEY, "HUB_HEADER_KEY": TOKEN}))
    assert found.values == {"params.apikey": PRIMO_KEY, "headers.X-Hub-Key": TOKEN}
    with pytest.raises(SecretUnreadable) as caught:  # the block alone: the caller names entry and file
        resolve_secrets(block, Settings.from_env({"PRIMO_API_KEY": PRIMO_KEY}))
    assert (caught.value.key, str(caught.value)) == ("headers.X-Hub-Key", "environment variable HUB_HEADER_KEY is not set (or empty)")
    assert isinstance(caught.value, ConfigError) and leaks(str(caught.value), PRIMO_KEY) == []


def test_a_secret_is_sent_yet_absent_from_request_log_errors_and_library_logs(getty_hub, tmp_path, tmp_storage, started,
                                                                               http, caplog):
    """Page 1 holds a record without an id (a record error naming the page's URL) and page 2 fails (the error that
    ends the run names its URL); the key travels in the query and a token in a header, from a secrets file."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    getty_hub.app.docs[1]["pnx"]["control"]["recordid"] = []
    getty_hub.app.fail = lambda path, query: (
        json_answer({"errorsExist": True}, "404 Not Found") if query["offset"] == ["4"] else None)
    entry = entry_with(getty_hub, headers={"X-Hub-Token": {"file": str(token_file)}})
    caplog.set_level(logging.DEBUG)
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=StorageCheckpoint(tmp_storage, "getty"),
                          settings=Settings.from_env(getty_hub.env))
    with pytest.raises(FetchError) as caught:
        list(run)
    assert [query["apikey"] for _, query in getty_hub.app.requests] == [[PRIMO_KEY], [PRIMO_KEY]]  # it was sent
    assert [headers.get("HTTP_X_HUB_TOKEN") for headers in getty_hub.app.headers] == [TOKEN, TOKEN]
    error = caught.value
    said = "".join(traceback.format_exception(error)) + str(error) + repr(error.args)
    assert "HTTP 404 fetching page 2" in str(error) and "apikey=[redacted]" in error.file
    request_log = b"".join(run.logs()[REQUEST_LOG]).decode()
    assert "apikey=[redacted]" in request_log and "apikey=[redacted]" in run.stats.errors_csv()
    assert any("apikey=[redacted]" in line for line in caplog.messages)  # urllib3's request line, redacted
    written = said + request_log + run.stats.errors_csv() + run.stats.log_text() + "\n".join(caplog.messages)
    assert leaks(written, PRIMO_KEY, TOKEN) == []
    checkpoint = StorageCheckpoint(tmp_storage, "getty").load()
    assert checkpoint["page"] == 1 and leaks(str(checkpoint), PRIMO_KEY, TOKEN) == []


def test_a_secret_in_a_next_link_is_kept_out_of_the_checkpoint_and_sent_again(shared_fixtures, http_server, tmp_storage,
                                                                              started, http):
    """MDL's next links repeat the whole query: a secret parameter in it is dropped from the position (so from the
    checkpoint and request log) and added again to the request, as to every request to the endpoint."""
    from ingest_assets_tests.support.api_hubs import minnesota

    hub = minnesota(shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    entry = ProviderEntry("minnesota", {"harvest": {**hub.block, "allow_private": True, "params": {
        **hub.block["params"], "api_key": {"env": "MDL_KEY"}}}, "mapping": "mdl"})
    hub.app.fail = lambda path, query: json_answer({}, "503 Busy") if query.get("page[number]") == ["3"] else None
    run = harvest_records(entry, started=started, window=None, http=HttpClient(retries=0, allow_private=True),
                          checkpoint=StorageCheckpoint(tmp_storage, "minnesota"), settings=Settings.from_env({"MDL_KEY": TOKEN}))
    with pytest.raises(FetchError):
        list(run)
    assert all(query["api_key"] == [TOKEN] for _, query in hub.app.requests)  # once each, the link's copy replaced
    state = StorageCheckpoint(tmp_storage, "minnesota").load()
    assert "page%5Bnumber%5D=3" in state["position"]["url"] and leaks(str(state), TOKEN) == []
    hub.app.fail = None
    resumed = harvest_records(entry, started=started, window=None, http=http,
                              checkpoint=StorageCheckpoint(tmp_storage, "minnesota"), settings=Settings.from_env({"MDL_KEY": TOKEN}))
    assert len(list(resumed)) == 7 and resumed.stats.resumed
    assert hub.app.requests[-1][1]["api_key"] == [TOKEN]


def test_the_harvest_command_writes_and_says_no_secret_anywhere(getty_hub, tmp_path):
    """``ingest-assets harvest getty`` over two days with ``--verbose`` (the libraries' DEBUG logs and Dagster's
    event log on stderr): the first day's harvest is written (a record error among its logs), the second fails on
    page 2. Neither the key (from the environment) nor the token (from a secrets file) is in any file under
    INGEST_HOME (outputs, _LOGS, _MANIFEST, Dagster's event log and metadata), on stdout or on stderr."""
    token_file = tmp_path / "secrets" / "hub-token"
    token_file.parent.mkdir()
    token_file.write_text(TOKEN)
    getty_hub.app.docs[1]["pnx"]["control"]["recordid"] = []

    def second_harvest_fails_on_page_2(path, query):
        harvests = sum(asked["offset"] == ["1"] for _, asked in getty_hub.app.requests)
        return json_answer({"errorsExist": True}, "404 Not Found") if harvests == 2 and query["offset"] == ["4"] else None

    getty_hub.app.fail = second_harvest_fails_on_page_2
    block = {**getty_hub.block, "allow_private": True, "headers": {"X-Hub-Token": {"file": str(token_file)}}}
    registry = tmp_path / "registry.yaml"
    registry.write_text(json.dumps({"getty": {"harvest": block, "mapping": "getty"}}))  # JSON is YAML
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(INGEST_HOME=str(home), INGEST_REGISTRY=str(registry), DAGSTER_TELEMETRY_DISABLED="1", **getty_hub.env)
    done = subprocess.run([CLI, "harvest", "getty", "--from", "2026-01-14", "--to", "2026-01-15", "--verbose"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "FAILED at original_records: HTTP 404 fetching page 2" in done.stdout and "apikey=[redacted]" in done.stdout
    assert "apikey=[redacted]" in done.stderr  # urllib3's request lines and Dagster's event log, redacted
    [output] = [path for path in home.rglob("_LOGS") if "harvest" in str(path)]  # the first day's
    assert "apikey=[redacted]" in (output / "harvest-errors.csv").read_text()
    files = [path for path in home.rglob("*") if path.is_file()]
    assert len(files) > 10
    found = {str(path): leaks(path.read_bytes().decode("utf-8", "replace"), PRIMO_KEY, TOKEN) for path in files}
    assert {path: forms for path, forms in found.items() if forms} == {}
    assert leaks(done.stdout + done.stderr, PRIMO_KEY, TOKEN) == []
