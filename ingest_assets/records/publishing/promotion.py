"""Gated promotion and rollback of per-provider indices behind one alias.

    publisher = Publisher(index, "dpla-map4", journal, ledger, takedowns)
    outcome = publisher.publish({"demo": [(day, indexing_output)]}, storage, tolerance={"demo": 0.02}, run_id=...)

``publish`` builds one candidate per provider (:mod:`.candidates`), judges each with the pre-flip gates
(:mod:`.gates`), and only when every one passes flips the alias onto all of them in one action that names the
indices they replace (so it can never race another flip). The canary then reads through the alias; when it
fails the flip is undone by itself. A refused or rolled-back candidate is kept for inspection and the previous
index keeps serving. After a promotion each provider keeps its ``retain`` previous indices for rollback.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from ingest_assets.core.errors import ConfigError, NotFoundError
from ingest_assets.records.indexing import SearchIndex, deletion_record
from ingest_assets.records.indexing.naming import parse_index
from ingest_assets.records.publishing import gates
from ingest_assets.records.publishing.candidates import Candidate, build_candidate, live_indices
from ingest_assets.records.publishing.journal import PROMOTED, REFUSED, ROLLED_BACK, Journal
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage.activities import RecordSource, source_from_path
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

PUBLISHER = "publishing"
SETTLED = (PROMOTED, REFUSED, ROLLED_BACK)  # decided: no run is still building or judging it


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Published:
    """One provider's part of a publish: its candidate, the gate results, and whether it went live."""

    candidate: Candidate
    results: list[gates.GateResult] = field(default_factory=list)
    promoted: bool = False
    note: str = ""

    @property
    def refused(self) -> bool:
        return any(not r.passed for r in self.results)


