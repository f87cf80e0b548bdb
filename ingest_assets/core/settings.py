"""Settings read once from the environment, with embedded defaults under ``INGEST_HOME``.

Nothing else in the package reads ``os.environ``: code that is handed no settings uses
:func:`Settings.current`, the process's settings read on first use.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from ingest_assets.core.errors import ConfigError

AVRO_CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard", "lz4")
ENGINES = ("in-process", "spark", "auto")
CHANGE_FEED_CAPABILITIES = ("repository", "datasets", "linked_data")  # publish their changes as resource sets
SPARQL_MAX_REQUEST_BYTES = 32 * 1024 * 1024  # a bulk load's largest request to a SPARQL server
SEARCH_PRODUCTS = {"elasticsearch": "Elasticsearch", "opensearch": "OpenSearch"}  # INGEST_SEARCH scheme prefixes
SMTP_SCHEMES = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}  # plain, STARTTLS, TLS -> default port


@dataclass(frozen=True)
class Settings:
    home: Path
    storage_url: str
    registry_path: Path
    database_url: str
    triplestore: str
    search: str
    repository: str
    resourcesync_url: str | None  # None: derived from where the server listens
    partition_start: date
    engine: str = "in-process"
    spark_master: str = "local[*]"
    spark_threshold: int = 100_000
    spark_python: str = ""  # the interpreter of local/standalone executors ("": this one)
    avro_codec: tuple[str, int | None] = ("snappy", None)
    git_commit: str | None = None
    repository_harvesting_interval: int = 120
    repository_removal_misses: int = 3
    repository_removal_grace_days: float = 7.0
    fedora_user: str | None = None
    sparql_urls: tuple[str, str, str] | None = None  # (query, update, Graph Store) of a server named by its URLs
    sparql_max_request_bytes: int = SPARQL_MAX_REQUEST_BYTES
    resourcesync_capabilities: tuple[str, ...] = CHANGE_FEED_CAPABILITIES
    index_count_tolerance: float = 0.02  # a new index may hold at most this share fewer documents than the old
    index_retain: int = 2  # previous indices of a provider kept for rollback
    # a record step failing with an error a retry can help is retried this often, delay x (1, 3, 7...) s apart
    step_retries: int = 2
    step_retry_delay: float = 20.0
    profiles_path: Path | None = None  # a folder of mapping profiles (and vocabularies/) beside the shipped ones
    wiki_institutions: Path | None = None  # a hub's own institutions_v2.json (None: DPLA's, shipped)
    sitemap_url: str = "https://sitemaps.dp.la"  # where the storage's _sitemaps/ folder is served (tag sitemaps)
    item_url: str = "https://dp.la/item"  # a record's page is <item_url>/<DPLA id> (tag sitemaps)
    # the Dagster instance folder: DAGSTER_HOME, else $INGEST_HOME/dagster (the commands write its dagster.yaml)
    dagster_home: Path | None = None
    uv_run: str | None = None  # the uv that started this `uv run` (the commands print follow-up commands the same way)
    # failure notices (operations/notify.py): e-mail on when recipients are given, the webhook when its URL is
    notify_email: tuple[str, ...] = ()
    smtp_url: str = "smtp://localhost"
    notify_from: str = "ingest-assets@localhost"
    notify_webhook: str | None = None
    ui_url: str = "http://127.0.0.1:3000"  # the Dagster UI, for links to runs in notices and on the status page
    smtp_given: bool = False  # INGEST_SMTP_URL is set: provider reports are mailed to their registry contacts
    jsonl_root: str = ""  # INGEST_JSONL_ROOT: where the JSON-L exports go ("": the storage root; see jsonl_export_root)
    # secrets (FEDORA_PASSWORD, IA_*, the wiki credentials a registry entry names) are looked up, never shown
    _environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = dict(os.environ if env is None else env)
        home = Path(env.get("INGEST_HOME") or Path.cwd() / ".ingest").resolve()
        return cls(
            home=home,
            storage_url=env.get("INGEST_STORAGE") or str(home / "storage"),
            registry_path=Path(env.get("INGEST_REGISTRY") or "registry.yaml").resolve(),
            database_url=env.get("INGEST_DATABASE_URL") or f"sqlite:///{home / 'ingest.sqlite3'}",
            triplestore=env.get("INGEST_TRIPLESTORE") or str(home / "oxigraph"),
            search=env.get("INGEST_SEARCH") or str(home / "search"),
            repository=env.get("INGEST_REPOSITORY") or str(home / "ocfl"),
            resourcesync_url=(env.get("INGEST_RESOURCESYNC_URL") or "").rstrip("/") or None,
            partition_start=_day("INGEST_PARTITION_START", env.get("INGEST_PARTITION_START") or "2026-01-01"),
            engine=_engine(env.get("INGEST_ENGINE") or "in-process"),
            spark_master=env.get("INGEST_SPARK_MASTER") or "local[*]",
            spark_threshold=int(_number("INGEST_SPARK_THRESHOLD", env.get("INGEST_SPARK_THRESHOLD") or "100000", int)),
            spark_python=env.get("PYSPARK_PYTHON") or sys.executable,
            avro_codec=_codec(env.get("INGEST_AVRO_CODEC") or "snappy"),
            git_commit=env.get("INGEST_GIT_COMMIT") or None,
            repository_harvesting_interval=int(_number(
                "INGEST_REPOSITORY_HARVESTING_INTERVAL", env.get("INGEST_REPOSITORY_HARVESTING_INTERVAL") or "120", int
            )),
            repository_removal_misses=int(_number(
                "INGEST_REPOSITORY_REMOVAL_MISSES", env.get("INGEST_REPOSITORY_REMOVAL_MISSES") or "3", int
            )),
            repository_removal_grace_days=_number(
                "INGEST_REPOSITORY_REMOVAL_GRACE_DAYS", env.get("INGEST_REPOSITORY_REMOVAL_GRACE_DAYS") or "7", float
            ),
            fedora_user=env.get("FEDORA_USER") or None,
            sparql_urls=_sparql_urls(env),
            sparql_max_request_bytes=int(_number(
                "INGEST_SPARQL_MAX_REQUEST_BYTES", env.get("INGEST_SPARQL_MAX_REQUEST_BYTES") or str(SPARQL_MAX_REQUEST_BYTES), int
            )),
            resourcesync_capabilities=_capabilities(env.get("INGEST_RESOURCESYNC_CAPABILITIES")),
            index_count_tolerance=_share("INGEST_INDEX_TOLERANCE", env.get("INGEST_INDEX_TOLERANCE") or "0.02"),
            index_retain=int(_number("INGEST_INDEX_RETAIN", env.get("INGEST_INDEX_RETAIN") or "2", int)),
            step_retries=int(_number("INGEST_STEP_RETRIES", env.get("INGEST_STEP_RETRIES") or "2", int)),
            step_retry_delay=_number("INGEST_STEP_RETRY_DELAY", env.get("INGEST_STEP_RETRY_DELAY") or "20", float),
            profiles_path=Path(env["INGEST_PROFILES"]).resolve() if env.get("INGEST_PROFILES") else None,
            wiki_institutions=Path(env["INGEST_WIKI_INSTITUTIONS"]).resolve() if env.get("INGEST_WIKI_INSTITUTIONS") else None,
            sitemap_url=(_http_url("INGEST_SITEMAP_URL", env.get("INGEST_SITEMAP_URL")) or "https://sitemaps.dp.la").rstrip("/"),
            item_url=(_http_url("INGEST_ITEM_URL", env.get("INGEST_ITEM_URL")) or "https://dp.la/item").rstrip("/"),
            dagster_home=Path(env.get("DAGSTER_HOME") or home / "dagster").resolve(),
            uv_run=(env.get("UV") or "uv") if "UV_RUN_RECURSION_DEPTH" in env else None,
            notify_email=tuple(a.strip() for a in (env.get("INGEST_NOTIFY_EMAIL") or "").split(",") if a.strip()),
            smtp_url=_smtp_url(env.get("INGEST_SMTP_URL") or "smtp://localhost"),
            notify_from=env.get("INGEST_NOTIFY_FROM") or f"ingest-assets@{socket.gethostname()}",
            notify_webhook=_http_url("INGEST_NOTIFY_WEBHOOK", env.get("INGEST_NOTIFY_WEBHOOK")),
            ui_url=(_http_url("INGEST_UI_URL", env.get("INGEST_UI_URL")) or "http://127.0.0.1:3000").rstrip("/"),
            smtp_given=bool(env.get("INGEST_SMTP_URL")),
            jsonl_root=_storage_root("INGEST_JSONL_ROOT", env.get("INGEST_JSONL_ROOT") or ""),
            _environ=env,
        )

    @staticmethod
    @cache
    def current() -> "Settings":
        """The process's settings, read from the environment once."""
        return Settings.from_env()

    def secret(self, name: str) -> str | None:
        """The value of the secret environment variable ``name`` (read with the rest, kept out of ``repr``)."""
        return self._environ.get(name) or None

    @property
    def jsonl_export_root(self) -> str:
        """Where the JSON-L exports go: ``INGEST_JSONL_ROOT`` (a directory or ``s3://bucket/prefix``), else the storage."""
        return self.jsonl_root or self.storage_url

    def fedora_auth(self) -> tuple[str, str] | None:
        """``(FEDORA_USER, FEDORA_PASSWORD)`` when a Fedora user is set."""
        return (self.fedora_user, self.secret("FEDORA_PASSWORD") or "") if self.fedora_user else None


