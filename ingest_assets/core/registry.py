"""The provider registry: one YAML file, provider name -> settings, every key typed.

What keys an entry can have is :class:`EntrySettings`: the record pipeline's (:class:`RecordSettings`, its
``harvest:`` one of :data:`HarvestBlock`), linked data's (:class:`LinkedDataSettings`), ``repository:``
(:class:`RepositoryBlock`), ``resourcesync:`` (:class:`ResourceSyncBlock`) and ``datasets:``
(:class:`DatasetsBlock`). Every model is a
:class:`Block`: strict types (a quoted ``"false"`` is not a boolean, ``lots`` is not a number) and unknown
keys refused. An entry is checked whole when it is made (:class:`ProviderEntry`); the first problem is a
ConfigError naming entry, key (``maryland.harvest.metadata_prefix``) and file. A refused entry stops only itself
(:attr:`Registry.problems`); a file that does not parse can fall back to its last good copy (:func:`load_registry`). Capabilities read
``entry.settings`` (typed) and ``entry.require(key)`` for a key they cannot do without.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol
from urllib.parse import urlsplit

import yaml
from lxml import etree
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.modified import parse_modified

# lowercase letters and digits, '-' between them (ingestion3's northwest-heritage): a folder, a graph IRI, an index
# name, a partition key, a Dagster tag and a file-name part, each of which reads it back by this pattern
NAME_PATTERN = r"[a-z0-9]+(?:-[a-z0-9]+)*"
NAME_RE = re.compile(NAME_PATTERN)
MAX_NAME_LENGTH = 64
# names no provider may take: ResourceSync's sets of whole capabilities (resourcesync/config.py's CAPABILITY_SETS),
# which share the provider sets' namespace
RESERVED_NAMES = frozenset({"repository-objects", "dataset-files", "linked-data"})
# the key whose presence makes an entry a provider of each partitioned capability
CAPABILITY_KEYS = {"records": "harvest", "linked_data": "void", "repository": "repository"}
MiB = 1024 * 1024
# A restricted, streamable XPath for file records: '/'- or '//'-separated QNames, *:names or *, no predicates.
RECORD_XPATH_RE = re.compile(r"^(//?(\*|(\*|[A-Za-z_][\w.\-]*):[A-Za-z_][\w.\-]*|[A-Za-z_][\w.\-]*))+$")
STEP_RE = re.compile(r"(//?)([^/]+)")
DURATION_RE = re.compile(r"(\d+)\s*([mhd])")
DURATION_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
EMAIL_RE = re.compile(r"[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+")


def problem(reason: str) -> PydanticCustomError:
    """A validator's refusal, worded as given (reported like pydantic's own errors)."""
    return PydanticCustomError("config", "{reason}", {"reason": reason})


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise problem(f"must be an http(s) URL, got {value!r}")
    return value


def _moment(value: Any) -> Any:
    """``2009-01-01`` (YAML's date) or ISO text -> datetime, as ``datetime.fromisoformat`` reads it."""
    if isinstance(value, datetime) or not isinstance(value, (date, str)):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise problem(f"{value!r} is not a date or datetime") from exc


def _modified(value: Any) -> Any:
    """A registry ``modified`` as an aware UTC datetime (``""``: none)."""
    if value == "":
        return None
    try:
        return parse_modified(value) if isinstance(value, (date, str)) else value
    except ValueError as exc:
        raise problem(f"{value!r} is not a date or datetime") from exc


Text = Annotated[str, Field(min_length=1)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
Positive = Annotated[int, Field(gt=0)]
Param = Annotated[str | int | float, AfterValidator(str)]  # a query parameter, sent as text


class Block(BaseModel):
    """The base of every registry model: strict types, unknown keys refused, read-only."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# ---- record harvest (``harvest:``) -------------------------------------------------------------------------

class PageBounds(Block):
    """Where a paged harvest stops even if the source never ends its list (``harvest.bounds``)."""

    max_pages: Positive = 100_000
    max_minutes: Positive = 24 * 60
    max_stale_pages: Positive = 20  # consecutive pages that bring no record not yet seen in this run


def _one_as_list(data: Any, one: str, many: str) -> Any:
    """A block's ``one: x`` read as ``many: [x]`` (giving both is refused)."""
    if isinstance(data, dict) and one in data:
        if many in data:
            raise problem(f"give {one} or {many}, not both")
        data = {key: value for key, value in data.items() if key != one} | {many: [data[one]]}
    return data


class _Harvest(Block):
    allow_private: bool = False  # may reach loopback/private addresses
    full: bool = False  # always a full harvest: no date window
    # ``delivery: private``: a shipped hub's block whose source only the hub knows (files sent to DPLA, an endpoint
    # or query kept in ingestion3's private configuration); ``fill_in`` names each placeholder key (dotted below
    # ``harvest``) and what goes there. An operator's registry refuses the entry until both keys are gone.
    delivery: Literal["public", "private"] = "public"
    fill_in: dict[Text, Text] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _placeholders_named(self) -> _Harvest:
        if (self.delivery == "private") != bool(self.fill_in):
            raise problem("delivery: private and fill_in (each placeholder key: what goes there) come together")
        for key in self.fill_in:
            node: Any = self
            for part in key.split("."):
                node = node.get(part) if isinstance(node, Mapping) else getattr(node, part, None)
            if node is None:
                raise problem(f"fill_in names {key!r}, which the block does not hold")
        return self

    def placeholder(self) -> tuple[str, str] | None:
        """The first placeholder key and what goes there, for a ``delivery: private`` block."""
        return next(iter(self.fill_in.items()), None)


class OaiHarvest(_Harvest):
    """``harvest: {type: oai, endpoint: https://host/oai, metadata_prefix: mods, sets: [botanicals, maps]}``

    Which sets (ingestion3's ``setlist`` / ``harvestAllSets`` / ``blacklist``): ``sets`` (``set: x`` is read as
    ``sets: [x]``), or ``all_sets: true`` (every set ``ListSets`` names) less ``exclude_sets``; neither: the
    whole repository in one list."""

    type: Literal["oai"]
    endpoint: HttpUrl
    metadata_prefix: Text = "oai_dc"
    sets: list[Text] = Field(default_factory=list)
    all_sets: bool = False
    exclude_sets: list[Text] = Field(default_factory=list)
    max_page_bytes: Positive = 64 * MiB
    bounds: PageBounds = Field(default_factory=PageBounds)

    @model_validator(mode="before")
    @classmethod
    def _one_set(cls, data: Any) -> Any:
        return _one_as_list(data, "set", "sets")

    @field_validator("sets")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise problem("lists a set twice")
        return value

    @field_validator("all_sets")
    @classmethod
    def _sets_or_all(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("sets"):
            raise problem("give sets or all_sets, not both")
        return value

    @field_validator("exclude_sets")
    @classmethod
    def _with_all_sets(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if value and not info.data.get("all_sets"):
            raise problem("only applies to all_sets: true")
        return value


ENV_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"


class SecretRef(Block):
    """A secret the registry names but never holds: ``{env: NAME}`` (an environment variable) or
    ``{file: /run/secrets/name}`` (an absolute path; its content, surrounding whitespace dropped). The value is
    read when the harvest starts (:mod:`ingest_assets.core.secrets`) and redacted from everything written."""

    env: Annotated[str, Field(pattern=ENV_NAME_RE)] | None = None
    file: Text | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise problem("a secret is {env: NAME} or {file: /path}, one of them")
        if self.file is not None and not self.file.startswith("/"):
            raise problem(f"a secrets file is an absolute path, got {self.file!r}")
        return self


def _secret_or_value(value: Any) -> Any:
    """A mapping is a :class:`SecretRef` (its own clear error when it is not one); anything else stays a value."""
    if not isinstance(value, Mapping):
        return value
    if len(value) != 1 or not set(value) <= {"env", "file"}:
        raise problem(f"a secret is {{env: NAME}} or {{file: /path}} (given keys {sorted(map(str, value))})")
    try:
        return SecretRef(**value)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(map(str, error["loc"]))
        raise problem(f"{where + ': ' if where else ''}{error['msg']}") from None


ParamValue = Param | list[Param]  # a list: the parameter repeated (Primo's query_exc)
SecretParam = Annotated[ParamValue | SecretRef, BeforeValidator(_secret_or_value)]
SecretHeader = Annotated[Text | SecretRef, BeforeValidator(_secret_or_value)]


class Paging(Block):
    """How an API pages: ``cursor`` (a token from the answer), ``offset`` (records skipped), ``page`` (a page
    number) or ``next`` (a link). ``first``: the first offset (default 0) or page number (default 1)."""

    style: Literal["cursor", "offset", "page", "next"]
    cursor_param: Text = "cursor"
    cursor_path: Text | None = Field(default=None, validate_default=True)
    initial_cursor: Text | None = None
    offset_param: Text = "offset"
    page_param: Text = "page"
    limit_param: Text = "limit"
    page_size: Positive = 100
    first: Annotated[int, Field(ge=0)] | None = None
    total_path: Text | None = None  # the number of records of the list (offset, page)
    ends_on_short_page: bool = False  # offset, page: a page of fewer than page_size records is the last
    next_path: Text | None = None  # None: the HTTP ``Link: <...>; rel="next"`` header

    @field_validator("cursor_path")
    @classmethod
    def _cursor_needs_a_path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("style") == "cursor":
            raise problem("is required with style: cursor")
        return value

    @property
    def start(self) -> int:
        """The first offset or page number."""
        return self.first if self.first is not None else int(self.style == "page")


class ApiBounds(PageBounds):
    """:class:`PageBounds` and the records one run may bring (``harvest.bounds.max_records``)."""

    max_records: Positive = 50_000_000


class ItemLinks(Block):
    """``items: {format: json, params: {fo: json, at: item}, url_pattern: 'www\\.loc\\.gov/item/'}``: each value
    ``records_path`` selects is the link to one record, fetched on its own (LOC's sitemap of item pages);
    ``params`` replace the link's query; links ``url_pattern`` does not find are skipped."""

    format: Literal["json", "xml"] = "json"
    params: dict[str, ParamValue] = Field(default_factory=dict)
    url_pattern: Text | None = None
    max_bytes: Positive = 16 * MiB

    @field_validator("url_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        try:
            re.compile(value or "")
        except re.error as exc:
            raise problem(f"invalid pattern {value!r}: {exc}") from exc
        return value


SET_PLACEHOLDER = "{set}"


class ApiHarvest(_Harvest):
    """``harvest: {type: api, endpoint: https://host/api/items, records_path: data, id_path: id,
    params: {q: "*", apikey: {env: HUB_API_KEY}}, paging: {style: cursor, cursor_param: cursor, cursor_path: meta.next}}``

    ``format`` says how pages are read: ``json`` (``records_path``, ``id_path`` and the paging paths are dotted
    paths) or ``xml`` (XPaths, prefixes from ``namespaces``); ``id_path`` reads a record, in the format of the
    ``items`` when records are fetched one by one. ``sets``: one list per value, put where the endpoint or a
    parameter says ``{set}``. A parameter or header may be a :class:`SecretRef`."""

    type: Literal["api"]
    endpoint: HttpUrl
    format: Literal["json", "xml"] = "json"
    namespaces: dict[str, Text] = Field(default_factory=dict)
    items: ItemLinks | None = None
    records_path: Text
    id_path: Text
    error_path: Text | None = None  # where a page that answers 200 says it failed (Primo's ERROR/@MESSAGE)
    paging: Paging
    params: dict[str, SecretParam] = Field(default_factory=dict)
    headers: dict[str, SecretHeader] = Field(default_factory=dict)
    sets: list[Text] = Field(default_factory=list, validate_default=True)
    max_page_bytes: Positive = 64 * MiB
    bounds: ApiBounds = Field(default_factory=ApiBounds)

    @field_validator("records_path", "error_path")
    @classmethod
    def _page_xpath(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("format") == "xml":
            _check_xpath(value, info.data.get("namespaces", {}))
        return value

    @field_validator("id_path")
    @classmethod
    def _record_xpath(cls, value: str, info: ValidationInfo) -> str:
        items = info.data.get("items")
        if (items.format if items else info.data.get("format")) == "xml":
            _check_xpath(value, info.data.get("namespaces", {}))
        return value

    @field_validator("paging")
    @classmethod
    def _paging_xpaths(cls, value: Paging, info: ValidationInfo) -> Paging:
        if info.data.get("format") == "xml":
            for key in ("cursor_path", "next_path", "total_path"):
                if getattr(value, key):
                    _check_xpath(getattr(value, key), info.data.get("namespaces", {}), key)
        return value

    @field_validator("sets")
    @classmethod
    def _sets_placed(cls, value: list[str], info: ValidationInfo) -> list[str]:
        placed = SET_PLACEHOLDER in info.data.get("endpoint", "") or any(
            SET_PLACEHOLDER in param for param in info.data.get("params", {}).values() if isinstance(param, str))
        if value and not placed:
            raise problem("put {set} in the endpoint or a parameter, where each set goes")
        if placed and not value:
            raise problem("the endpoint or a parameter says {set}: list the sets")
        if len(set(value)) != len(value):
            raise problem("lists a set twice")
        return value


def _check_xpath(path: str, namespaces: Mapping[str, str], key: str | None = None) -> None:
    """A ConfigError unless ``path`` compiles and its prefixes are declared (run once on an empty element: lxml
    finds an undeclared prefix only when evaluating)."""
    try:
        etree.XPath(path, namespaces=dict(namespaces))(etree.Element("empty"))
    except etree.XPathError as exc:
        raise problem(f"{key + ': ' if key else ''}invalid XPath {path!r}: {exc}") from exc


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


class FileHarvest(_Harvest):
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

    @model_validator(mode="before")
    @classmethod
    def _one_url(cls, data: Any) -> Any:
        return _one_as_list(data, "url", "urls")

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


class ResourceSyncHarvest(_Harvest):
    """``harvest: {type: resourcesync, url: https://host/.well-known/resourcesync}``: a Source Description
    naming one Capability List, or a Capability List (its Resource List, then its Change Lists)."""

    type: Literal["resourcesync"]
    url: HttpUrl
    max_list_bytes: Positive = 64 * MiB  # one sitemap (list or index)
    max_resource_bytes: Positive = 64 * MiB
    max_resources: Positive = 1_000_000  # per run
    max_attempts: Positive = 5  # runs that try a resource whose fetch or check failed before it is given up
    bounds: PageBounds = Field(default_factory=PageBounds)  # max_pages: sitemaps fetched per run


HarvestBlock = Annotated[
    OaiHarvest | ApiHarvest | FileHarvest | ResourceSyncHarvest, Field(discriminator="type")
]


# ---- the record pipeline's other keys -----------------------------------------------------------------------

class QualityBlock(Block):
    max_count_drop: float = Field(default=0.15, ge=0, le=1)
    max_failure_rate: float = Field(default=0.20, ge=0, le=1)
    # how far a new search index may fall short of the one it replaces; None: INGEST_INDEX_TOLERANCE (2%)
    index_count_tolerance: float | None = Field(default=None, ge=0, le=1)


def _duration(value: Any) -> Any:
    """``48h``, ``2d``, ``90m`` -> timedelta; ``never`` -> None (only an explicit approval publishes)."""
    if value == "never":
        return None
    match = DURATION_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None or not int(match[1]):
        raise problem(f"must be a positive duration such as 48h, 2d or 90m, or never (given {value!r})")
    return timedelta(**{DURATION_UNITS[match[2]]: int(match[1])})


def _addresses(value: Any) -> Any:
    """``contact: a@x.org`` is read as ``[a@x.org]``; each address must look like one."""
    values = [value] if isinstance(value, str) else value
    if isinstance(values, list):
        for address in values:
            if not isinstance(address, str) or not EMAIL_RE.fullmatch(address):
                raise problem(f"{address!r} is not an e-mail address")
    return values


class ReviewBlock(Block):
    """``review: {required: true, auto_approve_after: 48h}``: each new day of the provider is held after
    enrichment until approved (``ingest-assets review``, the UI, or the window expiring)."""

    required: bool = False
    auto_approve_after: Annotated[timedelta | None, BeforeValidator(_duration)] = timedelta(hours=48)


class ScheduleBlock(Block):
    cron: str = "0 2 * * *"
    timezone: str = "UTC"


# The steps of the enrichment chain (``records/enrichment/data/chain.yaml``), in chain order: the names a
# provider's ``enrichment.skip`` may hold.
EnrichmentStep = Literal[
    "deduplicate", "strip_html", "reduce_whitespace", "cleanup_leading_punctuation", "cleanup_ending_punctuation",
    "strip_ending_period", "capitalize_first_char", "strip_dbl_quotes", "cleanup_geocoordinates", "format_blocklist",
    "rights_uri", "wikidata", "data_provider_uri", "dates", "language", "type", "tags",
]
ENRICHMENT_STEPS: tuple[str, ...] = EnrichmentStep.__args__


class EnrichmentBlock(Block):
    """How a provider's records are enriched (``enrichment:``): ingestion3's chain less the ``skip``ped steps
    (``skip: [strip_ending_period]`` keeps final periods on names and subjects); dates read by ingestion3's
    ``date_builder`` (years and year ranges) or its ``parse_date`` (EDTF and calendar dates, intervals)."""

    skip: list[EnrichmentStep] = Field(default_factory=list)
    dates: Literal["date_builder", "parse_date"] = "date_builder"


class RecordSettings(Block):
    """The record pipeline's keys (harvest, mapping, quality checks, refresh schedule, engine, enrichment, review
    before publishing, the contacts its reports are mailed to and the folder of its JSON-L exports)."""

    harvest: HarvestBlock | None = None
    mapping: Text | None = None  # a profile's name, or a profile file (relative to this registry file)
    # field -> rule, or a list of rules, or null (off); checked with the profile by the record capability's
    # check of a loaded registry (``records.mapping.check_registry``)
    mapping_overrides: dict[str, dict[str, Any] | list[dict[str, Any]] | None] = Field(default_factory=dict)
    provider_uri: HttpUrl | None = None  # the hub's URI the records carry, over the profile's
    # the key DPLA ids are minted with, over the profile's: md5('<id_prefix>--<local id>'); false: md5('<local id>')
    id_prefix: Annotated[str, Field(pattern=r"^\S+$")] | Literal[False] | None = None
    quality: QualityBlock = Field(default_factory=QualityBlock)
    enrichment: EnrichmentBlock = Field(default_factory=EnrichmentBlock)
    schedule: ScheduleBlock | Literal[False] = Field(default_factory=ScheduleBlock)  # false: no automatic refresh
    engine: Literal["in-process", "spark", "auto"] | None = None
    engine_threshold: Positive | None = None
    review: ReviewBlock = Field(default_factory=ReviewBlock)  # off by default
    contact: Annotated[list[str], BeforeValidator(_addresses)] = Field(default_factory=list)  # who gets the report
    # the folder of the hub's JSON-L exports under INGEST_JSONL_ROOT (DPLA's S3 prefix: hathi -> hathitrust); None:
    # the provider's name
    s3_prefix: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")] | None = None


# ---- linked data -------------------------------------------------------------------------------------------

class LinkedDataSettings(Block):
    """Linked data's keys: the VoID to follow, the registry's ``modified`` baseline and the dump limits."""

    void: Text | None = None
    modified: Annotated[datetime | None, BeforeValidator(_modified)] = None  # aware UTC
    allow_private: bool = False
    max_dump_bytes: Positive = 16 << 30


# ---- ResourceSync (``resourcesync:``) -----------------------------------------------------------------------

class ResourceSyncBlock(Block):
    """``resourcesync: {url_prefix: https://..., root: /srv/files/x, publish_outputs: true}`` (all optional)."""

    url_prefix: Text | None = None
    root: Text | None = None
    publish_outputs: bool = False


# ---- dataset ingest (``datasets:``) -------------------------------------------------------------------------

class DatasetsBlock(Block):
    """``datasets: {platform: zenodo, hosts: [data.example.org], allow_private: false}``: a dataset platform the hub
    reaches on hosts of its own (an InvenioRDM, Figshare or archive.org instance, a Dataverse). Its ``hosts``
    (``name`` or ``name:port``) are recognised as the platform's; with ``allow_private`` those hosts, and only
    they, may resolve to private addresses."""

    platform: Literal["zenodo", "figshare", "archiveorg", "dataverse"]
    hosts: Annotated[list[Text], Field(min_length=1)]
    allow_private: bool = False


# ---- repository (``repository:``) --------------------------------------------------------------------------

class RepositoryBlock(Block):
    """The source is ``template_index``, or ``wiki_api`` / ``wiki_export`` with ``base_url``."""

    template_index: Text | None = None
    wiki_api: Text | None = None
    wiki_export: Text | None = None
    base_url: Text | None = None
    default_language: Text = "en"
    wiki_languages: dict[str, str] = Field(default_factory=dict)
    max_ingest_hours: float = Field(default=24, gt=0)
    vocabularies: Text | None = None
    start: Annotated[datetime | None, BeforeValidator(_moment)] = None
    wiki_user_env: Text | None = None
    wiki_password_env: Text | None = None

    @model_validator(mode="after")
    def _has_a_source(self) -> RepositoryBlock:
        if not self.source:
            raise problem("needs template_index, or wiki_api or wiki_export with base_url")
        return self

    @property
    def source(self) -> str | None:
        wiki = self.wiki_api or self.wiki_export
        return self.template_index or (wiki if self.base_url else None)


class EntrySettings(RecordSettings, LinkedDataSettings):
    """Every key a registry entry may hold, with its type (YAML's own: ``true``, ``2015-06-01``, ``0.2``)."""

    label: str | None = None
    repository: RepositoryBlock | None = None
    resourcesync: ResourceSyncBlock | None = None
    datasets: DatasetsBlock | None = None


def key_error(provider: str, key: str, message: str, file: str | None = None) -> ConfigError:
    """The one wording of a registry problem: entry, dotted key (``maryland.harvest.path``), reason, and the file (the
    registry's, or what the key names when a run finds it unusable: an S3 prefix without credentials)."""
    return ConfigError(f"registry key {key!r}: {message}", provider=provider, file=file)


def _key(error: Mapping[str, Any], data: Any) -> list[str]:
    """The YAML path of ``error``: its location without pydantic's union branches (tags, type names)."""
    path, node, loc = [], data, error["loc"]
    for number, part in enumerate(loc):
        if isinstance(node, Mapping) and part in node:
            path.append(str(part))
            node = node[part]
        elif isinstance(node, Mapping) and number == len(loc) - 1 and error["type"] in ("missing", "config"):
            path.append(str(part))  # a key that is absent
    return path


class ProviderEntry:
    """One registry entry: its name, its file and its settings, checked here (:class:`EntrySettings`)."""

    def __init__(self, name: str, settings: Mapping[str, Any] | None = None, source: str = "<memory>"):
        self.name, self.source = name, source
        try:
            self.settings = EntrySettings.model_validate(dict(settings or {}))
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join([name, *_key(error, settings)])
            if error["type"] == "extra_forbidden":
                message = "unknown key"
            elif error["type"] in ("missing", "config") or isinstance(error["input"], Mapping):
                message = error["msg"]
            else:
                message = f"{error['msg']} (given {error['input']!r})"
            raise self.error(key, message) from None

    @property
    def label(self) -> str:
        return self.settings.label or self.name

    def error(self, key: str, message: str) -> ConfigError:
        """The one wording of a registry problem: entry, dotted key, reason (and the file)."""
        return key_error(self.name, key, message, self.source)

    def require(self, key: str) -> Any:
        """The typed value of ``key``, which this use of the entry cannot do without."""
        value = getattr(self.settings, key)
        if value is None:
            raise self.error(f"{self.name}.{key}", "is missing")
        return value

    def has(self, key: str) -> bool:
        """Whether the entry's YAML gives ``key``."""
        return key in self.settings.model_fields_set


class Registry(Mapping[str, ProviderEntry]):
    """The entries that loaded, by name. An entry the file holds but that was refused is not among them: it is in
    :attr:`problems` (name -> its ConfigError), and asking for it raises that error, so one bad entry stops only
    itself. :attr:`stale` is set when the file itself could not be read and this is the last good copy of it."""

    def __init__(self, entries: Mapping[str, ProviderEntry], source: str = "<memory>",
                 problems: Mapping[str, ConfigError] | None = None, stale: ConfigError | None = None):
        self._entries = dict(entries)
        self.source = source
        self.problems: dict[str, ConfigError] = dict(problems or {})
        self.stale = stale

    def refuse(self, name: str, error: ConfigError) -> None:
        """Move a loaded entry to :attr:`problems` (a capability's own check of it failed: a mapping rule that
        does not compile); the other entries are not affected."""
        self._entries.pop(name, None)
        self.problems[name] = error

    def __getitem__(self, name: str) -> ProviderEntry:
        if name in self._entries:
            return self._entries[name]
        if name in self.problems:
            refused = self.problems[name]
            raise ConfigError(refused.message, provider=refused.provider, file=refused.file,
                              hint=f"{refused.hint or 'fix this entry'}; the other entries are not affected")
        raise ConfigError(f"provider {name!r} is not in the registry", provider=name, file=self.source,
                          hint=f"known providers: {', '.join(sorted(self._entries)) or 'none'}")

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def providers_with(self, key: str) -> list[ProviderEntry]:
        return [entry for entry in self._entries.values() if entry.has(key)]

    def providers_of(self, capability: str) -> list[str]:
        """Names of the entries that carry ``capability``'s block (see :data:`CAPABILITY_KEYS`)."""
        return sorted(entry.name for entry in self.providers_with(CAPABILITY_KEYS[capability]))


def parse_registry(data: Any, source: str = "<memory>", *, shipped: bool = False) -> Registry:
    """Validate parsed YAML: a mapping of provider names (:data:`NAME_PATTERN`) to mappings of settings. A file that
    is not such a mapping is a ConfigError; an entry that breaks a rule is refused into :attr:`Registry.problems`,
    and so is one whose harvest still holds a placeholder (``delivery: private``) unless the file is ``shipped``:
    the package's registry of hubs, whose private deliveries only the hub can fill in."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError("the registry must map provider names to settings", file=source)
    entries: dict[str, ProviderEntry] = {}
    problems: dict[str, ConfigError] = {}
    for name, settings in data.items():
        try:
            entries[name] = _entry(name, settings, source)
            if not shipped:
                _filled_in(entries[name])
        except ConfigError as exc:
            entries.pop(name, None)
            problems[str(name)] = exc
    return Registry(entries, source, problems)


def _entry(name: Any, settings: Any, source: str) -> ProviderEntry:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ConfigError(
            f"registry entry {name!r}: provider names are lowercase letters and digits, '-' between them, at most "
            f"{MAX_NAME_LENGTH} characters (they become folder, graph and index names)",
            provider=str(name),
            file=source,
        )
    if name in RESERVED_NAMES:
        raise ConfigError(f"registry entry {name!r}: the name of one of ResourceSync's capability sets, no provider's "
                          f"(reserved: {', '.join(sorted(RESERVED_NAMES))})", provider=name, file=source)
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        raise ConfigError(f"registry entry {name!r} must be a mapping of settings", provider=name, file=source)
    return ProviderEntry(name, settings, source)


def _filled_in(entry: ProviderEntry) -> None:
    """A ConfigError for an entry copied from the shipped hubs whose harvest still waits for the hub's location."""
    harvest = entry.settings.harvest
    placeholder = harvest.placeholder() if harvest is not None else None
    if placeholder is not None:
        key, what = placeholder
        raise ConfigError(f"registry key {entry.name + '.harvest.' + key!r}: needs your delivery location: {what}",
                          provider=entry.name, file=entry.source,
                          hint="put your own value there, then remove harvest.delivery and harvest.fill_in")


class LastGood(Protocol):
    """Where the text of the last registry file that loaded is kept (:func:`load_registry`)."""

    def read(self) -> str | None: ...

    def write(self, text: str) -> None: ...


def load_registry(path: str | Path, last_good: LastGood | None = None) -> Registry:
    """The registry file at ``path``. With ``last_good``: each file that loads is kept there, and a file that can
    no longer be read or parsed yields the kept copy with :attr:`Registry.stale` saying why (the hub keeps
    running on it); without a kept copy the error is raised."""
    path = Path(path)
    try:
        text = _read(path)
        registry = parse_registry(_yaml(text, path), str(path))
    except ConfigError as exc:
        kept = last_good.read() if last_good else None
        if kept is None:
            raise
        registry = parse_registry(yaml.safe_load(kept), str(path))
        registry.stale = exc
        return registry
    if last_good and last_good.read() != text:
        last_good.write(text)
    return registry


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("registry file not found", file=str(path), hint="set INGEST_REGISTRY to the registry file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"registry file cannot be read: {exc}", file=str(path)) from None


def _yaml(text: str, path: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"registry is not valid YAML: {getattr(exc, 'problem', None) or exc}{where}", file=str(path),
                          hint="fix the YAML there") from None
