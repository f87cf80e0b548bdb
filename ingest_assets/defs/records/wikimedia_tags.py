"""What DPLA's downstream reads from the published index (group ``exports``): ``wikimedia_records``, the records of a
provider's published day eligible for Wikimedia Commons with the metadata ingest-wikimedia reads (Gate D first), and
``tag_sitemaps``, a sitemap per tag of the published records' item pages. The logic is in ``records/wikimedia/`` and
``records/export/sitemaps.py``; neither runs by itself: materialize them (or schedule them) after publishing."""

from datetime import datetime, timezone

import dagster as dg
from pydantic import Field

from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.assets import final_errors
from ingest_assets.defs.records.io_managers import BACKFILL, run_parts
from ingest_assets.defs.records.parquet import EXPORTS
from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.records.resources import SearchIndexResource
from ingest_assets.defs.resources import RegistryResource, StorageResource


def wikimedia_records(context: dg.AssetExecutionContext, storage: StorageResource, publishing: PublishingResource,
                      search: SearchIndexResource, registry: RegistryResource) -> dg.MaterializeResult:
    """For each provider day of the run, once Gate D passes (the day is published and validated after its flip, the
    provider resolves in the institutions table, its documents read back with the API's fields): its records that
    may go to Wikimedia Commons, as ingestion3's WikiMetadataEntry writes them, at
    ``<provider>/wiki/<yyyymmdd>/<ts>-<provider>-wiki.parquet/``. A refused day fails with the gate's evidence and
    remedy, and nothing is written."""
    from ingest_assets.records.mapping import minter_for
    from ingest_assets.records.wikimedia import GateRefused, export_published_day

    entries, client = registry.load(), storage.get_client()
    for partition, (provider, day) in run_parts(context.partition_keys):
        try:
            gate, export = export_published_day(
                client, search.get_client(), search.alias, publishing.ledger(), publishing.journal(), provider,
                minter_for(entries[provider]), day, datetime.now(timezone.utc))
        except GateRefused as refused:
            raise dg.Failure(f"{refused} (remediation: {refused.hint})", allow_retries=False, metadata={
                "gate": "D (wikimedia refresh)", "evidence": dg.MetadataValue.json(refused.result.evidence),
                "remediation": refused.hint or ""}) from refused
        context.add_asset_metadata({
            "dagster/uri": dg.MetadataValue.path(client.uri(export.key)),
            "dagster/row_count": export.eligible,
            **export.summary(),
            "bytes": export.bytes,
            "gate": gate.description,
            "gate_evidence": dg.MetadataValue.json(gate.evidence),
        }, partition_key=partition)
    return dg.MaterializeResult()


class SitemapConfig(dg.Config):
    tags: list[str] | None = Field(default=None, description="the tags to write sitemaps of (default: every tag of the "
                                                              "tags table, records/enrichment/data/tags.yaml)")


def tag_sitemaps_of(settings: Settings):
    """``tag_sitemaps`` with the settings' item and sitemap URLs."""
    item_url, sitemap_url = settings.item_url, settings.sitemap_url

    def tag_sitemaps(config: SitemapConfig, storage: StorageResource, search: SearchIndexResource) -> dg.MaterializeResult:
        """A sitemap per tag of the published records' item pages (``INGEST_ITEM_URL``/<id>), as ingestion3's
        generate_tag_sitemap.py writes them, from one scan of the index behind the alias: gzipped shards of at most
        50,000 URLs under ``_sitemaps/sitemap/<tag>/<yyyymmdd-HHMMSS>/`` and the index
        ``_sitemaps/sitemap/<tag>/all_item_urls.xml``, replaced when its shards are all written (served from
        ``INGEST_SITEMAP_URL``)."""
        from ingest_assets.records.enrichment.tags import TAG, tag_rules
        from ingest_assets.records.export.sitemaps import write_tag_sitemaps

        tags = list(dict.fromkeys(config.tags if config.tags is not None else (r.tag for r in tag_rules())))
        bad = [tag for tag in tags if not TAG.fullmatch(tag)]
        if bad:
            raise dg.Failure(f"config tags: {bad[0]!r} is not a tag (letters, digits, '_', '.', '-')",
                             allow_retries=False)
        client = storage.get_client()
        written = write_tag_sitemaps(client, search.get_client().tagged(search.alias, tags), tags,
                                     datetime.now(timezone.utc), item_url, sitemap_url)
        return dg.MaterializeResult(metadata={
            "dagster/uri": dg.MetadataValue.path(client.uri("_sitemaps")),
            "urls": dg.MetadataValue.json({tag: sitemap.urls for tag, sitemap in written.items()}),
            "indices": dg.MetadataValue.json({tag: client.uri(s.index) for tag, s in written.items() if s.index}),
            "not_written": dg.MetadataValue.json([tag for tag, s in written.items() if not s.index]),
            "item_url": item_url, "sitemap_url": sitemap_url,
        })

    return tag_sitemaps


def wikimedia_tags_assets(partitions: dg.PartitionsDefinition, settings: Settings,
                          retry: dg.RetryPolicy) -> list[dg.AssetsDefinition]:
    """``wikimedia_records`` (partitioned like the records) and ``tag_sitemaps`` (the whole published index), retried
    as the record steps are (``retry``)."""
    return [
        dg.asset(partitions_def=partitions, group_name=EXPORTS, kinds={"parquet"}, deps=["search_index"],
                 retry_policy=retry, backfill_policy=BACKFILL)(final_errors(wikimedia_records)),
        dg.asset(group_name=EXPORTS, kinds={"xml"}, deps=["search_index"], retry_policy=retry)(
            final_errors(tag_sitemaps_of(settings))),
    ]
