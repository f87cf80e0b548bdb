"""Local servers answering as the API hubs ingestion3 harvests (its ``harvesters/api/`` package), over records built
at test time from ingestion3's own test fixtures (``../shared/fixtures/ingestion3``, read in place).

Each app checks the parameters ingestion3's harvester sends and pages as that API does. ingestion3 keeps single
records only, never a whole answer, so the envelopes are RECONSTRUCTED from the fields its harvesters read and
the APIs' documentation:

* Primo VE search (``PrimoVEHarvester``: Getty, Mississippi): ``GET /primo/v1/search?vid&tab&scope&q&apikey&offset
  &limit`` -> ``{"info": {"total", "first", "last"}, "docs": [...], "facets": []}``; ``offset`` counts from 1
  (Ex Libris documents "Default: 1"; ingestion3 starts at 1); a wrong key: HTTP 401 with Ex Libris' error list.
* Primo X-Services brief search (``PrimoHarvester``: MWDL): ``GET /PrimoWebServices/xservice/search/brief?indx
  &bulkSize&institution&loc&query&query_exc...`` -> ``<SEGMENTS xmlns=".../jaguar/search"><JAGROOT><RESULT>
  <DOCSET TOTALHITS FIRSTHIT LASTHIT><sear:DOC>...`` (the fixture's ``sear:DOC``s, whose prefix the envelope
  declares); ``indx`` counts from 1; an unknown institution: a 200 answer holding ``<ERROR MESSAGE CODE/>``.
* Internet Archive scrape API (``IaHarvester``): ``GET /services/search/v1/scrape?q=collection:<c>&fields&cursor``
  -> ``{"items", "count", "total", "cursor"}``, the cursor (base64 JSON of the last identifier, as IA's look)
  absent on the last page; items carry only the requested fields.
* Minnesota Digital Library's METL JSON:API (``MdlHarvester``: minnesota, sd): ``GET /api/v2/records?page[size]
  &<query>`` -> ``{"data": [...], "links": {"self", "next"}, "meta": {"total"}}``, ``next`` an absolute link
  (``page[number]``, the query kept), absent on the last page.
* loc.gov (``LocHarvester``): ``GET /collections/<c>/?fo=sitemap&c&sp`` -> a sitemaps.org ``<urlset>`` of
  ``<url><loc>`` (item pages and a collection page, as a site map lists them), ``sp`` counting from 1;
  ``GET /item/<id>/?fo=json&at=item`` -> ``{"item": {...}}`` (the fixture's shape); an unknown item: 404.
"""

from __future__ import annotations

import base64
import copy
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from urllib.parse import parse_qs, urlencode

JAGROOT = "http://www.exlibrisgroup.com/xsd/jaguar/search"
SITEMAP = "http://www.sitemaps.org/schemas/sitemap/0.9"

Answer = tuple[str, str, bytes]  # status, content type, body


def json_answer(body, status: str = "200 OK") -> Answer:
    return status, "application/json;charset=UTF-8", json.dumps(body).encode("utf-8")


class HubApi(ABC):
    """A WSGI app that keeps every request (``requests``: path and query, each parameter's values as a list;
    ``headers``: its HTTP headers, WSGI-named) and answers through :meth:`answer`; ``fail(path, query)`` may answer
    instead (an :data:`Answer`, or None)."""

    def __init__(self):
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.headers: list[dict[str, str]] = []
        self.fail: Callable[[str, dict], Answer | None] | None = None

    def __call__(self, environ, start_response):
        path, query = environ["PATH_INFO"], parse_qs(environ["QUERY_STRING"], keep_blank_values=True)
        self.requests.append((path, query))
        self.headers.append({key: value for key, value in environ.items() if key.startswith("HTTP_")})
        try:
            status, kind, body = (self.fail and self.fail(path, query)) or self.answer(path, query, environ)
        except (KeyError, ValueError) as exc:  # a parameter the API needs is missing or malformed
            status, kind, body = "400 Bad Request", "text/plain", f"bad request: {exc!r}".encode()
        start_response(status, [("Content-Type", kind), ("Content-Length", str(len(body)))])
        return [body]

    @abstractmethod
    def answer(self, path: str, query: dict[str, list[str]], environ) -> Answer:
        """The API's answer to ``path`` with ``query``."""


def one(query: dict[str, list[str]], name: str) -> str:
    """The single value of parameter ``name`` (KeyError: missing, ValueError: repeated)."""
    values = query[name]
    if len(values) != 1:
        raise ValueError(f"{name} given {len(values)} times")
    return values[0]


def not_found() -> Answer:
    return "404 Not Found", "text/plain", b"not found"


class PrimoVeApi(HubApi):
    """Primo VE's search API over ``docs``, for the view ``view`` (vid, tab, scope) and the key ``apikey``."""

    def __init__(self, docs: list[dict], view: dict[str, str], apikey: str):
        super().__init__()
        self.docs, self.view, self.apikey = docs, view, apikey

    def answer(self, path, query, environ) -> Answer:
        if path != "/primo/v1/search":
            return not_found()
        if query.get("apikey") != [self.apikey]:
            return json_answer({"errorsExist": True, "errorList": {"error": [{
                "errorCode": "UNAUTHORIZED", "errorMessage": "API-key not defined or not configured to allow this API."}]}},
                "401 Unauthorized")
        if any(one(query, key) != value for key, value in self.view.items()) or not one(query, "q"):
            raise ValueError("not this hub's view")
        first, limit = int(one(query, "offset")), int(one(query, "limit"))
        page = self.docs[first - 1:first - 1 + limit]
        total = len(self.docs)
        return json_answer({"info": {"totalResultsLocal": total, "totalResultsPC": 0, "total": total, "first": first,
                                     "last": first + len(page) - 1}, "docs": page, "facets": []})


