"""The ``harvest: {type: file}`` block (:class:`FileHarvest`): its files, their limits, and its record paths, the
streamable XPaths the file harvester reads back as steps (:func:`record_path_steps`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from lxml import etree
from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from ingest_assets.core.registry.blocks import BaseHarvest, Block, HttpUrl, MiB, Positive, Text, one_as_list, problem

# A restricted, streamable XPath for file records: '/'- or '//'-separated QNames, *:names or *, no predicates.
RECORD_XPATH_RE = re.compile(r"^(//?(\*|(\*|[A-Za-z_][\w.\-]*):[A-Za-z_][\w.\-]*|[A-Za-z_][\w.\-]*))+$")
STEP_RE = re.compile(r"(//?)([^/]+)")


class FileBounds(Block):
    """Where a file harvest stops (``harvest.limits``): files and bytes as stored, what archives and gzip streams
    expand to (as :class:`ingest_assets.core.archives.Limits` reads them), one record's size, the whole run's time."""

    max_files: Positive = 10_000  # files (S3 objects, URLs) one run reads, delete lists included
    max_listed: Positive = 1_000_000  # entries a folder or S3 prefix listing may go through, matching or not
    max_file_bytes: Positive = 64 * 1024 * MiB  # one file as stored (compressed)
    max_bytes: Positive = 1024 * 1024 * MiB  # all the run's files together, as stored
    max_members: Positive = 100_000  # in one archive
    max_member_bytes: Positive = 1024 * MiB  # one archive member, or one gunzipped file, uncompressed
    max_total_bytes: Positive = 8 * 1024 * MiB  # one archive's members together, uncompressed
    max_ratio: Positive = 200  # uncompressed / compressed size (zip and gzip bombs)
    max_record_bytes: Positive = 64 * MiB  # one record as stored (a line, an element, an array item)
    max_minutes: Positive = 24 * 60  # the whole run

    @property
    def archive_limits(self) -> dict[str, int]:
        """The keyword arguments of :class:`ingest_assets.core.archives.Limits`."""
        return {"max_members": self.max_members, "max_member_bytes": self.max_member_bytes,
                "max_total_bytes": self.max_total_bytes, "max_ratio": self.max_ratio}


def _record_path(value: str, namespaces: Mapping[str, str]) -> str:
    """A streamable record path: ``|``-separated alternatives of ``/``- or ``//``-separated names, each ``name``
    (no namespace), ``prefix:name``, ``*:name`` (any namespace) or ``*`` (any element); no predicates."""
    for alternative in value.split("|"):
        if not RECORD_XPATH_RE.match(alternative.strip()):
            raise problem(f"{value!r}: only '/'- or '//'-separated names (prefix:name, *:name, *), alternatives "
                          "joined by '|', are supported (streamed)")
        for _axis, qname in STEP_RE.findall(alternative.strip()):
            prefix = qname.rpartition(":")[0]
            if prefix not in ("", "*") and prefix not in namespaces:
                raise problem(f"prefix {prefix!r} is not declared in harvest.namespaces")
    return value


def record_path_steps(value: str, namespaces: Mapping[str, str]) -> tuple[tuple[tuple[str, str | None, str], ...], ...]:
    """A validated record path as alternatives of ``(axis, namespace, local name)`` steps: axis ``child`` or
    ``descendant``, namespace None (none), ``*`` (any) or a URI, local name ``*`` for any element."""
    alternatives = []
    for alternative in value.split("|"):
        steps = []
        for axis, qname in STEP_RE.findall(alternative.strip()):
            prefix, _, local = qname.rpartition(":")
            namespace = "*" if qname == "*" or prefix == "*" else namespaces[prefix] if prefix else None
            steps.append(("descendant" if axis == "//" else "child", namespace, local))
        alternatives.append(tuple(steps))
    return tuple(alternatives)


def _compiles(value: str, namespaces: Mapping[str, str]) -> str:
    try:
        etree.XPath(value, namespaces=dict(namespaces))
    except etree.XPathError as exc:
        raise problem(f"invalid XPath {value!r}: {exc}") from exc
    return value


def _glob_list(value: Any) -> Any:
    """``include: '*.xml'`` is read as ``['*.xml']``."""
    return [value] if isinstance(value, str) else value


Globs = Annotated[list[Text], BeforeValidator(_glob_list), Field(min_length=1)]


class StatusRule(Block):
    """``status: {xpath: 'string(oai:header/@status)', values: [deleted], action: drop}``: a record whose status
    (XML records: ``xpath``; JSON: the dotted ``path``) is one of ``values`` (case aside) is dropped (``drop``,
    what ingestion3's file harvesters do) or kept as a deleted record (``delete``)."""

    xpath: Text | None = None
    path: Text | None = None
    values: Annotated[list[Text], Field(min_length=1)] = Field(default_factory=lambda: ["deleted"])
    action: Literal["drop", "delete"] = "drop"


class DeleteLists(Block):
    """``deletes: {include: 'NAC_DESC_Deletes_*.xml', id_element: '//*:naId'}``: XML files (or archive members)
    listing ids the source deleted (NARA's delete lists): each ``id_element``'s text is a deleted record. Read
    before the records, so a deletion wins over a record of the same id in the same delivery."""

    include: Globs
    id_element: Text = "//*:naId"


class FileHarvest(BaseHarvest):
    """``harvest: {type: file, path: /data/hub/, include: '*.xml.gz', format: xml, record_xpath: //oai:record,
    id_xpath: string(oai:header/oai:identifier), namespaces: {oai: "http://www.openarchives.org/OAI/2.0/"}}``

    The files: ``path`` (a local file or folder, or ``s3://bucket/prefix``) or ``urls`` (``url: x`` is read as
    ``urls: [x]``), those matching ``include``; each one plain, gzipped, a zip or a (compressed) tar, told by its
    content, archives' members matching ``members``. The records: ``format`` ``xml`` (elements at
    ``record_xpath``), ``xml-lines`` (one XML document per line), ``jsonl`` (one JSON record per line) or ``json``
    (the array at ``records_path``); the id at ``id_xpath`` / ``id_path``, or the file or member name
    (``id_from: name``), through ``id_pattern``. See docs/harvest-files.md."""

    type: Literal["file"]
    format: Literal["xml", "xml-lines", "jsonl", "json"]
    path: Text | None = None
    urls: list[HttpUrl] = Field(default_factory=list, validate_default=True)
    include: Globs = Field(default_factory=lambda: ["*"])
    members: Globs = Field(default_factory=lambda: ["*"])
    order: Literal["ascending", "descending"] = "ascending"  # the files by name: the first record of an id wins
    namespaces: dict[str, Text] = Field(default_factory=dict)
    record_xpath: Text | None = Field(default=None, validate_default=True)
    filter_xpath: Text | None = None  # XML: a record for which it is false is skipped (not an error)
    id_from: Literal["record", "name"] = "record"
    id_xpath: Text | None = Field(default=None, validate_default=True)
    records_path: Text | None = Field(default=None, validate_default=True)
    id_path: Text | None = Field(default=None, validate_default=True)
    id_pattern: Text | None = None  # a regular expression: its first group (else its match) is the id
    status: StatusRule | None = None
    deletes: DeleteLists | None = None
    delta: bool = False  # the files hold changes only: an incremental harvest (absent records are not deleted)
    limits: FileBounds = Field(default_factory=FileBounds)
    workers: Positive | None = None  # processes reading files at once (None: one per CPU; 1: in the harvest's process)

    @model_validator(mode="before")
    @classmethod
    def _one_url(cls, data: Any) -> Any:
        return one_as_list(data, "url", "urls")

    @field_validator("path")
    @classmethod
    def _s3_or_local(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme == "s3":
            if not S3_BUCKET_RE.fullmatch(parts.netloc) or parts.query or parts.fragment:
                raise problem(f"{value!r} is not s3://<bucket>/<prefix> with a valid bucket name")
        elif parts.scheme in ("http", "https"):
            raise problem("an http(s) source is given as url or urls")
        elif len(parts.scheme) > 1:
            raise problem(f"{value!r}: a local path or s3://bucket/prefix")
        return value

    @field_validator("urls")
    @classmethod
    def _one_source(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if (info.data.get("path") is None) == (not value):
            raise problem("give exactly one of path or url(s)")
        return value

    @field_validator("record_xpath")
    @classmethod
    def _streamable(cls, value: str | None, info: ValidationInfo) -> str | None:
        if not _is_xml(info):
            if value is not None:
                raise problem("only applies to XML records")
            return value
        if value is None:
            raise problem("is required for XML records")
        return _record_path(value, info.data.get("namespaces", {}))

    @field_validator("filter_xpath")
    @classmethod
    def _filter_compiles(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not _is_xml(info):
            raise problem("only applies to XML records")
        return value if value is None else _compiles(value, info.data.get("namespaces", {}))

    @field_validator("id_xpath")
    @classmethod
    def _id_compiles(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = _id_rule(value, info, xml=True)
        return value if value is None else _compiles(value, info.data.get("namespaces", {}))

    @field_validator("records_path")
    @classmethod
    def _json_document(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("format") == "json" and value is None:
            raise problem("is required with format: json ('[]': the document is an array; '.': it is one record)")
        if info.data.get("format") != "json" and value is not None:
            raise problem("only applies to format: json")
        return value

    @field_validator("id_path")
    @classmethod
    def _json_id(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _id_rule(value, info, xml=False)

    @field_validator("id_pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        try:
            return value if value is None else re.compile(value).pattern
        except re.error as exc:
            raise problem(f"invalid regular expression {value!r}: {exc}") from exc

    @field_validator("status")
    @classmethod
    def _status_fits(cls, value: StatusRule | None, info: ValidationInfo) -> StatusRule | None:
        if value is None:
            return value
        if _is_xml(info):
            if value.xpath is None or value.path is not None:
                raise problem("XML records give the status as xpath")
            _compiles(value.xpath, info.data.get("namespaces", {}))
        elif value.path is None or value.xpath is not None:
            raise problem("JSON records give the status as path")
        return value

    @field_validator("deletes")
    @classmethod
    def _deletes_path(cls, value: DeleteLists | None, info: ValidationInfo) -> DeleteLists | None:
        if value is not None:
            _record_path(value.id_element, info.data.get("namespaces", {}))
        return value

    @property
    def source(self) -> str:
        """The path, or the URL (the first of several, and how many)."""
        if self.path is not None:
            return self.path
        return self.urls[0] if len(self.urls) == 1 else f"{self.urls[0]} (and {len(self.urls) - 1} more URLs)"

    @property
    def is_xml(self) -> bool:
        return self.format in XML_FORMATS


XML_FORMATS = ("xml", "xml-lines")
S3_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")


def _is_xml(info: ValidationInfo) -> bool:
    return info.data.get("format") in XML_FORMATS


def _id_rule(value: str | None, info: ValidationInfo, *, xml: bool) -> str | None:
    """``id_xpath`` (XML) or ``id_path`` (JSON): required unless the id is the name, and only for its records."""
    if "format" not in info.data or _is_xml(info) != xml:
        if value is not None:
            raise problem(f"only applies to {'XML' if xml else 'JSON'} records")
        return value
    if value is None and info.data.get("id_from") == "record":
        raise problem(f"is required for {'XML' if xml else 'JSON'} records (or id_from: name)")
    if value is not None and info.data.get("id_from") == "name":
        raise problem("not with id_from: name")
    return value
