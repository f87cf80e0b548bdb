"""Settings read once from the environment, with embedded defaults under ``INGEST_HOME``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ingest_assets.errors import ConfigError


@dataclass(frozen=True)
class Settings:
    home: Path
    storage_url: str
    registry_path: Path
    database_url: str
    triplestore: str
    search: str
    repository: str
    resourcesync_url: str
    partition_start: date
    engine: str = "in-process"
    spark_master: str = "local[*]"
    spark_threshold: int = 100_000

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        env = dict(os.environ if env is None else env)
        home = Path(env.get("INGEST_HOME") or Path.cwd() / ".ingest").resolve()
        start = env.get("INGEST_PARTITION_START", "2026-01-01")
        try:
            partition_start = date.fromisoformat(start)
        except ValueError as exc:
            raise ConfigError(f"INGEST_PARTITION_START must be YYYY-MM-DD, got {start!r}") from exc
        return cls(
            home=home,
            storage_url=env.get("INGEST_STORAGE") or str(home / "storage"),
            registry_path=Path(env.get("INGEST_REGISTRY") or "registry.yaml").resolve(),
            database_url=env.get("INGEST_DATABASE_URL") or f"sqlite:///{home / 'ingest.sqlite3'}",
            triplestore=env.get("INGEST_TRIPLESTORE") or str(home / "oxigraph"),
            search=env.get("INGEST_SEARCH") or str(home / "search"),
            repository=env.get("INGEST_REPOSITORY") or str(home / "ocfl"),
            resourcesync_url=(env.get("INGEST_RESOURCESYNC_URL") or "http://127.0.0.1:8080").rstrip("/"),
            partition_start=partition_start,
            engine=env.get("INGEST_ENGINE") or "in-process",
            spark_master=env.get("INGEST_SPARK_MASTER") or "local[*]",
            spark_threshold=_count("INGEST_SPARK_THRESHOLD", env.get("INGEST_SPARK_THRESHOLD") or "100000"),
        )


def _count(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a whole number of records, got {value!r}") from exc
