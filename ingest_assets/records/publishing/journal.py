"""What publishing did, in SQL: the indices it built, their gate decisions and every alias action. Read by the
gates' Dagster checks, ``ingest-assets index status`` and rollback (which index was live before)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Engine, select, update

from ingest_assets.records.publishing.candidates import Candidate
from ingest_assets.records.publishing.gates import GateResult
from ingest_assets.records.publishing.tables import actions, create_tables, gates, indices

CANDIDATE, PROMOTED, REFUSED, ROLLED_BACK = "candidate", "promoted", "refused", "rolled_back"


@dataclass(frozen=True)
class Action:
    at: datetime
    alias: str
    provider: str | None
    action: str
    from_index: str | None
    to_index: str | None
    by: str
    reason: str | None
    batch: str


class Journal:
    def __init__(self, engine: Engine):
        self.engine = create_tables(engine)

    # -- indices and gates ------------------------------------------------------------------------------

    def built(self, candidate: Candidate, run_id: str | None, at: datetime) -> None:
        with self.engine.begin() as conn:
            conn.execute(indices.insert().values(
                name=candidate.name, alias=candidate.alias, provider=candidate.provider, base=candidate.base,
                state=CANDIDATE, days=json.dumps([d.isoformat() for d in candidate.days]), run_id=run_id, built_at=at,
                figures=json.dumps(candidate.figures), samples=json.dumps(candidate.samples),
                canary=json.dumps(candidate.canary),
            ))

    def candidate(self, name: str) -> Candidate | None:
        """A built index as its gates see it (without the per-day stats)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(indices).where(indices.c.name == name)).mappings().first()
        if row is None:
            return None
        return Candidate(row["name"], row["alias"], row["provider"], row["base"],
                         [date.fromisoformat(d) for d in json.loads(row["days"])], figures=json.loads(row["figures"]),
                         samples=json.loads(row["samples"]), canary=json.loads(row["canary"]))

    def built_in(self, run_id: str) -> list[Candidate]:
        """The indices run ``run_id`` built."""
        with self.engine.connect() as conn:
            names = [row[0] for row in conn.execute(select(indices.c.name).where(indices.c.run_id == run_id))]
        return [self.candidate(name) for name in names]

    def state_of(self, name: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(indices.c.state).where(indices.c.name == name)).scalar()

    def set_state(self, names: Sequence[str], state: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(indices).where(indices.c.name.in_(list(names))).values(state=state))

    def days_of(self, name: str) -> list[date]:
        candidate = self.candidate(name)
        return candidate.days if candidate else []

    def gates_passed(self, candidate: Candidate, results: Sequence[GateResult], run_id: str | None, at: datetime) -> None:
        with self.engine.begin() as conn:
            for result in results:
                conn.execute(gates.insert().values(
                    at=at, index_name=candidate.name, provider=candidate.provider, gate=result.gate,
                    passed=result.passed, description=result.description,
                    evidence=json.dumps(result.evidence, default=str), remediation=result.remediation, run_id=run_id,
                ))

    def gate_results(self, name: str) -> list[GateResult]:
        """The latest decision of each gate about index ``name``."""
        query = select(gates).where(gates.c.index_name == name).order_by(gates.c.id)
        with self.engine.connect() as conn:
            latest = {row["gate"]: row for row in conn.execute(query).mappings()}
        return [GateResult(row["gate"], row["passed"], row["description"], json.loads(row["evidence"]),
                           row["remediation"]) for row in latest.values()]

    # -- alias actions ----------------------------------------------------------------------------------

    def acted(self, batch: str, alias: str, changes: Sequence[tuple[str | None, str, str | None, str | None]],
              by: str, at: datetime, reason: str | None = None, run_id: str | None = None) -> None:
        """Record one alias update: ``(provider, action, from_index, to_index)`` per provider it moved."""
        with self.engine.begin() as conn:
            for provider, action, source, target in changes:
                conn.execute(actions.insert().values(batch=batch, at=at, alias=alias, provider=provider, action=action,
                                                     from_index=source, to_index=target, by=by, reason=reason,
                                                     run_id=run_id))

    def actions(self, alias: str, provider: str | None = None, limit: int = 20) -> list[Action]:
        """Alias actions, newest first (of one provider when given)."""
        query = select(actions).where(actions.c.alias == alias)
        if provider is not None:
            query = query.where(actions.c.provider == provider)
        query = query.order_by(actions.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [Action(r["at"], r["alias"], r["provider"], r["action"], r["from_index"], r["to_index"], r["by"],
                           r["reason"], r["batch"]) for r in conn.execute(query).mappings()]

    def previously_live(self, alias: str, provider: str | None) -> list[str]:
        """Indices the alias pointed at for ``provider`` before a promotion or rollback moved it, newest first (each
        once; a candidate undone by its canary was never really live)."""
        query = select(actions.c.from_index).where(actions.c.alias == alias, actions.c.from_index.is_not(None),
                                                   actions.c.action.in_(("promote", "rollback")))
        query = query.where(actions.c.provider == provider if provider else actions.c.provider.is_(None))
        with self.engine.connect() as conn:
            names = [row[0] for row in conn.execute(query.order_by(actions.c.id.desc()))]
        return list(dict.fromkeys(names))
