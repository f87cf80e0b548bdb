"""Check a provider's VoID and import its update: every dump file is staged first, then all are applied
as one unit, so the provider graph reflects all of them or none.

* full dump (or first import): load into a fresh version graph, then move the pointer (one update);
* partial dump, small next to the graph: stage it in a scratch graph, then ONE update does the batched
  ``VALUES`` delete-by-subject in the current version, adds the staged triples and stamps ``modified``;
* partial dump, large next to the graph: copy the current version minus the dump's subjects into a fresh
  version, load the dump, move the pointer (cheaper than one huge transaction).

A VoID with subsets (``void:subset``) imports only the subsets whose ``modified`` passed the one recorded for them
(kept next to the pointer), all changed subsets as one unit: a bad dump in any of them fails the import and
leaves every subset as it was, rather than presenting a half-imported subset as current. When every subset
changed and all are full dumps, the graph is replaced; otherwise the changed subsets' dumps are applied like a
partial dump: their subjects' old triples are replaced, other subsets' triples stay, and a subject that left
a changed subset keeps its old triples until the next replace (the graph does not record which subset a
triple came from).

Old versions and scratch graphs are recorded in the metadata graph and dropped by :func:`cleanup`, after
readers have moved on. The registry's ``modified`` is never written; the harvested value lives with the
pointer and is published in the status document.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from ingest_assets.core.errors import IngestError, context
from ingest_assets.core.http import HttpClient, check_url
from ingest_assets.linked_data import dumps
from ingest_assets.linked_data.dump_state import DumpState
from ingest_assets.linked_data.graphs import GraphState, ProviderGraphs, SubsetStamp
from ingest_assets.linked_data.triplestore import Term, TripleStore, batches, delete_subjects_sparql
from ingest_assets.linked_data.void import VoidDescription, parse_void
from ingest_assets.core.registry import LinkedDataSettings, ProviderEntry

log = logging.getLogger(__name__)
VOID_MAX_BYTES = 8 << 20
MERGE_FRACTION = 0.25  # a partial dump below this share of the graph is merged in one transaction


@dataclass(frozen=True)
class ProviderSource:
    """The registry keys this capability reads: ``void``, ``modified``, ``allow_private``, ``max_dump_bytes``."""

    provider: str
    void_url: str
    modified: datetime | None = None
    allow_private: bool = False
    max_dump_bytes: int = LinkedDataSettings().max_dump_bytes

    @classmethod
    def of(cls, entry: ProviderEntry) -> "ProviderSource":
        """The entry's typed linked-data keys (:class:`ConfigError` when it has no ``void``)."""
        settings = entry.settings
        return cls(entry.name, entry.require("void"), settings.modified, settings.allow_private, settings.max_dump_bytes)

    def client(self, **kwargs) -> HttpClient:
        return HttpClient(allow_private=self.allow_private, **kwargs)


def fetch_void(http: HttpClient, source: ProviderSource) -> VoidDescription:
    with context(provider=source.provider):
        response = http.get(source.void_url, max_bytes=VOID_MAX_BYTES)
    return parse_void(
        response.content, provider=source.provider, url=response.url, content_type=response.headers.get("Content-Type")
    )


def _may_have_changed(part: VoidDescription) -> bool:
    return True


@dataclass(frozen=True)
class Check:
    provider: str
    void: VoidDescription
    state: GraphState
    baseline: datetime | None  # the newer of the registry's and the harvested ``modified``
    registry: datetime | None = None  # the registry's ``modified`` (a subset's baseline with its own)
    # for a part without ``modified``: whether its dumps changed (see dump_state; unknown: they may have)
    dumps_changed: Callable[[VoidDescription], bool] = _may_have_changed

    @property
    def parts(self) -> tuple[VoidDescription, ...]:
        """What is due: the subsets whose ``modified`` is newer than their own record, or the whole dataset; a
        part without ``modified`` when its dumps changed."""
        if not self.void.subsets:
            return (self.void,) if self._due(self.void, self.baseline) else ()
        return tuple(s for s in self.void.subsets if self._due(s, self.registry, self.state.subsets.get(s.dataset)))

    def _due(self, part: VoidDescription, *known: datetime | None) -> bool:
        return self.dumps_changed(part) if part.modified is None else _newer(part.modified, *known)

    @property
    def due(self) -> bool:
        return bool(self.parts)

    @property
    def replaces(self) -> bool:
        """Whether the due parts are full dumps of the whole graph (every subset changed)."""
        parts = self.parts
        return all(p.full for p in parts) and len(parts) == len(self.void.subsets or (self.void,))


