"""The Fedora ingest service (one run = one harvesting interval), following the spec step by step.

1. claim the ``watchdog`` entry of the harvested source (refused while another ingest is fresh);
2. query the TemplateParameterIndex for ``Infobox Organisation``, ``Metadata`` and ``Key Start`` records
   modified since the general ``last_success`` up to *now* (kept in memory);
3. per affected unit (provider page, Metadata collection, or wiki page with keys) - skipped when its own
   ``last_success`` is later than its newest modification - fetch its records, map and validate them,
   find the existing collection (4-step algorithm), delete its members and re-ingest them in one
   repository transaction (the collection object keeps its PID), write the aggregation report and the
   unit's ``last_success``;
4. delete the watchdog entry and store the general success time (only if every unit succeeded and the
   source reported no unreadable record).

With a change feed, each written unit's objects are published (their RDF, ``objects/<pid>.ttl``:
``created``, ``updated`` when it changed, nothing when it did not) and its deleted members as ``deleted``,
at the time the unit's transaction committed.

A record that fails validation keeps the existing members harvested from its page (the report tells its
author; the fixing edit brings it back). A unit with a record the source could not read deletes none of its
existing members and keeps its earlier ``last_success``, so the next cycle, asking again from the earlier
general success time, ingests it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

from ingest_assets.core.errors import DatabaseError, IngestError, ValidationError
from ingest_assets.repository.bookkeeping import Bookkeeping, Lease, LeaseLost
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.mapping import (
    Mapped,
    map_key_start,
    map_metadata,
    map_organisation,
    metadata_collection_uri,
    page_collection,
    wiki_provider,
)
from ingest_assets.repository.model import FEED_MIME, RepositoryObject, feed_path
from ingest_assets.repository.records import TemplateRecord, page_url
from ingest_assets.repository.report import render_report
from ingest_assets.repository.backend import Repository
from ingest_assets.repository.validation import Issue, Vocabulary, validate
from ingest_assets.resourcesync.feed import ChangeFeed
from ingest_assets.storage import Storage
from ingest_assets.storage.layout import repository_report_key

KEEP_ALIVE_EVERY = 100
FINISH_RETRY_DELAYS = (1, 2, 4, 8)  # seconds between tries to release the watchdog while the database is away


class TemplateSource(Protocol):
    """A TemplateParameterIndex (:class:`~ingest_assets.repository.template_index.TemplateIndexClient`) or a
    wiki answering the same queries (:class:`~ingest_assets.repository.mediawiki.WikiTemplateSource`)."""

    problems: list[IngestError]

    def modified(self, template: str, since: datetime | None, until: datetime | None,
                 parameternames: list[str] | None = None) -> Iterator[TemplateRecord]: ...

    def where(self, template: str, parameter: str, value: str) -> Iterator[TemplateRecord]: ...


@dataclass(frozen=True)
class IngestSettings:
    source: str  # HarvestedSource (watchdog / last_success key): the index URL, wiki API URL or export path
    provider: str  # registry name, for report paths
    default_language: str = "en"
    wiki_languages: dict[str, str] = field(default_factory=dict)  # BaseURL -> default key language
    start: datetime | None = None  # `from` of the very first interval (None: everything)


@dataclass
class Unit:
    kind: str  # provider | metadata | keys
    uri: str
    base_url: str
    page: str
    latest: datetime | None = None
    records: list[TemplateRecord] = field(default_factory=list)
    unread: bool = False  # the source could not read one of its records


@dataclass
class UnitOutcome:
    kind: str
    uri: str
    pid: str | None = None
    records: int = 0
    ingested: int = 0
    removed: int = 0
    kept: int = 0  # existing members not re-ingested but kept (their record failed or could not be read)
    issues: list[Issue] = field(default_factory=list)
    report_key: str | None = None
    report_error: str | None = None  # posting to the wiki failed (the ingest itself stands)
    skipped: bool = False
    error: str | None = None


@dataclass
class CycleResult:
    refused: bool
    since: datetime | None = None
    until: datetime | None = None
    outcomes: list[UnitOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[UnitOutcome]:
        return [o for o in self.outcomes if o.error]


ReportPoster = Callable[[str, str], None]  # (wiki page title, wikitext)


class RepositoryIngest:
    def __init__(self, settings: IngestSettings, *, source: TemplateSource, repository: Repository,
                 index: ObjectIndex, bookkeeping: Bookkeeping, vocabularies: list[Vocabulary],
                 storage: Storage | None = None, post_report: ReportPoster | None = None,
                 feed: ChangeFeed | None = None):
        self.settings = settings
        self.source = source
        self.repository = repository
        self.index = index
        self.bookkeeping = bookkeeping
        self.vocabularies = vocabularies
        self.storage = storage
        self.post_report = post_report
        self.feed = feed

    def run(self) -> CycleResult:
        source = self.settings.source
        lease = self.bookkeeping.claim(source)
        if lease is None:
            return CycleResult(refused=True)
        since = self.bookkeeping.last_success(source) or self.settings.start
        until = datetime.now(timezone.utc)
        result = CycleResult(refused=False, since=since, until=until)
        seen = len(self.source.problems)
        try:
            for unit in self.affected_units(since, until):
                result.outcomes.append(self._run_unit(lease, unit))
        except LeaseLost:
            raise
        except BaseException:
            self._finish(lease, None)
            raise
        problems = self.source.problems[seen:]
        self._finish(lease, None if result.failed or problems else until)
        result.problems = [str(problem) for problem in problems]
        return result

    def _finish(self, lease: Lease, until: datetime | None) -> None:
        """Release the watchdog, waiting out a database restart (bounded): a watchdog left behind would refuse
        the provider's next ingests until MaximumIngestDuration."""
        for delay in (*FINISH_RETRY_DELAYS, None):
            try:
                return self.bookkeeping.finish(lease, until)
            except DatabaseError:
                if delay is None:
                    raise
                time.sleep(delay)

    def affected_units(self, since: datetime | None, until: datetime) -> list[Unit]:
        """Providers first (collections refer to them), then Metadata collections, then key pages."""
        units: dict[tuple[str, str], Unit] = {}

        def unit(kind: str, uri: str, record: TemplateRecord, page: str) -> Unit:
            found = units.setdefault((kind, uri), Unit(kind, uri, record.base_url, page))
            if record.modified and (found.latest is None or record.modified > found.latest):
                found.latest = record.modified
            return found

        seen = len(self.source.problems)
        for record in self.source.modified("Infobox Organisation", since, until):
            unit("provider", record.page_url, record, record.page).records[:] = [record]
        unread = {("provider", problem.record) for problem in self.source.problems[seen:]}  # record: its page
        # an unreadable Metadata record is met again when `where` reads its collection (see _run_unit)
        for record in self.source.modified("Metadata", since, until, parameternames=["Type", "Collection Page"]):
            uri = metadata_collection_uri(record)
            is_own = uri == record.page_url
            unit("metadata", uri, record, record.page if is_own else record.get("collection page"))
        seen = len(self.source.problems)
        for record in self.source.modified("Key Start", since, until):
            unit("keys", record.page_url, record, record.page).records.append(record)
        unread |= {("keys", problem.record) for problem in self.source.problems[seen:]}
        for found in units.values():  # a problem naming no page could belong to any unit of its kind
            found.unread = bool({(found.kind, found.page), (found.kind, None)} & unread)
        order = {"provider": 0, "metadata": 1, "keys": 2}
        return sorted(units.values(), key=lambda u: (order[u.kind], u.uri))

    def _run_unit(self, lease: Lease, unit: Unit) -> UnitOutcome:
        outcome = UnitOutcome(unit.kind, unit.uri)
        done = self.bookkeeping.last_success(self.settings.source, unit.uri)
        if done is not None and unit.latest is not None and done > unit.latest:
            outcome.skipped = True
            return outcome
        fetched_at = datetime.now(timezone.utc)
        try:
            records = unit.records
            if unit.kind == "metadata":
                seen = len(self.source.problems)
                records = list(self.source.where("Metadata", "Collection Page", unit.page))
                unit.unread |= len(self.source.problems) > seen
            outcome.records = len(records)
            if records:
                self._ingest(lease, unit, records, outcome)
            if not unit.unread:  # otherwise the next cycle must not skip this unit
                self.bookkeeping.collection_done(lease, unit.uri, fetched_at)
        except LeaseLost:
            raise
        except IngestError as exc:
            outcome.error = str(exc)
        return outcome

    def _map(self, unit: Unit, record: TemplateRecord) -> Mapped:
        if unit.kind == "provider":
            return map_organisation(record)
        if unit.kind == "keys":
            language = self.settings.wiki_languages.get(record.base_url, self.settings.default_language)
            return map_key_start(record, default_language=language)
        provider_page = record.get("provider page")
        provider = self.index.find_provider(page_url(record.base_url, provider_page)) if provider_page else None
        return map_metadata(record, provider_pid=provider)

    def _checked(self, unit: Unit, record: TemplateRecord, outcome: UnitOutcome,
                 failed: set[str]) -> RepositoryObject | None:
        """``record`` mapped and validated, its issues added to ``outcome``; None when it belongs elsewhere or
        failed (its page then added to ``failed``)."""
        try:
            mapped = self._map(unit, record)
        except ValidationError as exc:
            outcome.issues.append(Issue("error", record.ref, record.page_url, "", exc.message))
            failed.add(record.page_url)
            return None
        if mapped.collection_uri != unit.uri:  # e.g. same page name in another wiki of the index
            outcome.issues.append(Issue("warning", record.ref, record.page_url, "",
                                        f"belongs to collection {mapped.collection_uri}, not ingested here"))
            return None
        issues = [Issue("warning", record.ref, record.page_url, "", note) for note in mapped.notes]
        issues += validate(mapped.obj, self.vocabularies, record=record.ref, url=record.page_url)
        outcome.issues += issues
        if any(issue.severity == "error" for issue in issues):
            failed.add(record.page_url)
            return None
        return mapped.obj

    def _ingest(self, lease: Lease, unit: Unit, records: list[TemplateRecord], outcome: UnitOutcome) -> None:
        collection: RepositoryObject | None = None
        members: dict[str, RepositoryObject] = {}
        failed: set[str] = set()  # pages of records that failed mapping or validation
        for record in records:
            obj = self._checked(unit, record, outcome, failed)
            if obj is None:
                continue
            if obj.kind in ("collection", "provider"):
                collection = obj
            elif obj.pid in members:
                outcome.issues.append(Issue("warning", record.ref, record.page_url, "", "duplicate of another record"))
            else:
                members[obj.pid] = obj
        if unit.kind == "provider":
            if collection is not None:
                self._write(lease, unit, collection, [], [], {collection.pid: unit.uri}, failed, outcome)
            return
        extra: list[RepositoryObject] = []
        if collection is None:
            collection = page_collection(unit.base_url, unit.page)
            first_provider = next((m.provider for m in members.values() if m.provider), None)
            collection.provider = first_provider or collection.provider
        if unit.kind == "keys" and self.index.get(collection.provider) is None:
            extra.append(wiki_provider(unit.base_url))
        existing = self.index.find_collection(unit.uri, collection.provider, collection.first("Resource_ID") or None)
        if existing:
            collection.pid = existing
        for member in members.values():
            member.collection = collection.pid
        uris = {collection.pid: unit.uri, **{p.pid: p.first("Best_Quality_URI") for p in extra}}
        self._write(lease, unit, collection, extra, list(members.values()), uris, failed, outcome)

    def _write(self, lease: Lease, unit: Unit, collection: RepositoryObject, extra: list[RepositoryObject],
               members: list[RepositoryObject], uris: dict[str, str], failed: set[str],
               outcome: UnitOutcome) -> None:
        """Write the unit; existing members not among ``members`` are deleted, except those harvested from
        a page in ``failed`` and, when a record of the unit could not be read, all of them."""
        current = {m.pid for m in members}
        old = [pid for pid in self.index.members(collection.pid) if pid not in current]
        kept = set(old) if unit.unread else {pid for pid in old if self._harvested_from(pid) in failed}
        old = [pid for pid in old if pid not in kept]
        self.index.plan(members, uris)
        with self.repository.transaction() as tx:
            for count, pid in enumerate(old, 1):
                tx.delete(pid)
                if count % KEEP_ALIVE_EVERY == 0:
                    tx.keep_alive()
            self.bookkeeping.heartbeat(lease)
            for count, obj in enumerate([*extra, collection, *members], 1):
                tx.put(obj)
                if count % KEEP_ALIVE_EVERY == 0:
                    tx.keep_alive()
        self.index.confirm([*extra, collection, *members], uris, removed=old)
        if self.feed is not None:
            publish_changes(self.feed, [*extra, collection, *members], old, datetime.now(timezone.utc))
        outcome.pid, outcome.ingested, outcome.removed = collection.pid, len(members) + 1, len(old)
        outcome.kept = len(kept)
        self._report(unit, collection, outcome)

    def _harvested_from(self, pid: str) -> str | None:
        row = self.index.get(pid)
        return row["harvesting_url"] if row else None

    def _report(self, unit: Unit, collection: RepositoryObject, outcome: UnitOutcome) -> None:
        if self.storage is None and self.post_report is None:
            return
        now = datetime.now(timezone.utc)
        title = collection.first("dc:title") or outcome.uri
        text = render_report(collection_title=title, collection_url=outcome.uri, generated=now,
                             records=outcome.records, ingested=outcome.ingested, issues=outcome.issues)
        if self.storage is not None:
            outcome.report_key = repository_report_key(self.settings.provider, now, collection.pid)
            self.storage.write_bytes(outcome.report_key, text.encode("utf-8"), overwrite=True)
        if self.post_report is not None and outcome.kind != "provider":
            try:
                self.post_report(f"{unit.page}/Metadata aggregation report", text)
            except IngestError as exc:
                outcome.report_error = str(exc)


def publish_changes(feed: ChangeFeed, written: list[RepositoryObject], deleted: list[str], at: datetime) -> None:
    """Tell ``feed`` that ``written`` objects were stored and the ``deleted`` PIDs removed at ``at``."""
    for pid in deleted:
        feed.delete(feed_path(pid), at)
    for obj in written:
        feed.put(feed_path(obj.pid), obj.to_turtle(), at, FEED_MIME)
