"""The record resources: the engine of the record activities (in-process, or Spark through dagster-pyspark)
and the search index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from ingest_assets.core.errors import ConfigError
from ingest_assets.defs.resources import StorageResource
from ingest_assets.records.engines.ahead import staged_stream, staging_ahead
from ingest_assets.records.engines.choice import SPARK, choose_engine, spark_config, use_python
from ingest_assets.records.indexing import DEFAULT_ALIAS, SearchIndex, open_search_index
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.core.settings import Settings
from ingest_assets.storage.activities import RecordSource, RecordStream


class RecordEngineResource(dg.ConfigurableResource):
    """Runs mapping, enrichment and indexing in-process or on Spark (registry ``engine:``, else ``default``;
    ``auto`` picks Spark from ``threshold`` input records). dagster-pyspark's ``LazyPySparkResource`` is made
    on the first Spark activity and starts the SparkSession then: an in-process run imports no Spark at all."""

    default: str
    threshold: int
    spark_config: dict[str, Any]
    _pyspark: Any = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> "RecordEngineResource":
        return cls(default=settings.engine, threshold=settings.spark_threshold,
                   spark_config=spark_config(settings.spark_master, settings.spark_python))

    def spark_session(self):
        if self._pyspark is None:
            try:
                from dagster_pyspark import LazyPySparkResource
            except ImportError:
                raise ConfigError("the Spark engine needs pyspark and dagster-pyspark, which are not installed here",
                                  hint="install the spark extra: uv sync --locked --extra spark "
                                       "(a wheel: pip install 'ingest-assets[spark]'), or set engine: in-process") from None
            self._pyspark = LazyPySparkResource(spark_config=self.spark_config)
            use_python(self._pyspark.spark_session)
        return self._pyspark.spark_session

    def stream(self, activity: RecordActivity, inputs: Sequence[RecordSource], storage: StorageResource,
               ahead: Sequence[str] = (), run: str = "") -> RecordStream:
        """The activity's stream: the output a mapping of ``run`` staged for it from exactly these inputs
        (:mod:`~ingest_assets.records.engines.ahead`), else computed on the provider's engine; a mapping also
        stages the ``ahead`` activities (those of the run's later steps)."""
        client = storage.get_client()
        staged = staged_stream(activity, inputs, client, run)
        if staged is not None:
            return staged
        records = inputs[0].manifest().record_count
        if choose_engine(activity.entry, self.default, self.threshold, records) == SPARK:
            from ingest_assets.records.engines.spark import spark_stream

            return spark_stream(self.spark_session(), client, activity, inputs, storage.opener(), ahead, run)
        return staging_ahead(in_process(activity, inputs), activity, ahead, client, run)


class SearchIndexResource(dg.ConfigurableResource):
    """An Elasticsearch or OpenSearch server (its URL) or the embedded SQLite FTS index (a directory)."""

    target: str
    alias: str = DEFAULT_ALIAS
    _index: SearchIndex | None = PrivateAttr(default=None)

    def get_client(self) -> SearchIndex:
        if self._index is None:
            self._index = open_search_index(self.target)
        return self._index

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._index is not None:
            self._index.close()