def _newer(modified: datetime, *known: datetime | None) -> bool:
    return all(k is None or modified > k for k in known)


def check(source: ProviderSource, void: VoidDescription, state: GraphState,
          dumps_changed: Callable[[VoidDescription], bool] = _may_have_changed) -> Check:
    known = [m for m in (source.modified, state.modified) if m is not None]
    return Check(source.provider, void, state, max(known) if known else None, source.modified, dumps_changed)


@dataclass(frozen=True)
class ImportResult:
    provider: str
    strategy: str  # replace | merge | copy | unchanged
    void: VoidDescription
    state: GraphState
    files: tuple[dumps.StagedDump, ...] = field(default_factory=tuple)
    dumps: Mapping[str, DumpState] = field(default_factory=dict)  # what this run saw of each dump it asked for

    @property
    def triples_loaded(self) -> int:
        return sum(f.triples for f in self.files)


def import_update(
    source: ProviderSource,
    store: TripleStore,
    http: HttpClient,
    graphs: ProviderGraphs,
    *,
    void: VoidDescription | None = None,
    tmp_dir: Path | None = None,
    now: datetime | None = None,
    writer: Callable[[], AbstractContextManager[TripleStore]] | None = None,
    seen: Mapping[str, DumpState] | None = None,
) -> ImportResult:
    """Bring the provider graph up to the VoID's ``modified`` (re-read here unless given).

    Downloads and parsing only read ``store``; with ``writer`` (an embedded store has one writer
    process), a writable store is opened just for applying, so other imports are not held up meanwhile.
    A part whose VoID gives no ``modified`` is imported only when its dumps changed since ``seen`` (what earlier
    imports saw of them, :mod:`.dump_state`): asked conditionally, else compared by sha256.
    """
    if graphs.provider != source.provider:
        raise ValueError("graphs and source name different providers")
    void = void or fetch_void(http, source)
    now = now or datetime.now(timezone.utc)
    candidates = check(source, void, graphs.read_state(store))
    if not candidates.due:
        return ImportResult(source.provider, "unchanged", void, candidates.state)
    with context(provider=source.provider):
        for part in candidates.parts:  # refuse every bad URL before fetching anything
            for url in part.dumps:
                check_url(url, allow_private=source.allow_private)
    with tempfile.TemporaryDirectory(prefix="linked-data-", dir=tmp_dir) as work:
        fetched, states = _fetch_undated(source, candidates.parts, seen or {}, http, Path(work))
        changed = partial(_dumps_changed, fetched)
        found = check(source, void, candidates.state, changed)
        if not found.due:
            return ImportResult(source.provider, "unchanged", void, found.state, dumps=states)
        parts = found.parts
        subjects: set[Term] | None = None if found.replaces else set()
        staged = tuple(_stage_all(source, parts, http, Path(work), subjects, fetched, states))
        stamp = SubsetStamp(tuple((p.dataset, p.modified, p.modified_text) for p in parts
                                  if void.subsets and p.modified is not None), replace_all=found.replaces)
        # a store that fails here (down, killed mid-load) is named in the error, with the provider
        with context(provider=source.provider, doing="while applying the update to the triple store"), (
                writer() if writer else nullcontext(store)) as target:
            latest = check(source, void, graphs.read_state(target), changed)
            if latest.parts != parts:  # another import got there while this one was downloading
                return ImportResult(source.provider, "unchanged", void, latest.state)
            strategy, expected = _apply(target, graphs, latest.state, void, staged, subjects, now, stamp)
            state = graphs.read_state(target)
    if state.current != expected or state.modified != void.modified:
        raise IngestError(
            "the graph pointer changed during the import (two imports of this provider at once?)",
            provider=source.provider,
        )
    return ImportResult(source.provider, strategy, void, state, staged, states)


