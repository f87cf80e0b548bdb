"""IndexRecords for publishing tests: MAP4_x records of a provider, built from a number and a title, as the
indexing activity would write them."""

from __future__ import annotations

from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.mapping import mint_id

INGESTED = 1_767_225_600  # 2026-01-01T00:00:00Z


def local_id(n: int) -> str:
    return f"oai:example.org:{n:05d}"


def dpla_id(provider: str, n: int) -> str:
    return mint_id(provider, local_id(n))


def map_record(provider: str, n: int, title: str | None = None, **changes) -> dict:
    """A MAPRecord as mapping and enrichment leave it (only what the index document reads)."""
    record = {
        "id": dpla_id(provider, n),
        "ingestDate": INGESTED,
        "provider": f"{provider.title()} Hub",
        "dataProvider": "Riverside Historical Society",
        "isShownAt": f"https://{provider}.example.org/items/{n:05d}",
        "object": f"https://{provider}.example.org/thumbs/{n:05d}.jpg",
        "rightsStatement": "http://rightsstatements.org/vocab/NoC-US/1.0/",
        "sourceResource": {"title": [title or f"Mills in Millbrook, view {n}"], "subject": ["Mills"],
                           "type": ["image"]},
    }
    return {**record, **changes}


def documents(provider: str, numbers, title: str | None = None) -> list[dict]:
    """IndexRecords of ``provider`` for each number."""
    return [index_record(map_record(provider, n, title)) for n in numbers]


def deletions(provider: str, numbers) -> list[dict]:
    return [deletion_record(dpla_id(provider, n)) for n in numbers]


class PipelineHub:
    """A hub on the test's settings: record providers served by demo OAI-PMH endpoints (full harvests), the
    Dagster instance of ``DAGSTER_HOME``, and the record jobs and commands run against them."""

    def __init__(self, settings, instance, registry_path):
        self.settings, self.instance, self.registry_path = settings, instance, registry_path
        self.providers: dict[str, str] = {}  # name -> its registry entry's YAML
        self.servers: list = []

    def serve(self, provider: str, records, extra: str = "") -> None:
        """Serve ``records`` for ``provider`` (its entry gets ``extra`` YAML lines, indented)."""
        from ingest_assets.demo.oai_server import serve_in_thread

        server, url = serve_in_thread(records)
        self.servers.append(server)
        self.providers[provider] = (
            f"{provider}:\n  harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true, "
            f"full: true}}\n  mapping: oai_dc\n  resourcesync: {{}}\n" + "".join(f"  {line}\n" for line in extra.splitlines())
        )
        self.registry_path.write_text("".join(self.providers.values()))

    def run(self, provider: str, day, job: str = "record_pipeline", **options):

        from ingest_assets.definitions import build_definitions
        from ingest_assets.defs.records.partitions import partition_key

        if provider not in self.instance.get_dynamic_partitions("record_providers"):
            self.instance.add_dynamic_partitions("record_providers", [provider])
        definition = build_definitions(self.settings).resolve_job_def(job)
        return definition.execute_in_process(partition_key=str(partition_key(provider, day)), instance=self.instance,
                                             raise_on_error=False, **options)

    def settings_engine(self):
        """The hub's database (a context manager that disposes of the engine)."""
        from contextlib import contextmanager

        from ingest_assets.core.sql import make_engine

        @contextmanager
        def engine():
            made = make_engine(self.settings.database_url)
            try:
                yield made
            finally:
                made.dispose()

        return engine()

    def close(self) -> None:
        for server in self.servers:
            server.shutdown()


def materialized(result, asset: str) -> list:
    """The materializations of ``asset`` in a run's result."""
    return [e.materialization for e in result.get_asset_materialization_events()
            if e.materialization.asset_key.to_user_string() == asset]


def checks(result) -> dict[str, object]:
    """Check name -> its evaluation in a run's result."""
    return {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