@dataclass
class Publisher:
    index: SearchIndex
    alias: str
    journal: Journal
    ledger: Ledger
    takedowns: Takedowns
    retain: int = 2
    clock: Callable[[], datetime] = utc_now

    # -- publishing -------------------------------------------------------------------------------------

    def publish(self, days: dict[str, list[tuple[date, Iterable[dict]]]], storage: Storage,
                tolerance: dict[str, float], run_id: str | None = None, by: str = PUBLISHER) -> dict[str, Published]:
        """Build, judge and (when every provider's gates pass) promote each provider's days, oldest first (days
        older than one already published are built beneath it, not over it)."""
        outcome = {}
        for provider, provider_days in sorted(days.items()):
            first = min(day for day, _ in provider_days)
            newer = self._published_since(storage, provider, first, {day for day, _ in provider_days})
            candidate = build_candidate(self.index, self.alias, provider,
                                        sorted([*provider_days, *newer], key=lambda d: d[0]),
                                        suppressed=self.takedowns.suppressed(provider),
                                        seed=self._published_state(storage, provider, first), fresh=bool(newer))
            self.journal.built(candidate, run_id, self.clock())
            outcome[provider] = Published(candidate, gates.judge(self.index, candidate, tolerance[provider]))
            self.journal.gates_passed(candidate, outcome[provider].results, run_id, self.clock())
        self._promote_if_all_pass(list(outcome.values()), run_id, by)
        return outcome

    def rebuild(self, storage: Storage, providers: Iterable[str], as_of: date, tolerance: dict[str, float],
                run_id: str | None = None, by: str = PUBLISHER) -> dict[str, Published]:
        """Every provider's published state as of ``as_of`` (from storage) in new indices, gated, then promoted in
        one action that also takes any index of every provider off the alias."""
        outcome = {}
        for provider in sorted(providers):
            sources = snapshot_sources(storage, provider, as_of, "indexing", self.ledger.excluded_days(provider))
            candidate = build_candidate(self.index, self.alias, provider, [(as_of, snapshot_records(sources))],
                                        suppressed=self.takedowns.suppressed(provider), fresh=True)
            candidate.days = []  # a rebuild publishes no new day
            self.journal.built(candidate, run_id, self.clock())
            outcome[provider] = Published(candidate, gates.judge(self.index, candidate, tolerance[provider]))
            self.journal.gates_passed(candidate, outcome[provider].results, run_id, self.clock())
        shared = live_indices(self.index, self.alias).get(None, [])
        self._promote_if_all_pass(list(outcome.values()), run_id, by, also_remove=shared)
        return outcome

    def _published_since(self, storage: Storage, provider: str, first: date,
                         taken: set[date]) -> list[tuple[date, RecordSource]]:
        """The provider's days published after ``first`` that the run does not bring: a run of older days (a
        backfill behind the live index) is built from the published state before them, its days, then these
        again, so the newer records stay newest."""
        return [(state.day, source_from_path(storage, state.output, "indexing"))
                for state in self.ledger.published_after(provider, first) if state.day not in taken]

    def _published_state(self, storage: Storage, provider: str, first: date) -> Iterable[dict]:
        """The provider's published records before ``first``: the seed of an index it does not have yet, or of one
        built beneath a newer published day."""
        def records() -> Iterable[dict]:
            sources = snapshot_sources(storage, provider, first - timedelta(days=1), "indexing",
                                       self.ledger.excluded_days(provider))
            yield from snapshot_records(sources)
        return records()

    def _promote_if_all_pass(self, parts: list[Published], run_id: str | None, by: str,
                             also_remove: list[str] | None = None) -> None:
        refused = [p for p in parts if p.refused]
        if refused:
            self.journal.set_state([p.candidate.name for p in refused], REFUSED)
            names = ", ".join(p.candidate.provider for p in refused)
            for part in parts:
                part.note = "refused by its gates" if part.refused else f"not promoted: {names} refused in the same run"
            return
        candidates = [p.candidate for p in parts]
        batch = self._flip(candidates, also_remove or [], "promote", by, run_id)
        checks = [gates.canary(self.index, c) for c in candidates]
        for part, check in zip(parts, checks, strict=True):
            part.results.append(check)
            self.journal.gates_passed(part.candidate, [check], run_id, self.clock())
        if not all(check.passed for check in checks):
            self._undo(batch, candidates, also_remove or [], by, run_id)
            for part in parts:
                part.note = "rolled back: the canary failed after the flip"
            return
        self.journal.set_state([c.name for c in candidates], PROMOTED)
        for part in parts:
            part.promoted, part.note = True, f"live in {part.candidate.name}"
            if part.candidate.days:
                self.ledger.published(part.candidate.provider, part.candidate.days, part.candidate.name, self.clock())
            self.prune(part.candidate.provider)
        if also_remove:
            self.prune(None)

    def _flip(self, candidates: list[Candidate], also_remove: list[str], action: str, by: str,
              run_id: str | None) -> str:
        bases = [c.base for c in candidates if c.base]
        self.index.update_alias(self.alias, add=[c.name for c in candidates], remove=bases + also_remove)
        batch = uuid.uuid4().hex
        changes = [(c.provider, action, c.base, c.name) for c in candidates]
        changes += [(None, action, name, None) for name in also_remove]
        self.journal.acted(batch, self.alias, changes, by, self.clock(), run_id=run_id)
        return batch

    def _undo(self, batch: str, candidates: list[Candidate], also_remove: list[str], by: str, run_id: str | None) -> None:
        """The automatic rollback after a failed canary: the previous indices back, in one action."""
        bases = [c.base for c in candidates if c.base]
        self.index.update_alias(self.alias, add=bases + also_remove, remove=[c.name for c in candidates])
        changes = [(c.provider, "auto-rollback", c.name, c.base) for c in candidates]
        self.journal.acted(batch + "-undo", self.alias, changes, by, self.clock(), "the canary failed", run_id)
        self.journal.set_state([c.name for c in candidates], ROLLED_BACK)

    # -- retention ------------------------------------------------------------------------------------

    def prune(self, provider: str | None) -> list[str]:
        """Drop the provider's indices older than its live one, except the ``retain`` it was live in most recently.
        Only settled indices go: ones that were live, or whose gates or canary refused them; one still being
        built or judged (another run's candidate: it is in the journal with its decision only once judged) and
        newer ones are left alone. Returns the dropped names."""
        mine = [i for i in self.index.indices(self.alias) if i.provider == provider]
        live = [i for i in mine if i.aliased]
        newest_live = max((i.created for i in live), default=None)
        previously = self.journal.previously_live(self.alias, provider)
        older = [i for i in mine if not i.aliased and (newest_live is None or i.created < newest_live)
                 and (i.name in previously or self.journal.state_of(i.name) in SETTLED)]
        earlier = [n for n in previously if n in {i.name for i in older}]
        if not earlier:
            earlier = [i.name for i in sorted(older, key=lambda i: i.created, reverse=True)]
        keep = set(earlier[: self.retain])
        dropped = [i.name for i in older if i.name not in keep]
        for name in dropped:
            self.index.drop(name)
        return dropped

    # -- rollback -------------------------------------------------------------------------------------

    def rollback(self, provider: str | None = None, to: str | None = None, by: str = PUBLISHER,
                 reason: str | None = None) -> list[tuple[str | None, str | None, str | None]]:
        """Point the alias back, in one action: at ``to`` (for its provider), at ``provider``'s previous index,
        or (neither given) undo the latest promotion. Returns ``(provider, from, to)`` per provider moved."""
        moves = self._moves(provider, to)
        for who, _, target in moves:
            suppressed = self.takedowns.suppressed(who) if who else set()
            if target and suppressed:  # a takedown made since that index was live stays in force
                self.index.write(target, [deletion_record(i) for i in sorted(suppressed)])
        self.index.update_alias(self.alias, add=[t for _, _, t in moves if t], remove=[s for _, s, _ in moves if s])
        self.journal.acted(uuid.uuid4().hex, self.alias, [(p, "rollback", s, t) for p, s, t in moves], by,
                           self.clock(), reason)
        for who, source, target in moves:
            gone = [source] if source else []
            if target is not None and who is not None:  # every index of the provider newer than the target
                created = parse_index(self.alias, target).created
                gone = [i.name for i in self.index.indices(self.alias) if i.provider == who and i.created > created]
            if who is not None:
                self.ledger.rolled_back(who, gone)
            self.journal.set_state([source] if source else [], ROLLED_BACK)
        return moves

    def remove(self, provider: str, by: str = PUBLISHER, reason: str | None = None) -> str:
        """Take ``provider``'s index off the alias in one action (a hub withdrawn); the index is kept, so
        ``rollback(to=...)`` brings it back. Returns its name."""
        current = live_indices(self.index, self.alias).get(provider)
        if not current:
            raise NotFoundError(f"nothing of the provider is live in {self.alias!r}", provider=provider,
                                hint="see `ingest-assets index status`")
        self.index.update_alias(self.alias, remove=current)
        self.journal.acted(uuid.uuid4().hex, self.alias, [(provider, "remove", name, None) for name in current], by,
                           self.clock(), reason)
        self.ledger.rolled_back(provider, current)
        return current[0]

    def _moves(self, provider: str | None, to: str | None) -> list[tuple[str | None, str | None, str | None]]:
        live = {provider: names[0] for provider, names in live_indices(self.index, self.alias).items()}
        existing = {i.name: i for i in self.index.indices(self.alias)}
        if to is not None:
            parsed = parse_index(self.alias, to)
            if parsed is None or to not in existing:
                raise NotFoundError(f"no index {to!r} of alias {self.alias!r} is kept", hint="see `ingest-assets index status`")
            if to in live.values():
                raise ConfigError(f"{to} is already live", hint="see `ingest-assets index status`")
            return [(parsed.provider, live.get(parsed.provider), to)]
        if provider is not None:
            current = live.get(provider)
            if current is None:
                raise NotFoundError(f"nothing of the provider is live in {self.alias!r}", provider=provider,
                                    hint="see `ingest-assets index status`")
            return [(provider, current, self._previous(provider, current, existing))]
        return self._undo_latest(live, existing)

    def _previous(self, provider: str, current: str, existing: dict) -> str:
        created = existing[current].created
        earlier = [n for n in self.journal.previously_live(self.alias, provider)
                   if n in existing and existing[n].created < created]
        earlier += sorted((n for n, i in existing.items() if i.provider == provider and i.created < created),
                          key=lambda n: existing[n].created, reverse=True)
        if not earlier:
            raise NotFoundError(f"no index of the provider older than {current} is kept", provider=provider,
                                hint="see `ingest-assets index status`")
        return earlier[0]

    def _undo_latest(self, live: dict, existing: dict) -> list[tuple[str | None, str | None, str | None]]:
        latest = next((a for a in self.journal.actions(self.alias, limit=1000) if a.action == "promote"), None)
        if latest is None:
            raise NotFoundError(f"no promotion of alias {self.alias!r} is recorded",
                                hint="name the index to bring back with --to, or the provider with --provider")
        moves = []
        for action in self.journal.actions(self.alias, limit=1000):
            if action.batch != latest.batch:
                continue
            current = live.get(action.provider) if action.provider else None
            if action.to_index and current != action.to_index:
                raise ConfigError(f"the latest promotion put {action.to_index} live, but {current} is live now",
                                  provider=action.provider, hint="name --provider or --to")
            if action.from_index and action.from_index not in existing:
                raise NotFoundError(f"{action.from_index}, live before the latest promotion, is no longer kept",
                                    provider=action.provider, hint="see `ingest-assets index status`")
            moves.append((action.provider, action.to_index, action.from_index))
        return moves
