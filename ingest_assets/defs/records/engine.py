"""The engine resource of the record activities: in-process, or Spark through dagster-pyspark."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from ingest_assets.records.engine import SPARK, choose_engine, spark_config
from ingest_assets.records.spark_engine import spark_stream
from ingest_assets.records.steps import RecordActivity, in_process
from ingest_assets.settings import Settings
from ingest_assets.defs.resources import StorageResource
from ingest_assets.storage.activities import RecordSource, RecordStream


class RecordEngineResource(dg.ConfigurableResource):
    """Runs mapping, enrichment and indexing in-process or on Spark (registry ``engine:``, else ``default``;
    ``auto`` picks Spark from ``threshold`` input records). The SparkSession starts on first use only."""

    default: str
    threshold: int
    pyspark: LazyPySparkResource

    @classmethod
    def from_settings(cls, settings: Settings) -> "RecordEngineResource":
        return cls(
            default=settings.engine,
            threshold=settings.spark_threshold,
            pyspark=LazyPySparkResource(spark_config=spark_config(settings.spark_master)),
        )

    def stream(self, activity: RecordActivity, inputs: Sequence[RecordSource], storage: StorageResource) -> RecordStream:
        records = inputs[0].manifest().record_count
        if choose_engine(activity.entry, self.default, self.threshold, records) == SPARK:
            return spark_stream(self.pyspark.spark_session, storage.storage, activity, inputs, storage.opener())
        return in_process(activity, inputs)
