"""The Avro layout as Spark DataFrames, two ways: through ``spark-avro`` (Spark's ``avro`` data source, the jar
:data:`SPARK_AVRO_PACKAGE`) or through ``binaryFiles`` + fastavro (no jar beyond pyspark's own).

Both read an output folder's ``part-NNNNN.avro`` files into a DataFrame of the layout's Avro schema, and both write a
DataFrame as such parts (``_MANIFEST`` and ``_LOGS`` stay :func:`~ingest_assets.storage.activities.write_activity`'s):
spark-avro with the schema given as ``avroSchema`` (Spark's own schema would drop unions and docs), fastavro with
the same codec as every other writer. ``spark-avro`` 4.2.0 is the newest on Maven Central; pyspark is locked at
4.3.0 and the tests prove the pair reads and writes the same records (``spark.jars.packages`` in production, a
local jar in the tests).
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import fastavro

from ingest_assets.storage.avro import WriteStats, default_codec, part_keys
from ingest_assets.storage.backends import Storage

SPARK_AVRO_PACKAGE = "org.apache.spark:spark-avro_2.13:4.2.0"
WAYS = ("spark-avro", "fastavro")
SPARK_CODECS = {"null": "uncompressed", "deflate": "deflate", "snappy": "snappy", "bzip2": "bzip2", "xz": "xz",
                "zstandard": "zstandard"}


def _paths(storage: Storage, folder: str) -> list[str]:
    """The part files of an output as paths Spark opens (a local folder, or ``s3a://`` through Hadoop)."""
    return [storage.uri(key).replace("s3://", "s3a://", 1) for key in part_keys(storage, folder)]


def spark_schema(avro: dict):
    """The Spark schema of an Avro record schema as Spark reads files with it: spark-avro's types (a union with
    ``null`` is its other type, an enum a string), every field, element and value nullable."""
    return _spark_type(fastavro.parse_schema(avro, expand=True))


def _spark_type(avro):
    from pyspark.sql import types as T

    if isinstance(avro, list):
        kinds = [k for k in avro if k != "null"]
        if len(kinds) != 1:
            raise ValueError(f"union {avro} has no single Spark type")
        return _spark_type(kinds[0])
    kind = avro["type"] if isinstance(avro, dict) else avro
    if kind == "record":
        return T.StructType([T.StructField(f["name"], _spark_type(f["type"]), True) for f in avro["fields"]])
    if kind == "array":
        return T.ArrayType(_spark_type(avro["items"]), True)
    if kind == "map":
        return T.MapType(T.StringType(), _spark_type(avro["values"]), True)
    primitives = {"string": T.StringType(), "enum": T.StringType(), "int": T.IntegerType(), "long": T.LongType(),
                  "boolean": T.BooleanType(), "float": T.FloatType(), "double": T.DoubleType(),
                  "bytes": T.BinaryType(), "fixed": T.BinaryType(), "null": T.NullType()}
    return primitives[kind]


def read_output(spark, storage: Storage, folder: str, schema: dict, *, way: str = "spark-avro"):
    """The records of the output ``folder`` (its parts, in order) as a DataFrame of ``schema``'s Spark form."""
    paths = _paths(storage, folder)
    if way == "spark-avro":
        return spark.read.format("avro").option("avroSchema", json.dumps(schema)).load(paths)
    if way != "fastavro":
        raise ValueError(f"way must be one of {WAYS}")
    structure = spark_schema(schema)

    def records(pair):
        yield from fastavro.reader(io.BytesIO(pair[1]))

    rdd = spark.sparkContext.binaryFiles(",".join(paths), minPartitions=max(1, len(paths))).flatMap(records)
    return spark.createDataFrame(rdd, structure, verifySchema=False)


def write_output(frame, storage: Storage, folder: str, schema: dict, *, way: str = "spark-avro") -> WriteStats:
    """Write ``frame`` as ``folder/part-NNNNN.avro`` files of ``schema`` (one per Spark partition), through
    spark-avro or fastavro, staged in a local temporary folder and then copied into the storage."""
    if way not in WAYS:
        raise ValueError(f"way must be one of {WAYS}")
    codec, level = default_codec()
    stats = WriteStats()
    with tempfile.TemporaryDirectory(prefix="ingest-spark-avro-") as tmp:
        staging = Path(tmp) / "out"
        if way == "spark-avro":
            writer = frame.write.format("avro").option("avroSchema", json.dumps(schema))
            writer = writer.option("compression", SPARK_CODECS[codec])
            writer.save(str(staging))
            files = sorted(staging.glob("part-*.avro"))
        else:
            text = json.dumps(schema)

            def write(rows):
                parsed = fastavro.parse_schema(json.loads(text))
                buffer = io.BytesIO()
                count = 0

                def dicts():
                    nonlocal count
                    for row in rows:
                        count += 1
                        yield row.asDict(recursive=True)

                fastavro.writer(buffer, parsed, dicts(), codec=codec, codec_compression_level=level)
                yield (count, buffer.getvalue())

            staging.mkdir()
            files = []
            for number, (count, data) in enumerate(frame.rdd.mapPartitions(write).collect()):
                if count:
                    files.append(staging / f"part-{number:05d}.avro")
                    files[-1].write_bytes(data)
        for source in files:
            with source.open("rb") as part:
                records = sum(block.num_records for block in fastavro.block_reader(part))
            if records:
                name = f"part-{len(stats.parts):05d}.avro"
                storage.write_file(f"{folder.rstrip('/')}/{name}", source)
                stats.parts.append(name)
                stats.records += records
    return stats