def is_search_server(target: str) -> bool:
    """Whether ``INGEST_SEARCH`` names a search server (``http(s)://``, or with a product prefix:
    ``opensearch+https://``, ``elasticsearch+http://``) rather than the embedded index's directory."""
    scheme, sep, _ = target.partition("://")
    product, _, transport = scheme.rpartition("+")
    return bool(sep) and transport in ("http", "https") and product in ("", *SEARCH_PRODUCTS)


def _day(name: str, value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(f"{name} must be YYYY-MM-DD, got {value!r}") from exc


def _number(name: str, value: str, kind: type[int] | type[float]) -> float:
    try:
        number = kind(value)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a {'whole ' if kind is int else ''}number, got {value!r}") from exc
    if number < 0:
        raise ConfigError(f"{name} must not be negative, got {value!r}")
    return number


SPARQL_URL_VARIABLES = ("INGEST_SPARQL_QUERY_URL", "INGEST_SPARQL_UPDATE_URL", "INGEST_SPARQL_GRAPH_STORE_URL")


def _sparql_urls(env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """The three endpoints of a SPARQL server whose layout has no name: all three variables, or none."""
    values = tuple(env.get(name) or "" for name in SPARQL_URL_VARIABLES)
    if not any(values):
        return None
    if not all(values):
        missing = [name for name, value in zip(SPARQL_URL_VARIABLES, values, strict=True) if not value]
        raise ConfigError(f"{', '.join(missing)} missing: a SPARQL server named by its URLs needs all of "
                          f"{', '.join(SPARQL_URL_VARIABLES)}")
    return values  # type: ignore[return-value]


def _share(name: str, value: str) -> float:
    share = _number(name, value, float)
    if share > 1:
        raise ConfigError(f"{name} must be a share between 0 and 1, got {value!r}")
    return share


def _storage_root(name: str, value: str) -> str:
    """A directory or ``s3://bucket[/prefix]`` (as ``INGEST_STORAGE``); '' stays ''."""
    parts = urlsplit(value)
    if value and (parts.scheme not in ("", "file", "s3") or (parts.scheme == "s3" and not parts.netloc)):
        raise ConfigError(f"{name} must be a directory or s3://bucket/prefix, got {value!r}")
    return value


def _engine(value: str) -> str:
    if value not in ENGINES:
        raise ConfigError(f"INGEST_ENGINE must be one of {', '.join(ENGINES)}, got {value!r}")
    return value


def _smtp_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in SMTP_SCHEMES or not parts.hostname:
        raise ConfigError(f"INGEST_SMTP_URL must be {', '.join(s + '://host[:port]' for s in SMTP_SCHEMES)}, got {value!r}")
    return value


def _http_url(name: str, value: str | None) -> str | None:
    if value and (urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).hostname):
        raise ConfigError(f"{name} must be an http(s) URL, got {value!r}")
    return value or None


def _capabilities(value: str | None) -> tuple[str, ...]:
    """``INGEST_RESOURCESYNC_CAPABILITIES``: comma-separated capabilities whose change feeds are published
    (unset: all of :data:`CHANGE_FEED_CAPABILITIES`; empty: none)."""
    if value is None:
        return CHANGE_FEED_CAPABILITIES
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = sorted(set(names) - set(CHANGE_FEED_CAPABILITIES))
    if unknown:
        raise ConfigError(
            f"INGEST_RESOURCESYNC_CAPABILITIES: unknown {unknown}; known: {', '.join(CHANGE_FEED_CAPABILITIES)}"
        )
    return names


def _codec(value: str) -> tuple[str, int | None]:
    """``INGEST_AVRO_CODEC`` as ``name`` or ``name:level`` (default ``snappy``, Spark's own Avro default)."""
    name, _, level = value.partition(":")
    if name not in AVRO_CODECS:
        raise ConfigError(f"INGEST_AVRO_CODEC must be one of {', '.join(AVRO_CODECS)} (optionally :level), got {value!r}")
    return name, int(_number("INGEST_AVRO_CODEC level", level, int)) if level else None
