"""Which engine runs a provider's mapping, enrichment and indexing: in this process or on Spark.

Registry (per provider, overriding ``INGEST_ENGINE``)::

    nara:
      engine: auto               # in-process | spark | auto
      engine_threshold: 500000   # auto: Spark from this many input records (default INGEST_SPARK_THRESHOLD)
"""

from __future__ import annotations

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import ENGINES

IN_PROCESS, SPARK, AUTO = ENGINES


def choose_engine(entry: ProviderEntry, default: str, threshold: int, records: int) -> str:
    """``in-process`` or ``spark`` for an activity whose (first) input holds ``records`` records."""
    name = entry.settings.engine or default
    limit = entry.settings.engine_threshold or threshold
    if name == AUTO:
        return SPARK if records >= limit else IN_PROCESS
    return name


def spark_config(master: str) -> dict[str, str]:
    """SparkSession settings for ``INGEST_SPARK_MASTER``: ``local[*]``, ``spark://host:7077`` (standalone),
    ``yarn``/``k8s://...`` (classic masters), or ``sc://host:15002`` (Spark Connect)."""
    key = "spark.remote" if master.startswith("sc://") else "spark.master"
    return {key: master, "spark.app.name": "ingest-assets"}