class PrimoBriefApi(HubApi):
    """Primo's X-Services brief search over ``docs`` (``sear:DOC`` elements as bytes), for the institution,
    scope and exclusions ``required`` names (each parameter's values)."""

    def __init__(self, docs: list[bytes], required: dict[str, list[str]]):
        super().__init__()
        self.docs, self.required = docs, required

    def answer(self, path, query, environ) -> Answer:
        if path != "/PrimoWebServices/xservice/search/brief":
            return not_found()
        if query.get("institution") != self.required["institution"]:
            return self.envelope(b'<ERROR MESSAGE="Institution code is invalid" CODE="-6"/>')
        if any(query.get(key) != values for key, values in self.required.items()) or not one(query, "query"):
            raise ValueError("not this hub's search")
        first, size = int(one(query, "indx")), int(one(query, "bulkSize"))
        page = self.docs[first - 1:first - 1 + size]
        docset = (f'<DOCSET IS_LOCAL="true" TOTAL_TIME="4" LASTHIT="{first + len(page) - 1}" FIRSTHIT="{first}" '
                  f'TOTALHITS="{len(self.docs)}" HIT_TIME="2">').encode()
        return self.envelope(b'<QUERYTRANSFORMS/><FACETLIST ACCURATE_COUNTERS="true"/>' + docset + b"".join(page)
                             + b"</DOCSET>")

    @staticmethod
    def envelope(result: bytes) -> Answer:
        return "200 OK", "text/xml;charset=UTF-8", (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<SEGMENTS xmlns="{JAGROOT}" xmlns:sear="{JAGROOT}"><JAGROOT>'
            "<RESULT>".encode() + result + b"</RESULT><searchToken>0</searchToken></JAGROOT></SEGMENTS>")


class IaScrapeApi(HubApi):
    """The Internet Archive's scrape API over ``items`` (their ``collection`` lists), ``count`` items a page."""

    def __init__(self, items: list[dict], count: int):
        super().__init__()
        self.items, self.count = items, count

    def answer(self, path, query, environ) -> Answer:
        if path != "/services/search/v1/scrape":
            return not_found()
        field, _, collection = one(query, "q").partition(":")
        if field != "collection":
            raise ValueError("ingestion3 asks by collection")
        fields = one(query, "fields").split(",")
        matching = [item for item in self.items if collection in item["collection"]]
        start = 0
        if "cursor" in query:
            last = json.loads(base64.b64decode(one(query, "cursor")))[0]["identifier"]
            start = next(n for n, item in enumerate(matching) if item["identifier"] == last) + 1
        page = matching[start:start + self.count]
        body = {"items": [{k: v for k, v in item.items() if k in fields} for item in page], "count": len(page),
                "total": len(matching)}
        if start + self.count < len(matching):
            body["cursor"] = base64.b64encode(json.dumps([{"identifier": page[-1]["identifier"]}]).encode()).decode()
        return json_answer(body)


class MdlApi(HubApi):
    """MDL's METL records API (JSON:API) over ``records``."""

    def __init__(self, records: list[dict]):
        super().__init__()
        self.records = records

    def answer(self, path, query, environ) -> Answer:
        if path != "/api/v2/records":
            return not_found()
        size, number = int(one(query, "page[size]")), int(query.get("page[number]", ["1"])[0])
        data = self.records[(number - 1) * size:number * size]

        def link(page: int) -> str:
            kept = {k: v for k, v in query.items() if k != "page[number]"}
            base = f"http://{environ['HTTP_HOST']}{environ.get('SCRIPT_NAME', '')}"  # where the app is mounted
            return f"{base}{path}?{urlencode({**kept, 'page[number]': [page]}, doseq=True)}"

        links = {"self": link(number)}
        if number * size < len(self.records):
            links["next"] = link(number + 1)
        return json_answer({"data": data, "links": links, "meta": {"total": len(self.records)}})


class LocApi(HubApi):
    """loc.gov: collection site maps (``collections``: name -> the item ids it lists, each listed page followed by
    the collection's own page) and the items' JSON (``items``: id -> ``{"item": ...}``)."""

    def __init__(self, collections: dict[str, list[str]], items: dict[str, dict]):
        super().__init__()
        self.collections, self.items = collections, items

    def answer(self, path, query, environ) -> Answer:
        base = f"http://{environ['HTTP_HOST']}{environ.get('SCRIPT_NAME', '')}"  # where the app is mounted
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "item" and one(query, "fo") == "json" and one(query, "at") == "item":
            return json_answer(self.items[parts[1]]) if parts[1] in self.items else not_found()
        if len(parts) != 2 or parts[0] != "collections" or parts[1] not in self.collections:
            return not_found()
        if one(query, "fo") != "sitemap":
            raise ValueError("a collection's items are listed by its site map")
        size, number = int(one(query, "c")), int(one(query, "sp"))
        links = [f"{base}/item/{key}/" for key in self.collections[parts[1]]] + [f"{base}/collections/{parts[1]}/"]
        urls = "".join(f"<url><loc>{link}</loc><lastmod>2024-05-01</lastmod></url>"
                       for link in links[(number - 1) * size:number * size])
        return "200 OK", "text/xml;charset=UTF-8", (
            f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP}">{urls}</urlset>').encode()


def variants(record: dict, count: int, vary: Callable[[dict, int], None]) -> list[dict]:
    """``count`` copies of ``record``, the ``n``-th changed by ``vary(copy, n)`` (its ids made its own)."""
    made = []
    for n in range(1, count + 1):
        made.append(copy.deepcopy(record))
        vary(made[-1], n)
    return made
