"""The registry's ``harvest:`` block, validated into one small dataclass per harvester type.

Examples (YAML)::

    harvest: {type: oai, endpoint: https://host/oai, metadata_prefix: mods, set: botanicals}
    harvest: {type: api, endpoint: https://host/api/items, records_path: data, id_path: id,
              params: {q: "*"}, paging: {style: cursor, cursor_param: cursor, cursor_path: meta.next}}
    harvest: {type: file, path: /data/dump.zip, format: zip, member_format: xml,
              record_xpath: //oai:record, id_xpath: string(oai:header/oai:identifier),
              namespaces: {oai: "http://www.openarchives.org/OAI/2.0/"}}

Every type also takes ``allow_private`` (may reach loopback/private addresses) and ``full`` (always a
full harvest: no date window). Unknown keys are refused (a typo must not silently change a harvest).
Every error is a :class:`ConfigError` naming the provider and the key (``harvest.paging.style``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from ingest_assets.errors import ConfigError
from ingest_assets.registry import ProviderEntry

MiB = 1024 * 1024
# A restricted, streamable XPath for file records: '/'- or '//'-separated QNames, no predicates.
RECORD_XPATH_RE = re.compile(r"^(//?[A-Za-z_][\w.\-]*(:[A-Za-z_][\w.\-]*)?)+$")
STEP_RE = re.compile(r"(//?)([^/]+)")


@dataclass(frozen=True)
class PageBounds:
    """Where a paged harvest stops even if the source never ends its list (``harvest.bounds``)."""

    max_pages: int = 100_000
    max_minutes: int = 24 * 60
    max_stale_pages: int = 20  # consecutive pages that bring no record not yet seen in this run


@dataclass(frozen=True)
class OaiConfig:
    endpoint: str
    metadata_prefix: str = "oai_dc"
    set: str | None = None
    allow_private: bool = False
    max_page_bytes: int = 64 * MiB
    full: bool = False
    bounds: PageBounds = field(default_factory=PageBounds)


@dataclass(frozen=True)
class Paging:
    """How a JSON API pages: ``cursor`` (token from the response), ``offset`` or ``next`` (a link)."""

    style: str
    cursor_param: str = "cursor"
    cursor_path: str | None = None
    initial_cursor: str | None = None
    offset_param: str = "offset"
    limit_param: str = "limit"
    page_size: int = 100
    total_path: str | None = None
    next_path: str | None = None  # None: the HTTP ``Link: <...>; rel="next"`` header


@dataclass(frozen=True)
class ApiConfig:
    endpoint: str
    records_path: str
    id_path: str
    paging: Paging
    params: Mapping[str, str] = field(default_factory=dict)
    allow_private: bool = False
    max_page_bytes: int = 64 * MiB
    full: bool = False
    bounds: PageBounds = field(default_factory=PageBounds)


@dataclass(frozen=True)
class ZipLimits:
    max_members: int = 100_000
    max_member_bytes: int = 1024 * MiB
    max_total_bytes: int = 8 * 1024 * MiB
    max_ratio: int = 200  # uncompressed / compressed size of one member (zip bombs)


@dataclass(frozen=True)
class FileConfig:
    format: str
    path: str | None = None
    url: str | None = None
    member_format: str | None = None
    members: str = "*"
    record_steps: tuple[tuple[str, str], ...] = ()  # parsed record_xpath: (axis, Clark name)
    record_xpath: str | None = None
    id_xpath: etree.XPath | None = None
    id_path: str | None = None
    namespaces: Mapping[str, str] = field(default_factory=dict)
    limits: ZipLimits = field(default_factory=ZipLimits)
    allow_private: bool = False
    full: bool = False

    @property
    def source(self) -> str:
        return self.path or self.url or ""

    @property
    def records_format(self) -> str:
        """``xml`` or ``jsonl``: the format of the file itself or of the zip's members."""
        return self.member_format if self.format == "zip" else self.format


HarvestConfig = OaiConfig | ApiConfig | FileConfig


