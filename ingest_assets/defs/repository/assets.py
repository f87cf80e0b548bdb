"""Repository assets: one ingest interval per provider, and the verification (garbage collection) run.

Registry block (per provider)::

    k2n:
      repository:
        template_index: https://.../TemplateParameterIndex   # or wiki_api: .../api.php + base_url: .../wiki/
        default_language: en              # language of keys without one; wiki_languages: {<BaseURL>: de}
        max_ingest_hours: 24              # MaximumIngestDuration
        vocabularies: /etc/k2n/vocab      # folder of vocabulary XML files (default: the packaged ones)
        start: 2009-01-01T00:00:00+00:00  # `from` of the very first interval (default: everything)
        wiki_api: https://.../api.php     # with wiki_user_env / wiki_password_env (names of env vars):
                                          # reports are also posted to "<collection page>/Metadata aggregation report"

Settings: INGEST_REPOSITORY_HARVESTING_INTERVAL (s, default 120), INGEST_REPOSITORY_REMOVAL_MISSES (3),
INGEST_REPOSITORY_REMOVAL_GRACE_DAYS (7); FEDORA_USER / FEDORA_PASSWORD when INGEST_REPOSITORY is Fedora.
"""

from datetime import timedelta
from typing import TYPE_CHECKING

import dagster as dg

from ingest_assets.defs.providers import repository_providers
from ingest_assets.defs.repository.resources import RepositoryResource
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import Settings

if TYPE_CHECKING:  # the repository domain (SQLAlchemy, lxml, mwparserfromhell) loads with the first run or tick
    from ingest_assets.repository.bookkeeping import Bookkeeping
    from ingest_assets.repository.ingest import IngestSettings, TemplateSource

GROUP = "repository"
BLOCK = "repository"


def ingest_settings(entry: ProviderEntry) -> "IngestSettings":
    """The provider's ``repository:`` registry block -> service settings.

    The source is ``template_index`` (a TemplateParameterIndex URL) or, to read one wiki directly,
    ``wiki_api`` (its api.php) or ``wiki_export`` (a Special:Export XML file) with ``base_url`` (its page URL
    prefix).
    """
    from ingest_assets.repository.ingest import IngestSettings

    block = entry.require(BLOCK)
    return IngestSettings(source=block.source, provider=entry.name, default_language=block.default_language,
                          wiki_languages=block.wiki_languages, start=block.start)


def template_source(entry: ProviderEntry, http: HttpClient) -> "TemplateSource":
    from ingest_assets.repository.mediawiki import MediaWikiApi, WikiTemplateSource
    from ingest_assets.repository.template_index import TemplateIndexClient

    block = entry.require(BLOCK)
    if block.template_index:
        return TemplateIndexClient(block.template_index, http, provider=entry.name)
    if block.wiki_export:
        return WikiTemplateSource.from_export(block.wiki_export, base_url=block.base_url)
    return WikiTemplateSource.from_api(MediaWikiApi(block.wiki_api, http), base_url=block.base_url)


def bookkeeping(entry: ProviderEntry, sql: SqlResource) -> "Bookkeeping":
    from ingest_assets.repository.bookkeeping import Bookkeeping

    return Bookkeeping(sql.get_client(), max_duration=timedelta(hours=entry.require(BLOCK).max_ingest_hours))


def repository_assets(settings: Settings) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    """The ingest asset (one HarvestingInterval per provider partition) and the verification asset; ``settings``
    give the wiki bot secrets a provider's block names."""

    @dg.asset(group_name=GROUP, partitions_def=repository_providers,
              description="One HarvestingInterval of the Fedora ingest service for a provider's TemplateParameterIndex.")
    def repository_collections(context: dg.AssetExecutionContext, registry: RegistryResource, sql: SqlResource,
                               storage: StorageResource, repository: RepositoryResource,
                               resourcesync: ResourceSyncResource) -> dg.MaterializeResult:
        from ingest_assets.repository.index import ObjectIndex
        from ingest_assets.repository.ingest import RepositoryIngest
        from ingest_assets.repository.mediawiki import report_poster
        from ingest_assets.repository.validation import load_vocabularies

        entry = registry.load()[context.partition_key]
        block = entry.require(BLOCK)
        feed = resourcesync.capability_feed("repository", storage.get_client())
        service = RepositoryIngest(
            ingest_settings(entry), source=template_source(entry, repository.source_http()),
            repository=repository.get_client(),
            index=ObjectIndex(sql.get_client()), bookkeeping=bookkeeping(entry, sql),
            vocabularies=load_vocabularies(block.vocabularies), storage=storage.get_client(),
            post_report=report_poster(entry.name, block.wiki_api, block.wiki_user_env, block.wiki_password_env,
                                  repository.source_http(), settings.secret), feed=feed)
        result = service.run()
        if result.refused:
            return dg.MaterializeResult(metadata={"refused": True})
        for problem in result.problems:
            context.log.warning(problem)
        for outcome in result.outcomes:
            if outcome.report_error:
                context.log.warning(f"report of {outcome.uri} not posted: {outcome.report_error}")
        if result.failed:
            raise dg.Failure("collections failed (retried next interval): "
                             + "; ".join(f"{o.uri}: {o.error}" for o in result.failed))
        done = [o for o in result.outcomes if not o.skipped]
        return dg.MaterializeResult(metadata={
            "refused": False,
            "queried_from": str(result.since), "queried_until": str(result.until),
            "units_ingested": len(done), "units_skipped": len(result.outcomes) - len(done),
            "objects_ingested": sum(o.ingested for o in done), "objects_removed": sum(o.removed for o in done),
            "errors": sum(i.severity == "error" for o in done for i in o.issues),
            "warnings": sum(i.severity == "warning" for o in done for i in o.issues),
            "reports": dg.MetadataValue.json([o.report_key for o in done if o.report_key]),
            "source_problems": len(result.problems),
            "change_feed": dg.MetadataValue.json(feed.report.counts if feed else "off"),
        })


    @dg.asset(group_name=GROUP, deps=[repository_collections],
              description="Verification service: removes collections and items whose HarvestingURL answered 404/410 "
                          "repeatedly over the grace period (never on timeouts or server errors).")
    def repository_verification(context: dg.AssetExecutionContext, sql: SqlResource, storage: StorageResource,
                                repository: RepositoryResource,
                                resourcesync: ResourceSyncResource) -> dg.MaterializeResult:
        from ingest_assets.repository.index import ObjectIndex
        from ingest_assets.repository.removal import GarbageCollector

        collector = GarbageCollector(ObjectIndex(sql.get_client()), repository.get_client(), repository.source_http(),
                                     min_misses=repository.removal_misses,
                                     grace=timedelta(days=repository.removal_grace_days),
                                     feed=resourcesync.capability_feed("repository", storage.get_client()))
        result = collector.run()
        for pid, reason in result.unreachable.items():
            context.log.info(f"{pid}: source unreachable, left alone ({reason})")
        return dg.MaterializeResult(metadata={"checked": result.checked, "missing": len(result.missing),
                                              "removed": dg.MetadataValue.json(result.removed)})

    return repository_collections, repository_verification
