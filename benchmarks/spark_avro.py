"""The Avro layout on Spark two ways, same records, same session: read through spark-avro vs through
``binaryFiles`` + fastavro (every field decoded: the sum of the documents' lengths), then write the DataFrame
back as parts each way (``records/engines/spark_avro.py``).

Records are real oai_dc OriginalRecords with unique ids (as ``records_pipeline.py`` builds them), in parts of
``--part-records``. spark-avro 4.2.0 is fetched from Maven Central into ~/.m2 (needs Maven and Java).

    uv run --locked python benchmarks/spark_avro.py [--records 200000] [--master local[2]]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import records_pipeline as pipeline  # noqa: E402 - the fixture record builder

from ingest_assets.records.engines.spark_avro import SPARK_AVRO_PACKAGE, read_output, write_output  # noqa: E402
from ingest_assets.storage import LocalStorage, layout  # noqa: E402
from ingest_assets.storage.avro import ORIGINAL_RECORD, load_schema, schema_with_doc, write_parts  # noqa: E402
from ingest_assets.storage.manifest import Manifest  # noqa: E402
from ingest_assets_tests.support.servers import maven  # noqa: E402

STARTED = datetime(2026, 1, 15, 6, 0, tzinfo=timezone.utc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--part-records", type=int, default=25_000)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(args.master).appName("spark-avro-bench")
             .config("spark.jars", str(maven(SPARK_AVRO_PACKAGE))).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    schema = load_schema(ORIGINAL_RECORD)
    with tempfile.TemporaryDirectory() as tmp:
        storage = LocalStorage(Path(tmp) / "storage")
        output = layout.activity_output("bench", "harvest", STARTED.date(), STARTED, layout.schema_name(ORIGINAL_RECORD))
        with storage.folder(output.folder) as folder:
            stats = write_parts(folder, schema_with_doc(ORIGINAL_RECORD, "bench"),
                                pipeline.originals("dc", "bench", args.records, STARTED), part_records=args.part_records)
            manifest = Manifest("harvest", "bench", output.schema, stats.records, STARTED, "bench", "2026-01-15|bench")
            folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
        print(f"{args.records:,} OriginalRecords in parts of {args.part_records:,}, Spark {args.master}")
        figures = {}
        for way in ("spark-avro", "fastavro", "spark-avro", "fastavro"):  # the second round is the one reported
            frame = read_output(spark, storage, output.folder, schema, way=way)
            start = time.perf_counter()
            total = frame.selectExpr("count(*) AS n", "sum(length(document)) AS chars").collect()[0]
            read_s = time.perf_counter() - start
            target = layout.activity_output("bench", "harvest", STARTED.date(), datetime.now(timezone.utc),
                                            layout.schema_name(ORIGINAL_RECORD)).folder
            start = time.perf_counter()
            stats = write_output(frame, storage, target, schema, way=way)
            write_s = time.perf_counter() - start
            assert total["n"] == stats.records == args.records
            figures[way] = (read_s, write_s)
            storage.delete(target)
        for way, (read_s, write_s) in figures.items():
            print(f"  {way:<10} read {read_s:6.1f} s = {args.records / read_s:>9,.0f} records/s   "
                  f"write {write_s:6.1f} s = {args.records / write_s:>9,.0f} records/s")
        (ra, wa), (rf, wf) = figures["spark-avro"], figures["fastavro"]
        print(f"  spark-avro / fastavro: read {rf / ra:.2f}x, write {wf / wa:.2f}x as fast")
    spark.stop()


if __name__ == "__main__":
    main()
