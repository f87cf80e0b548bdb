"""Ingestion 1 (legacy DPLA MAP 3.1) documents as ``dpla.avro.v1.MAP3_1.IndexRecord``: the specification's record
"for enriched records coming out of Ingestion 1 in JSON format, ready to be indexed into Elasticsearch".

An input is one MAP 3.1 document, an Elasticsearch hit holding one in ``_source`` (as the old index exported
them), or JSON lines of either. The IndexRecord is ``{"id": <the DPLA id>, "document": <the MAP 3.1 document as
compact JSON>}``: what goes into the index as is. A document without an ``id`` of 32 hex digits, an ``@id`` or a
``sourceResource`` is refused with a :class:`ValidationError` naming the file and line; the other lines go on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from itertools import chain
from typing import IO, Any

from ingest_assets.core import json_input
from ingest_assets.core.errors import IngestError, ParseError, ValidationError

LEGACY_INDEX_RECORD = "dpla.avro.v1.MAP3_1.IndexRecord"
DPLA_ID = re.compile(r"[0-9a-f]{32}")
MAX_LINE_BYTES = 16 * 1024 * 1024


def legacy_index_record(document: Any, *, file: str | None = None, record: str | None = None) -> dict[str, str]:
    """The IndexRecord of one MAP 3.1 document (or of the Elasticsearch hit holding it in ``_source``)."""
    source = document.get("_source", document) if isinstance(document, dict) else None
    if not isinstance(source, dict):
        raise ValidationError("not a MAP 3.1 document (a JSON object, or a hit with _source)", file=file, record=record)
    dpla_id = source.get("id")
    if not isinstance(dpla_id, str) or not DPLA_ID.fullmatch(dpla_id):
        raise ValidationError(f"the DPLA id must be 32 hex digits, got {dpla_id!r}", file=file, record=record)
    missing = [key for key in ("@id", "sourceResource") if not source.get(key)]
    if missing:
        raise ValidationError(f"MAP 3.1 document {dpla_id} has no {' or '.join(missing)}", file=file, record=dpla_id)
    return {"id": dpla_id, "document": json.dumps(source, ensure_ascii=False, separators=(",", ":"), sort_keys=True)}


def read_legacy_documents(stream: IO[bytes], *, file: str, errors: list[IngestError] | None = None) -> Iterator[dict]:
    """IndexRecords from JSON lines, streamed (a bad line goes to ``errors`` when given, else it is raised, and the
    others go on), or from one pretty-printed document (up to ``MAX_LINE_BYTES``)."""
    first = stream.readline(MAX_LINE_BYTES + 1)
    if first.strip() and not _one_object(first):  # not a whole object on its first line: one pretty-printed document
        data = first + stream.read(MAX_LINE_BYTES + 1 - len(first))
        if len(data) > MAX_LINE_BYTES:
            raise ParseError(f"document longer than {MAX_LINE_BYTES} bytes", file=file)
        yield legacy_index_record(_loads(data, file, None), file=file)
        return
    lines = chain([first], iter(partial(stream.readline, MAX_LINE_BYTES + 1), b""))
    for number, line in enumerate(lines, 1):
        try:
            if len(line) > MAX_LINE_BYTES:
                while line and not line.endswith(b"\n"):  # skip to the end of the long line
                    line = stream.readline(MAX_LINE_BYTES + 1)
                raise ParseError(f"line longer than {MAX_LINE_BYTES} bytes", file=file, record=f"line {number}")
            if line.strip():
                yield legacy_index_record(_loads(line, file, f"line {number}"), file=file, record=f"line {number}")
        except IngestError as exc:
            if errors is None:
                raise
            errors.append(exc)


def _one_object(line: bytes) -> bool:
    try:
        json_input.loads(line)
    except ValueError:
        return False
    return True


def _loads(data: bytes, file: str, record: str | None) -> Any:
    try:
        return json_input.loads(data)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}", file=file, record=record) from exc