def _dumps_changed(fetched: Mapping[str, dumps.Download], part: VoidDescription) -> bool:
    return any(url in fetched for url in part.dumps)


def _fetch_undated(source: ProviderSource, parts, seen: Mapping[str, DumpState], http: HttpClient, work: Path):
    """Ask for the dumps of the parts without ``modified``: ``(downloads of the dumps that changed, what was seen
    of each)``. A ``304`` answer or the bytes' sha256 as seen before is "unchanged"."""
    fetched: dict[str, dumps.Download] = {}
    states: dict[str, DumpState] = {}
    for part in parts:
        for url in part.dumps if part.modified is None else ():
            before = seen.get(url)
            download = dumps.download(http, url, work / f"undated-{len(states)}.download", provider=source.provider,
                                      max_bytes=source.max_dump_bytes, headers=before.conditions() if before else None)
            if download.not_modified:
                states[url] = DumpState(download.state.etag or before.etag,
                                        download.state.last_modified or before.last_modified, before.sha256)
            else:
                states[url] = download.state
                if download.state.same_as(before):
                    download.path.unlink()
                else:
                    fetched[url] = download
    return fetched, states


def _stage_all(source, parts, http, work: Path, subjects, fetched: Mapping[str, dumps.Download],
               states: dict[str, DumpState]):
    """Stage every dump of ``parts`` (downloading those not already ``fetched``; what was seen goes to ``states``)."""
    number = 0
    for part in parts:
        for url in part.dumps:
            number += 1
            download = fetched.get(url) or dumps.download(http, url, work / f"{number}.download",
                                                          provider=source.provider, max_bytes=source.max_dump_bytes)
            states[url] = download.state
            yield from dumps.stage_all(download, work / str(number), provider=source.provider,
                                       hint=part.dump_format, max_bytes=source.max_dump_bytes, subjects=subjects)
            download.path.unlink()


def _apply(store: TripleStore, graphs: ProviderGraphs, state: GraphState, void: VoidDescription,
           staged, subjects, now: datetime, stamp: SubsetStamp) -> tuple[str, str]:
    """Apply the staged dumps; returns the strategy and the version that must now be current."""
    current = state.current
    if subjects is None or current is None:
        strategy = "replace"
    elif sum(s.triples for s in staged) < MERGE_FRACTION * store.count(current):
        strategy = "merge"
    else:
        strategy = "copy"
    target = graphs.new_version(now)
    store.update(graphs.mark_discard(target))  # a crash from here on leaves it to cleanup()
    try:
        if strategy == "copy":
            store.copy_without(current, target, subjects)
        for dump in staged:
            store.load(target, dump.spool)
        if strategy == "merge":
            deletes = [delete_subjects_sparql(current, batch) for batch in batches(subjects)]
            store.update(graphs.merge(current, target, deletes, void.modified, void.modified_text, now, stamp))
        else:
            store.update(graphs.switch(target, current, void.modified, void.modified_text, now, stamp))
    except BaseException:
        try:  # an update may have committed before its connection broke: never drop what became current
            if graphs.read_state(store).current != target:
                _drop(store, graphs, target)
        except Exception:  # it stays recorded for cleanup(); the original error matters more
            log.warning("could not drop %s after a failed import", target, exc_info=True)
        raise
    return strategy, current if strategy == "merge" else target


def _drop(store: TripleStore, graphs: ProviderGraphs, graph: str) -> None:
    if not graphs.owns(graph):
        raise ValueError(f"{graph} is not a graph of provider {graphs.provider}")
    store.drop(graph)
    store.update(graphs.forget_discard(graph))


def cleanup(store: TripleStore, graphs: ProviderGraphs) -> list[str]:
    """Drop the provider's retired versions and scratch graphs (never the current one)."""
    state = graphs.read_state(store)
    dropped = []
    for graph in state.discard:
        if graph != state.current:
            _drop(store, graphs, graph)
            dropped.append(graph)
    return dropped
