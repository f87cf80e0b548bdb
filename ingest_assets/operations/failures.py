"""The last failure of each provider, kept in its state folder (``<provider>/state/last-failure.json``) so the
overview and the status page show it without asking Dagster."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import date, datetime

from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage

MAX_MESSAGE = 2000  # characters of an error message kept (the run in the UI has all of it)


@dataclass(frozen=True)
class Failure:
    """A failed run as people are told about it: which provider and days, at which stage, why, and where to look."""

    kind: str  # "run" (a step raised) or "check" (a blocking quality check failed)
    job: str
    provider: str | None
    days: tuple[date, ...]
    stage: str  # the step that failed (an asset or check name)
    message: str
    run_id: str
    run_url: str
    when: datetime

    @property
    def days_text(self) -> str:
        if not self.days:
            return ""
        return str(self.days[0]) if len(self.days) == 1 else f"{self.days[0]}..{self.days[-1]}"

    @property
    def subject(self) -> str:
        what = "check failed" if self.kind == "check" else "run failed"
        where = " ".join(p for p in (self.provider, self.days_text) if p) or self.job
        return f"[ingest-assets] {what}: {where} at {self.stage}"

    def to_json(self) -> bytes:
        data = asdict(self)
        data.update(days=[d.isoformat() for d in self.days], when=self.when.isoformat(), message=self.message[:MAX_MESSAGE])
        return json.dumps(data, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Failure:
        raw = json.loads(data)
        return cls(**{**raw, "days": tuple(date.fromisoformat(d) for d in raw["days"]),
                      "when": datetime.fromisoformat(raw["when"])})


def record_failure(storage: Storage, failure: Failure) -> None:
    """Keep ``failure`` as its provider's last failure (an older one is replaced; one without provider is not kept)."""
    if failure.provider:
        storage.write_bytes(layout.provider_state_key(failure.provider, "last-failure.json"), failure.to_json(), overwrite=True)


def last_failure(storage: Storage, provider: str) -> Failure | None:
    key = layout.provider_state_key(provider, "last-failure.json")
    return Failure.from_json(storage.read_bytes(key)) if storage.exists(key) else None
