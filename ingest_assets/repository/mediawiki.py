"""MediaWiki sources of template records: Special:Export XML dumps and the MediaWiki action API.

Wikitext is parsed with mwparserfromhell; each occurrence of a wanted template becomes a
:class:`TemplateRecord` whose values are cleaned of wiki markup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone

import mwparserfromhell
from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import ConfigError, IngestError, ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.markup import clean
from ingest_assets.repository.records import TemplateRecord, make_record, parse_timestamp, template_name
from ingest_assets.core.xml_input import UnresolvedEntity, UnsafeXML, iter_elements, resolve_entity_refs


MAX_API_ANSWER = 1024 * 1024


@dataclass(frozen=True)
class WikiPage:
    title: str
    namespace: int
    revision_id: int
    timestamp: datetime
    text: str

    @property
    def is_redirect(self) -> bool:
        return self.text.lstrip().upper().startswith("#REDIRECT")


def template_records(page: WikiPage, templates: Iterable[str], *, base_url: str, source_url: str,
                     harvested: datetime | None = None) -> list[TemplateRecord]:
    """Every occurrence of a wanted template on ``page`` (nested occurrences included), cleaned."""
    wanted = {template_name(name) for name in templates}
    records: list[TemplateRecord] = []
    for template in mwparserfromhell.parse(page.text).filter_templates(recursive=True):
        name = template_name(str(template.name))
        if name not in wanted:
            continue
        params = {str(param.name).strip(): clean(param.value) for param in template.params}
        records.append(make_record(name, base_url, page.title, params, modified=page.timestamp,
                                   harvested=harvested, source_url=source_url, occurrence=len(records),
                                   revision=page.revision_id))
    return records


def export_pages(source, *, file: str | None = None, problems: list[IngestError] | None = None) -> Iterator[WikiPage]:
    """Stream the pages of a Special:Export dump (any export-0.x namespace), latest revision each. An export
    declaring entities is refused; references to HTML's named entities are resolved, others refused per page
    (into ``problems`` when given, and the other pages go on; else raised).

    The latest revision is the one with the newest timestamp (ties: highest id): dumps with history may
    list revisions out of order. Redirect pages are skipped.
    """
    try:
        for element in iter_elements(source, "{*}page"):
            try:
                page = _page(element, file)
            except ParseError as exc:
                if problems is None:
                    raise
                problems.append(exc)
                page = None
            element.clear(keep_tail=False)
            if page is not None and not page.is_redirect:
                yield page
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"invalid MediaWiki export XML: {exc}", file=file) from exc
    except UnsafeXML as exc:  # declared entities' references would cut page texts short
        raise ParseError(str(exc), file=file) from exc


def _page(element, file: str | None) -> WikiPage | None:
    def child(node, name):
        found = node.find(f"{{*}}{name}")
        return found.text if found is not None and found.text is not None else ""

    try:
        resolve_entity_refs(element)  # else a text stops at its first entity reference
    except UnresolvedEntity as exc:
        raise ParseError(str(exc), file=file, record=child(element, "title")) from exc
    title = child(element, "title")
    revisions = []
    for revision in element.iterfind("{*}revision"):
        try:
            stamp = parse_timestamp(child(revision, "timestamp"))
            revisions.append((stamp, int(child(revision, "id") or 0), child(revision, "text")))
        except ValueError as exc:
            raise ParseError(f"bad revision timestamp or id: {exc}", file=file, record=title) from exc
    if not revisions or element.find("{*}redirect") is not None:
        return None
    stamp, revision_id, text = max(revisions, key=lambda rev: (rev[0], rev[1]))
    return WikiPage(title, int(child(element, "ns") or 0), revision_id, stamp, text)


class MediaWikiApi:
    """Pages that embed a template, changed in a period, via ``api.php`` (with continuation)."""

    def __init__(self, api_url: str, http: HttpClient, *, batch: int = 50):
        self.api_url = api_url
        self.http = http
        self.batch = batch

    def pages_embedding(self, template: str, *, since: datetime | None = None,
                        until: datetime | None = None) -> Iterator[WikiPage]:
        params = {
            "action": "query", "format": "json", "formatversion": "2",
            "generator": "embeddedin", "geititle": f"Template:{template_name(template)}",
            "geilimit": str(self.batch), "prop": "revisions", "rvprop": "ids|timestamp|content",
            "rvslots": "main",
        }
        while True:
            response = self.http.get(self.api_url, params=params)
            try:
                data = response.json()
            except ValueError as exc:
                raise ParseError(f"MediaWiki API answered non-JSON: {exc}", file=response.url) from exc
            if "error" in data:
                raise IngestError(f"MediaWiki API error {data['error'].get('code')}: "
                                  f"{data['error'].get('info')}", file=response.url)
            for raw in data.get("query", {}).get("pages", []):
                page = _api_page(raw, response.url)
                if page and not page.is_redirect and _within(page.timestamp, since, until):
                    yield page
            if "continue" not in data:
                return
            params = {**params, **data["continue"]}


def _api_page(raw: dict, url: str) -> WikiPage | None:
    revisions = raw.get("revisions") or []
    if not revisions:
        return None
    revision = revisions[0]
    slot = revision.get("slots", {}).get("main", {})
    text = slot.get("content", revision.get("content"))
    if text is None:
        raise ParseError("revision without content", file=url, record=raw.get("title"))
    return WikiPage(raw["title"], int(raw.get("ns", 0)), int(revision.get("revid", 0)),
                    parse_timestamp(revision["timestamp"]) or datetime.now(timezone.utc), text)


def _within(stamp: datetime, since: datetime | None, until: datetime | None) -> bool:
    return (since is None or stamp > since) and (until is None or stamp <= until)


class WikiEditor:
    """Posts pages (the aggregation reports) through ``api.php``: bot-password login, CSRF token, edit."""

    def __init__(self, api_url: str, http: HttpClient, *, username: str, password: str):
        self.api_url = api_url
        self.http = http
        self.username = username
        self.password = password
        self._csrf: str | None = None

    def _post(self, data: dict[str, str]) -> dict:
        with self.http.open(self.api_url, method="POST", data={**data, "format": "json"},
                            max_bytes=MAX_API_ANSWER) as body:
            try:
                answer = json_input.loads(body.read())
            except ValueError as exc:
                raise ParseError(f"MediaWiki API answered non-JSON: {exc}", file=self.api_url) from exc
        if "error" in answer:
            raise IngestError(f"MediaWiki API error {answer['error'].get('code')}: {answer['error'].get('info')}",
                              file=self.api_url)
        return answer

    def _token(self, kind: str) -> str:
        response = self.http.get(self.api_url, params={"action": "query", "meta": "tokens", "type": kind,
                                                       "format": "json"}, max_bytes=MAX_API_ANSWER)
        try:
            return response.json()["query"]["tokens"][f"{kind}token"]
        except (ValueError, KeyError) as exc:
            raise ParseError(f"MediaWiki API gave no {kind} token: {exc}", file=self.api_url) from exc

    def login(self) -> None:
        answer = self._post({"action": "login", "lgname": self.username, "lgpassword": self.password,
                             "lgtoken": self._token("login")})
        if answer.get("login", {}).get("result") != "Success":
            raise IngestError(f"MediaWiki login failed: {answer.get('login', {}).get('reason', answer)}",
                              file=self.api_url)
        self._csrf = self._token("csrf")

    def edit(self, title: str, text: str, summary: str = "Metadata aggregation report") -> None:
        if self._csrf is None:
            self.login()
        answer = self._post({"action": "edit", "title": title, "text": text, "summary": summary, "bot": "1",
                             "token": self._csrf or ""})
        if answer.get("edit", {}).get("result") != "Success":
            raise IngestError(f"MediaWiki edit of {title!r} failed: {answer}", file=self.api_url)


class WikiTemplateSource:
    """TemplateParameterIndex queries answered straight from a wiki (action API or an export file).

    ``pages(template, since, until)`` yields the pages embedding ``template`` changed in (since, until];
    records come whole (``parameternames`` is only an optimisation of the real index). ``where`` reads
    every page embedding the template: fine for one wiki, which is what this source is for.
    """

    def __init__(self, pages, *, base_url: str, source_url: str):
        self.pages = pages
        self.base_url = base_url
        self.source_url = source_url
        self.problems: list[IngestError] = []

    def modified(self, template: str, since: datetime | None, until: datetime | None,
                 parameternames: list[str] | None = None) -> Iterator[TemplateRecord]:
        harvested = datetime.now(timezone.utc)
        for page in self.pages(template, since, until):
            yield from template_records(page, [template], base_url=self.base_url, source_url=self.source_url,
                                        harvested=harvested)

    def where(self, template: str, parameter: str, value: str) -> Iterator[TemplateRecord]:
        return (record for record in self.modified(template, None, None) if record.get(parameter) == value)

    @classmethod
    def from_api(cls, api: MediaWikiApi, *, base_url: str) -> "WikiTemplateSource":
        return cls(lambda t, since, until: api.pages_embedding(t, since=since, until=until), base_url=base_url,
                   source_url=api.api_url)

    @classmethod
    def from_export(cls, path: str, *, base_url: str) -> "WikiTemplateSource":
        source = cls(None, base_url=base_url, source_url=path)
        source.pages = lambda _template, since, until: (
            page for page in export_pages(path, file=path, problems=source.problems) if _within(page.timestamp, since, until)
        )
        return source


def report_poster(provider: str, api_url: str | None, user_env: str | None, password_env: str | None,
                  http: HttpClient, secret: Callable[[str], str | None]) -> Callable[..., None] | None:
    """The ``edit`` of a :class:`WikiEditor` posting the provider's reports through ``api_url`` (None without one),
    logged in with the secrets named ``user_env`` / ``password_env``, looked up with ``secret``."""
    if not api_url:
        return None
    user, password = (secret(name) if name else None for name in (user_env, password_env))
    if not user or not password:
        raise ConfigError("wiki_api needs wiki_user_env / wiki_password_env naming set env vars", provider=provider)
    return WikiEditor(api_url, http, username=user, password=password).edit
