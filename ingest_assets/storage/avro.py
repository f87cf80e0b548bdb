"""Avro schemas and streaming Avro I/O: records flow as iterators, memory stays flat.

An activity output is a folder of ``part-NNNNN.avro`` files (a new part every ``part_records``
records), so Spark (``binaryFiles`` + fastavro) and shell tools read it without Dagster.
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import cramjam
import fastavro
from fastavro.write import Writer

from ingest_assets import schemas
from ingest_assets.core.errors import IngestError, ParseError
from ingest_assets.core.settings import Settings
from ingest_assets.storage.backends import FolderWriter, Storage

ORIGINAL_RECORD = "dpla.avro.v1.OriginalRecord"
MAP_RECORD = "dpla.avro.v1.MAP4_x.MAPRecord"
INDEX_RECORD = "dpla.avro.v1.MAP4_0.IndexRecord"
DEFAULT_PART_RECORDS = 250_000
DAMAGED_AVRO = (ValueError, EOFError, zlib.error, cramjam.DecompressionError)  # truncated or corrupt blocks


@lru_cache(maxsize=None)
def load_schema(full_name: str) -> dict:
    return schemas.read_json(f"{full_name}.avsc")


def schema_with_doc(full_name: str, doc: str) -> dict:
    """The parsed schema with its ``doc`` set (the spec's ``<DOCUMENTATION>``: activity, inputs, version)."""
    schema = copy.deepcopy(load_schema(full_name))
    schema["doc"] = doc
    return fastavro.parse_schema(schema)


def default_codec() -> tuple[str, int | None]:
    """The configured ``INGEST_AVRO_CODEC`` (default ``snappy``, Spark's own Avro default: as fast as no codec,
    5x smaller)."""
    return Settings.current().avro_codec


@dataclass
class WriteStats:
    records: int = 0
    parts: list[str] = field(default_factory=list)


def write_parts(
    folder: FolderWriter,
    schema: dict,
    records: Iterable[dict],
    *,
    provider: str | None = None,
    part_records: int = DEFAULT_PART_RECORDS,
    codec: tuple[str, int | None] | None = None,
    first_part: int = 0,
) -> WriteStats:
    """Stream ``records`` into part files of ``folder`` (numbered from ``first_part``); a record that does not fit
    the schema is an error naming it (the caller's folder is then discarded whole)."""
    name, level = codec or default_codec()
    stats = WriteStats()
    handle = writer = None
    try:
        for record in records:
            if writer is None or stats.records % part_records == 0 and stats.records:
                if writer is not None:
                    writer.flush()
                    handle.close()
                part = f"part-{first_part + len(stats.parts):05d}.avro"
                handle = folder.open(part)
                writer = Writer(handle, schema, codec=name, compression_level=level, validator=False)
                stats.parts.append(part)
            try:
                writer.write(record)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                raise IngestError(
                    f"record does not fit {schema['name']}: {exc}",
                    provider=provider,
                    file=stats.parts[-1],
                    record=str(record.get("id")) if isinstance(record, dict) else None,
                ) from exc
            stats.records += 1
        if writer is not None:
            writer.flush()
    finally:
        if handle is not None:
            handle.close()
    return stats


def part_keys(storage: Storage, folder: str) -> list[str]:
    """The part files of an output folder, in part order."""
    return [k for k in storage.list_keys(folder) if k.rsplit("/", 1)[-1].startswith("part-") and k.endswith(".avro")]


def read_part(storage: Storage, key: str) -> Iterator[dict]:
    """Records of one part file (lazy)."""
    with storage.open_read(key) as handle:
        try:
            yield from fastavro.reader(handle)
        except DAMAGED_AVRO as exc:
            raise ParseError(f"damaged Avro part: {exc}", file=storage.uri(key)) from exc


def read_folder(storage: Storage, folder: str) -> Iterator[dict]:
    """Records of every part file of an output folder, in part order (lazy)."""
    for key in part_keys(storage, folder):
        yield from read_part(storage, key)