class _Block:
    """Typed access to one mapping of the registry, raising ConfigError with the key's full name."""

    def __init__(self, provider: str, prefix: str, data: Mapping[str, Any], allowed: set[str]):
        self.provider, self.prefix, self.data = provider, prefix, data
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise self.error(unknown[0], f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def error(self, key: str, reason: str) -> ConfigError:
        return ConfigError(f"{self.prefix}.{key}: {reason}", provider=self.provider)

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(key, "is required")
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() == "":
            raise self.error(key, f"must be a non-empty string, got {value!r}")
        return str(value)

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self.text(key, default, required=default is None)
        if value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def integer(self, key: str, default: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(key, f"must be a positive integer, got {value!r}")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def url(self, key: str, *, required: bool = True) -> str | None:
        value = self.text(key, required=required)
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise self.error(key, f"must be an http(s) URL, got {value!r}")
        return value

    def mapping(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key) or {}
        if not isinstance(value, Mapping):
            raise self.error(key, "must be a mapping")
        return value

    def sub(self, key: str, allowed: set[str]) -> _Block:
        return _Block(self.provider, f"{self.prefix}.{key}", self.mapping(key), allowed)


def parse_harvest_config(provider: ProviderEntry) -> HarvestConfig:
    """Validate ``provider``'s ``harvest:`` block."""
    data = provider.block("harvest")
    if not data:
        raise ConfigError("harvest: block is missing", provider=provider.name)
    kind = _Block(provider.name, "harvest", {"type": data.get("type")}, {"type"}).choice(
        "type", ("oai", "api", "file")
    )
    return {"oai": _oai, "api": _api, "file": _file}[kind](provider.name, data)


def _oai(name: str, data: Mapping[str, Any]) -> OaiConfig:
    b = _Block(name, "harvest", data, {"type", "endpoint", "metadata_prefix", "set", "allow_private", "max_page_bytes", "full", "bounds"})
    return OaiConfig(
        endpoint=b.url("endpoint"),
        metadata_prefix=b.text("metadata_prefix", "oai_dc"),
        set=b.text("set"),
        allow_private=b.flag("allow_private"),
        max_page_bytes=b.integer("max_page_bytes", 64 * MiB),
        full=b.flag("full"),
        bounds=_bounds(b),
    )


def _bounds(b: _Block) -> PageBounds:
    bounds = b.sub("bounds", {"max_pages", "max_minutes", "max_stale_pages"})
    defaults = PageBounds()
    return PageBounds(
        max_pages=bounds.integer("max_pages", defaults.max_pages),
        max_minutes=bounds.integer("max_minutes", defaults.max_minutes),
        max_stale_pages=bounds.integer("max_stale_pages", defaults.max_stale_pages),
    )


def _api(name: str, data: Mapping[str, Any]) -> ApiConfig:
    b = _Block(
        name,
        "harvest",
        data,
        {"type", "endpoint", "records_path", "id_path", "paging", "params", "allow_private", "max_page_bytes", "full",
         "bounds"},
    )
    p = b.sub(
        "paging",
        {"style", "cursor_param", "cursor_path", "initial_cursor", "offset_param", "limit_param", "page_size",
         "total_path", "next_path"},
    )
    style = p.choice("style", ("cursor", "offset", "next"))
    paging = Paging(
        style=style,
        cursor_param=p.text("cursor_param", "cursor"),
        cursor_path=p.text("cursor_path", required=style == "cursor"),
        initial_cursor=p.text("initial_cursor"),
        offset_param=p.text("offset_param", "offset"),
        limit_param=p.text("limit_param", "limit"),
        page_size=p.integer("page_size", 100),
        total_path=p.text("total_path"),
        next_path=p.text("next_path"),
    )
    params = b.mapping("params")
    for key, value in params.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise b.error(f"params.{key}", f"must be a string or number, got {value!r}")
    return ApiConfig(
        endpoint=b.url("endpoint"),
        records_path=b.text("records_path", required=True),
        id_path=b.text("id_path", required=True),
        paging=paging,
        params={str(k): str(v) for k, v in params.items()},
        allow_private=b.flag("allow_private"),
        max_page_bytes=b.integer("max_page_bytes", 64 * MiB),
        full=b.flag("full"),
        bounds=_bounds(b),
    )


def _file(name: str, data: Mapping[str, Any]) -> FileConfig:
    b = _Block(
        name,
        "harvest",
        data,
        {"type", "path", "url", "format", "member_format", "members", "record_xpath", "id_xpath", "id_path",
         "namespaces", "limits", "allow_private", "full"},
    )
    fmt = b.choice("format", ("xml", "jsonl", "zip"))
    path, url = b.text("path"), b.url("url", required=False)
    if (path is None) == (url is None):
        raise b.error("path", "give exactly one of path or url")
    member_format = b.choice("member_format", ("xml", "jsonl")) if fmt == "zip" else None
    if fmt != "zip" and "member_format" in data:
        raise b.error("member_format", "only applies to format: zip")
    records_format = member_format or fmt
    namespaces = b.mapping("namespaces")
    for prefix, uri in namespaces.items():
        if not isinstance(prefix, str) or not isinstance(uri, str) or not uri:
            raise b.error(f"namespaces.{prefix}", "must map a prefix to a namespace URI")
    record_xpath = id_xpath = id_path = None
    steps: tuple[tuple[str, str], ...] = ()
    if records_format == "xml":
        record_xpath = b.text("record_xpath", required=True)
        steps = _record_steps(b, record_xpath, namespaces)
        id_expr = b.text("id_xpath", required=True)
        try:
            id_xpath = etree.XPath(id_expr, namespaces=dict(namespaces))
        except etree.XPathError as exc:
            raise b.error("id_xpath", f"invalid XPath {id_expr!r}: {exc}") from exc
    else:
        id_path = b.text("id_path", required=True)
    lim = b.sub("limits", {"max_members", "max_member_bytes", "max_total_bytes", "max_ratio"})
    defaults = ZipLimits()
    return FileConfig(
        format=fmt,
        path=path,
        url=url,
        member_format=member_format,
        members=b.text("members", "*"),
        record_steps=steps,
        record_xpath=record_xpath,
        id_xpath=id_xpath,
        id_path=id_path,
        namespaces=dict(namespaces),
        limits=ZipLimits(
            max_members=lim.integer("max_members", defaults.max_members),
            max_member_bytes=lim.integer("max_member_bytes", defaults.max_member_bytes),
            max_total_bytes=lim.integer("max_total_bytes", defaults.max_total_bytes),
            max_ratio=lim.integer("max_ratio", defaults.max_ratio),
        ),
        allow_private=b.flag("allow_private"),
        full=b.flag("full"),
    )


def _record_steps(b: _Block, xpath: str, namespaces: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    if not RECORD_XPATH_RE.match(xpath):
        raise b.error("record_xpath", f"{xpath!r}: only '/'- or '//'-separated names are supported (streamed)")
    steps = []
    for axis, qname in STEP_RE.findall(xpath):
        prefix, _, local = qname.rpartition(":")
        if prefix and prefix not in namespaces:
            raise b.error("record_xpath", f"prefix {prefix!r} is not declared in harvest.namespaces")
        clark = f"{{{namespaces[prefix]}}}{local}" if prefix else local
        steps.append(("descendant" if axis == "//" else "child", clark))
    return tuple(steps)
