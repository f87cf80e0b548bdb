"""Bulk export of records as Parquet (readable by pyarrow, DuckDB, Spark), streamed in row groups.

The Arrow schema is derived from the Avro schema (records -> structs, arrays -> lists, enums -> strings,
``["null", T]`` -> nullable ``T``), so every row group has the same schema whatever its records hold.
At most ``row_group_records`` records are in memory; the file is written locally and stored atomically.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from ingest_assets.core.errors import IngestError
from ingest_assets.storage.avro import load_schema
from ingest_assets.storage.backends import Storage

ROW_GROUP_RECORDS = 10_000
_UNFIT = (pa.ArrowException, TypeError, ValueError, KeyError)
_PRIMITIVES = {
    "string": pa.string(), "long": pa.int64(), "int": pa.int32(), "boolean": pa.bool_(),
    "double": pa.float64(), "float": pa.float32(), "bytes": pa.binary(), "enum": pa.string(),
}


def arrow_type(avro) -> tuple[pa.DataType, bool]:
    """The Arrow type of an (expanded) Avro type, and whether it is nullable."""
    if isinstance(avro, list):
        kinds = [t for t in avro if t != "null"]
        if len(kinds) != 1:
            raise ValueError(f"unions other than [null, T] have no Parquet column type: {avro}")
        return arrow_type(kinds[0])[0], True
    kind = avro if isinstance(avro, str) else avro["type"]
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind], False
    if kind == "array":
        item, nullable = arrow_type(avro["items"])
        return pa.list_(pa.field("item", item, nullable)), False
    if kind == "map":
        value, nullable = arrow_type(avro["values"])
        return pa.map_(pa.string(), pa.field("value", value, nullable)), False
    if kind == "record":
        return pa.struct([pa.field(f["name"], *arrow_type(f["type"])) for f in avro["fields"]]), False
    raise ValueError(f"unsupported Avro type {kind!r}")


def arrow_schema(avro_full_name: str) -> pa.Schema:
    expanded = fastavro.parse_schema(load_schema(avro_full_name), expand=True)
    return pa.schema(list(arrow_type(expanded)[0]))


@dataclass
class ExportStats:
    records: int
    row_groups: int
    bytes: int


def _batches(records: Iterable[dict], size: int) -> Iterator[list[dict]]:
    iterator = iter(records)
    while batch := list(islice(iterator, size)):
        yield batch


def export_parquet(
    storage: Storage, records: Iterable[dict], key: str, avro_full_name: str, *, provider: str | None = None,
    row_group_records: int = ROW_GROUP_RECORDS,
) -> ExportStats:
    """Write ``records`` (dicts of the Avro schema) as one Parquet file at ``key``, atomically."""
    schema = arrow_schema(avro_full_name)
    records_written = groups = 0
    with tempfile.TemporaryDirectory(prefix="ingest-parquet-") as tmp:
        local = Path(tmp) / "export.parquet"
        with pq.ParquetWriter(local, schema, compression="zstd") as writer:
            for batch in _batches(records, row_group_records):
                try:
                    table = pa.Table.from_pylist(batch, schema=schema)
                except _UNFIT as exc:
                    raise IngestError(f"record does not fit the Parquet schema: {exc}", provider=provider, file=key,
                                      record=_first_unfit(batch, schema)) from exc
                writer.write_table(table, row_group_size=row_group_records)
                records_written += len(batch)
                groups += 1
        size = local.stat().st_size
        storage.write_file(key, local)
    return ExportStats(records_written, groups, size)


def _first_unfit(batch: list[dict], schema: pa.Schema) -> str | None:
    for record in batch:
        try:
            pa.Table.from_pylist([record], schema=schema)
        except _UNFIT:
            return str(record.get("id"))
    return None
