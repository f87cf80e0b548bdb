"""Review before publish: each provider day's way to the public, kept in ``publish_days``.

    register   a day's new indexing output arrives: ``pending`` (held) when the provider requires review,
               else ``approved``; a new output of a day that was decided starts over
    decide     approve or reject (a person, the UI, or the window expiring: :meth:`Ledger.expire`)
    release    a publish run takes approved days; it must take a provider's days in order, so a day waits
               while an earlier one is pending or approved and not yet published
    published  the index holding the day is live; ``rolled_back`` when it was rolled back

A rejected day stays in storage marked rejected and is never published; the previous state keeps serving.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Engine, and_, func, select, update

from ingest_assets.core.errors import NotFoundError
from ingest_assets.core.registry import ReviewBlock
from ingest_assets.core.sql import upsert
from ingest_assets.records.publishing.tables import create_tables, days

PENDING, APPROVED, REJECTED, PUBLISHED, ROLLED_BACK = "pending", "approved", "rejected", "published", "rolled_back"
NO_REVIEW = "no review required"
AUTO_APPROVER = "auto-approval"
MAX_HOLDS = 5  # an approved day held back this often is left for a person (status shows it)


@dataclass(frozen=True)
class DayState:
    """One row of ``publish_days``."""

    provider: str
    day: date
    output: str
    review: bool
    state: str
    requested_at: datetime
    deadline: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    reason: str | None = None
    released_at: datetime | None = None
    holds: int = 0
    published_at: datetime | None = None
    index_name: str | None = None

    @property
    def waiting(self) -> bool:
        """Not public yet, and not given up: pending, or approved and not yet published."""
        return self.state in (PENDING, APPROVED)

    def describe(self) -> str:
        text = f"{self.provider} {self.day.isoformat()}: {self.state}"
        if self.state == PENDING:
            text += f", approved by itself at {self.deadline.isoformat()}" if self.deadline else ", waits for a decision"
        elif self.decided_by == NO_REVIEW:
            text += f" ({NO_REVIEW})"
        elif self.decided_by:
            text += f" by {self.decided_by} at {self.decided_at.isoformat()}" + (f" ({self.reason})" if self.reason else "")
        if self.state == PUBLISHED and self.index_name:
            text += f", live in {self.index_name}"
        return text


class Ledger:
    def __init__(self, engine: Engine):
        self.engine = create_tables(engine)

    # -- reading -----------------------------------------------------------------------------------------

    def get(self, provider: str, day: date) -> DayState | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(days).where(days.c.provider == provider, days.c.day == day)).mappings().first()
        return DayState(**row) if row else None

    def history(self, provider: str, limit: int = 30) -> list[DayState]:
        """The provider's days, newest first."""
        query = select(days).where(days.c.provider == provider).order_by(days.c.day.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [DayState(**row) for row in conn.execute(query).mappings()]

    def newest_days(self) -> list[DayState]:
        """Each provider's newest day."""
        newest = select(days.c.provider, func.max(days.c.day).label("day")).group_by(days.c.provider).subquery()
        query = select(days).join(newest, and_(days.c.provider == newest.c.provider, days.c.day == newest.c.day))
        with self.engine.connect() as conn:
            return [DayState(**row) for row in conn.execute(query.order_by(days.c.provider)).mappings()]

    def waiting(self, provider: str | None = None) -> list[DayState]:
        """Days pending review, or approved and not yet published, oldest first."""
        query = select(days).where(days.c.state.in_((PENDING, APPROVED)))
        if provider:
            query = query.where(days.c.provider == provider)
        with self.engine.connect() as conn:
            return [DayState(**row) for row in conn.execute(query.order_by(days.c.day, days.c.provider)).mappings()]

    def published_after(self, provider: str, first: date) -> list[DayState]:
        """The provider's published days after ``first``, oldest first."""
        query = select(days).where(days.c.provider == provider, days.c.day > first, days.c.state == PUBLISHED)
        with self.engine.connect() as conn:
            return [DayState(**row) for row in conn.execute(query.order_by(days.c.day)).mappings()]

    def excluded_days(self, provider: str) -> set[date]:
        """Days whose outputs are not part of the provider's published state (held, rejected, rolled back)."""
        query = select(days.c.day).where(days.c.provider == provider, days.c.state != PUBLISHED)
        with self.engine.connect() as conn:
            return {row[0] for row in conn.execute(query)}

    # -- the way to the public ----------------------------------------------------------------------------

    def register(self, provider: str, day: date, output: str, review: ReviewBlock, now: datetime) -> DayState:
        """Record the day's indexing ``output``: pending when review is required, else approved. The same output
        registered again keeps its state; a new one starts over (a re-run is reviewed anew)."""
        current = self.get(provider, day)
        if current is not None and current.output == output:
            return current
        fresh = {
            "output": output, "review": review.required, "requested_at": now, "released_at": None, "holds": 0,
            "published_at": None, "index_name": None, "reason": None,
        }
        if review.required:
            deadline = now + review.auto_approve_after if review.auto_approve_after else None
            fresh.update(state=PENDING, deadline=deadline, decided_at=None, decided_by=None)
        else:
            fresh.update(state=APPROVED, deadline=None, decided_at=now, decided_by=NO_REVIEW)
        with self.engine.begin() as conn:
            upsert(conn, days, {"provider": provider, "day": day, **fresh}, ("provider", "day"))
        return self.get(provider, day)

    def decide(self, provider: str, day: date, approve: bool, by: str, now: datetime, reason: str | None = None,
               claim: bool = False) -> DayState:
        """Approve or reject the day. Approval applies to a pending, rejected or approved-but-unpublished day (an
        approval of the latter lets it be published again); rejection to a pending or unpublished approved one.
        ``claim``: the caller publishes it at once (the review sensor leaves it alone)."""
        current = self.get(provider, day)
        if current is None:
            raise NotFoundError(f"nothing to review on {day.isoformat()}: no indexed output was registered for it",
                                provider=provider, hint="see `ingest-assets review list`")
        allowed = (PENDING, REJECTED, APPROVED) if approve else (PENDING, APPROVED)
        if current.state not in allowed:
            raise NotFoundError(f"nothing to {'approve' if approve else 'reject'} on {day.isoformat()}: the day is "
                                f"{current.state.replace('_', ' ')}", provider=provider,
                                hint="see `ingest-assets review list` and `ingest-assets status`")
        values = {"state": APPROVED if approve else REJECTED, "decided_at": now, "decided_by": by, "reason": reason,
                  "released_at": now if claim else None}
        with self.engine.begin() as conn:
            conn.execute(update(days).where(days.c.provider == provider, days.c.day == day).values(**values))
        return self.get(provider, day)

    def expire(self, now: datetime) -> list[DayState]:
        """Approve every pending day whose window has passed; returns them."""
        due = and_(days.c.state == PENDING, days.c.deadline.is_not(None), days.c.deadline <= now)
        with self.engine.begin() as conn:
            rows = conn.execute(select(days.c.provider, days.c.day).where(due)).all()
            for provider, day in rows:
                conn.execute(update(days).where(days.c.provider == provider, days.c.day == day, due).values(
                    state=APPROVED, decided_at=now, decided_by=AUTO_APPROVER,
                    reason="the review window passed without a decision"))
        return [self.get(provider, day) for provider, day in rows]

    def held(self, provider: str, outputs: dict[date, str]) -> str:
        """Why a run may not publish ``outputs`` (day -> the indexing output it read) of ``provider`` ('' when it
        may): every day must be approved (or published already) for that very output, and no earlier day may
        still wait."""
        states = [self.get(provider, day) for day in sorted(outputs)]
        return _held_because(provider, outputs, states) or self._earlier_waiting(provider, min(outputs))

    def blocked(self, provider: str, day: date) -> str:
        """Why the day's records may not leave storage at all ('' when they may): held for review, rejected or
        rolled back. A day publishing never registered (older than review) may."""
        state = self.get(provider, day)
        if state is None or state.state in (APPROVED, PUBLISHED):
            return ""
        return f"{provider} {day.isoformat()} is {state.state.replace('_', ' ')}"

    def mark(self, provider: str, days_taken: Sequence[date], released: bool, now: datetime) -> None:
        """A run took the days (``released``), or held the approved ones back (counted, so the review sensor
        asks for another run)."""
        for day in days_taken:
            state = self.get(provider, day)
            if state is None:
                continue
            where = and_(days.c.provider == provider, days.c.day == day)
            with self.engine.begin() as conn:
                if released:
                    conn.execute(update(days).where(where).values(released_at=now))
                elif state.state == APPROVED:
                    conn.execute(update(days).where(where).values(holds=state.holds + 1))

    def _earlier_waiting(self, provider: str, first: date) -> str:
        query = select(days).where(days.c.provider == provider, days.c.day < first,
                                   days.c.state.in_((PENDING, APPROVED))).order_by(days.c.day).limit(1)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            return ""
        return (f"{provider} {row['day'].isoformat()} is {row['state']} and not published: a provider's days are "
                "published in order")

    def to_release(self) -> list[DayState]:
        """Per provider, the earliest approved day no publish run has taken, when nothing before it waits."""
        found = []
        by_provider: dict[str, list[DayState]] = {}
        for state in self.waiting():
            by_provider.setdefault(state.provider, []).append(state)
        for states in by_provider.values():
            first = states[0]
            if first.state == APPROVED and first.released_at is None and first.holds < MAX_HOLDS:
                found.append(first)
        return found

    def published(self, provider: str, on: Sequence[date], index_name: str, now: datetime) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(days).where(days.c.provider == provider, days.c.day.in_(list(on))).values(
                state=PUBLISHED, published_at=now, index_name=index_name))

    def rolled_back(self, provider: str, index_names: Sequence[str]) -> None:
        """The days published by ``index_names`` are no longer live."""
        with self.engine.begin() as conn:
            conn.execute(update(days).where(days.c.provider == provider, days.c.state == PUBLISHED,
                                            days.c.index_name.in_(list(index_names))).values(state=ROLLED_BACK))


def _held_because(provider: str, outputs: dict[date, str], states: list[DayState | None]) -> str:
    """Why the days cannot be published as they are ('' when they can)."""
    for day, state in zip(sorted(outputs), states, strict=True):
        where = f"{provider} {day.isoformat()}"
        if state is None:
            return f"{where} has no review record (its report was never made)"
        if state.output != outputs[day]:
            return f"{where} was approved for {state.output}, not for the newer {outputs[day]}"
        if state.state == PENDING:
            deadline = f" (approved by itself at {state.deadline.isoformat()})" if state.deadline else ""
            return f"{where} is held for review{deadline}"
        if state.state not in (APPROVED, PUBLISHED):
            return f"{where} is {state.state.replace('_', ' ')}"
    return ""
