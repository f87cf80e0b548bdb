"""Avro schemas and streaming Avro I/O: records flow as iterators, memory stays flat.

An activity output is a folder of ``part-NNNNN.avro`` files (a new part every ``part_records``
records), so Spark (``binaryFiles`` + fastavro) and shell tools read it without Dagster.
"""

from __future__ import annotations

import copy
import shutil
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, BinaryIO

import cramjam
import fastavro
from fastavro.write import Writer

from ingest_assets import schemas
from ingest_assets.core.errors import IngestError, ParseError
from ingest_assets.core.settings import Settings
from ingest_assets.storage.backends import COPY_BUFFER, FolderWriter, Storage

ORIGINAL_RECORD = "dpla.avro.v1.OriginalRecord"
MAP_RECORD = "dpla.avro.v1.MAP4_x.MAPRecord"
INDEX_RECORD = "dpla.avro.v1.MAP4_0.IndexRecord"
DEFAULT_PART_RECORDS = 250_000
SYNC_INTERVAL = 64_000  # Java Avro's block size: fastavro's 16 KB holds ~2 mapped records and compresses 10-35% worse
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


Hint = Callable[[Any], Any]
_NULL = ("null", None)
_HINTED = {"string": str, "array": list, "record": dict}  # branches tagged: values of their Python type only


def union_hints(schema: dict) -> Hint | None:
    """A function giving a record of parsed ``schema`` with the values of its ``["null", X]`` unions in fastavro's
    tuple notation (``(branch name, value)``), or None if there are none. fastavro resolves an untagged union value
    by validating it against each branch (an array of records: every record, and again as each is written); a
    tagged one is written under its branch as it is: the same bytes. Only values of the branch's own Python type
    are tagged (a string where an array belongs is left to fastavro, which rejects it as before); the record given
    is not changed (a copy is tagged: the caller passes it on to later steps)."""
    return _Hints().of(schema)


class _Hints:
    """The hints of one parsed schema; its named types by full name: (kind, hint)."""

    def __init__(self):
        self.named: dict[str, tuple[str, Hint | None]] = {}

    def of(self, schema) -> Hint | None:
        if isinstance(schema, str):  # a primitive, or a named type defined earlier (no hint while it is built)
            return self.named.get(schema, ("", None))[1]
        if isinstance(schema, list):
            return self.union(schema)
        kind = schema["type"]
        if kind in ("record", "error"):
            self.named[schema["name"]] = ("record", None)
            fields = tuple((f["name"], hint) for f in schema["fields"] if (hint := self.of(f["type"])))
            self.named[schema["name"]] = ("record", _record_hint(fields) if fields else None)
            return self.named[schema["name"]][1]
        if kind == "array":
            items = self.of(schema["items"])
            return None if items is None else lambda values: [items(value) for value in values]
        if kind == "map":
            self.of(schema["values"])  # its named types, for later references; map values are left to fastavro
        elif kind in ("enum", "fixed"):
            self.named[schema["name"]] = (kind, None)
        return None

    def union(self, branches: list) -> Hint | None:
        hints = [self.of(branch) for branch in branches]
        if len(branches) != 2 or branches[0] != "null":
            return None  # resolved by fastavro
        branch, inner = branches[1], hints[1]
        if isinstance(branch, str):
            name, kind = branch, self.named.get(branch, (branch,))[0]
        else:
            kind = "record" if branch["type"] == "error" else branch["type"]
            name = branch["name"] if kind in ("record", "enum", "fixed") else kind
        accepted = _HINTED.get(kind)
        if accepted is None:
            return None
        if inner is None:
            return lambda value: _NULL if value is None else (name, value) if isinstance(value, accepted) else value
        return lambda value: _NULL if value is None else (name, inner(value)) if isinstance(value, accepted) else value


def _record_hint(fields: tuple[tuple[str, Hint], ...]) -> Hint:
    def hinted(record):
        if not isinstance(record, dict):
            return record  # left to fastavro, which rejects it as before
        copy = dict(record)
        for name, hint in fields:
            if name in record:  # a missing field keeps its schema default
                copy[name] = hint(record[name])
        return copy

    return hinted


@dataclass
class WriteStats:
    records: int = 0
    parts: list[str] = field(default_factory=list)


class PartWriter:
    """Records written one at a time into part files of ``folder`` (numbered from ``first_part``, a new part every
    ``part_records``); a record that does not fit the schema is an error naming it (the caller's folder is then
    discarded whole). Use as a context manager: the last part is flushed on a clean exit."""

    def __init__(self, folder: FolderWriter, schema: dict, *, provider: str | None = None,
                 part_records: int = DEFAULT_PART_RECORDS, codec: tuple[str, int | None] | None = None,
                 first_part: int = 0):
        self.folder, self.schema, self.provider = folder, schema, provider
        self.part_records, self.first_part = part_records, first_part
        self.codec, self.level = codec or default_codec()
        self.stats = WriteStats()
        self._hints = union_hints(schema)
        self._handle = self._writer = None

    def write(self, record: dict) -> None:
        stats = self.stats
        if self._writer is None or stats.records % self.part_records == 0 and stats.records:
            self._close(flush=True)
            part = f"part-{self.first_part + len(stats.parts):05d}.avro"
            self._handle = self.folder.open(part)
            self._writer = Writer(self._handle, self.schema, codec=self.codec, compression_level=self.level,
                                  validator=False, sync_interval=SYNC_INTERVAL)
            stats.parts.append(part)
        try:
            self._writer.write(self._hints(record) if self._hints else record)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise IngestError(
                f"record does not fit {self.schema['name']}: {exc}",
                provider=self.provider,
                file=stats.parts[-1],
                record=str(record.get("id")) if isinstance(record, dict) else None,
            ) from exc
        stats.records += 1

    def close(self) -> WriteStats:
        """Flush the last part; what was written."""
        self._close(flush=True)
        return self.stats

    def abort(self) -> None:
        """Close the part being written without flushing it (its folder is being discarded)."""
        self._close(flush=False)

    def _close(self, flush: bool) -> None:
        try:
            if flush and self._writer is not None:
                self._writer.flush()
        finally:
            if self._handle is not None:
                self._handle.close()
            self._handle = self._writer = None

    def __enter__(self) -> "PartWriter":
        return self

    def __exit__(self, exc_type, *_exc) -> None:
        self._close(flush=exc_type is None)


def write_parts(folder: FolderWriter, schema: dict, records: Iterable[dict], **options) -> WriteStats:
    """Stream ``records`` into part files of ``folder`` (:class:`PartWriter`'s ``options``)."""
    with PartWriter(folder, schema, **options) as parts:
        for record in records:
            parts.write(record)
    return parts.stats


def restamp(source: BinaryIO, target: BinaryIO, schema: dict) -> None:
    """Copy the Avro container file ``source`` to ``target`` under ``schema`` (the same schema with another
    ``doc``: the activity and inputs it names), its data blocks byte for byte: nothing is decoded again."""
    header = fastavro.reader(source)
    if header.writer_schema["name"] != schema["name"]:
        raise ValueError(f"an Avro file of {header.writer_schema['name']} cannot be restamped as {schema['name']}")
    Writer(target, schema, codec=header.metadata.get("avro.codec", "null"), sync_marker=header._header["sync"],
           validator=False).flush()
    shutil.copyfileobj(source, target, COPY_BUFFER)


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
