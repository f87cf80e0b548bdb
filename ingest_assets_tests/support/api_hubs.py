"""The API hubs ingestion3 harvests (its ``harvesters/api/`` package), each as a :class:`Hub`: a local server of
:mod:`.api_servers` answering in that API's shape over records made from ingestion3's fixtures, the hub's ``api``
block pointed at it (the parameters ingestion3's harvester sends), its profile, and what its harvest must bring.

Getty and Mississippi page Primo VE (``PrimoVEHarvester``), MWDL Primo's X-Services (``PrimoHarvester``), ia the
scrape API by collection (``IaHarvester``), minnesota and sd MDL's METL API (``MdlHarvester``), lc loc.gov's
collection site maps and item pages (``LocHarvester``). Page sizes are small so every list has several pages.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ingest_assets_tests.support.api_servers import HubApi, IaScrapeApi, LocApi, MdlApi, PrimoBriefApi, PrimoVeApi, variants

PRIMO_KEY = "l8xx-primo-key-0f3e9a71"  # what the hub's environment holds; the registry names the variable only
MWDL_EXCLUDED = [
    "facet_rtype,exact,collections",
    "facet_local1,exact,University of Utah Theses and Dissertations",
    "facet_local1,exact,Utah Valley University Student Theses Collection",
    "facet_local1,exact,Harvard Peabody Site Reports",
    "facet_local1,exact,Westminster College Institutional Repository",
    "facet_local4,exact,Salt Lake Community College Digital Archives",
]
IA_FIELDS = ("collection,contributor,creator,date,description,identifier,language,licenseurl,mediatype,publisher,"
             "rights,subject,title,volume")


@dataclass
class Hub:
    """One hub's server, block (endpoint on the server), and what its harvest must bring."""

    app: HubApi
    block: dict
    ids: list[str]
    pages: int
    failed: int = 0
    env: dict[str, str] = field(default_factory=dict)
    asked: Callable[[list], None] = lambda requests: None  # checks on what the server was asked


def load(fixtures: Path, name: str) -> dict:
    return json.loads((fixtures / name).read_text("utf-8"))


def primo_ve(records: list[dict], view: dict[str, str], serve, **params) -> tuple[HubApi, dict]:
    """A Primo VE server and the PrimoVEHarvester block for it (``params``: the hub's own)."""
    app = PrimoVeApi(records, view, PRIMO_KEY)
    block = {"type": "api", "endpoint": f"{serve(app)}/primo/v1/search", "records_path": "docs",
             "id_path": "pnx.control.recordid.0",
             "params": {**view, "q": "any,contains,*", **params, "apikey": {"env": "PRIMO_API_KEY"}},
             "paging": {"style": "offset", "offset_param": "offset", "limit_param": "limit", "first": 1,
                        "page_size": 3, "total_path": "info.total"}}
    return app, block


def asked_offsets(expected: list[str], name: str = "offset") -> Callable[[list], None]:
    def check(requests: list) -> None:
        assert [query[name] for _, query in requests] == [[value] for value in expected]
        assert all(query.get("apikey", [PRIMO_KEY]) == [PRIMO_KEY] for _, query in requests)
    return check


def getty(fixtures: Path, serve) -> Hub:
    def vary(doc: dict, n: int) -> None:
        doc["pnx"]["control"]["recordid"] = [f"GETTY_ROSETTAIE13184{n:02d}"]

    app, block = primo_ve(variants(load(fixtures, "getty.json"), 7, vary),
                          {"vid": "DPLA", "tab": "dpla", "scope": "DPLA", "inst": "01GRI"}, serve, lang="eng")
    return Hub(app, block, [f"GETTY_ROSETTAIE13184{n:02d}" for n in range(1, 8)], pages=3,
               env={"PRIMO_API_KEY": PRIMO_KEY}, asked=asked_offsets(["1", "4", "7"]))


def mississippi(fixtures: Path, serve) -> Hub:
    def vary(doc: dict, n: int) -> None:
        doc["@id"] = doc["@id"].replace("991014100609305566", f"99101410060930556{n}")
        doc["pnx"]["control"]["recordid"] = [f"alma99101410060930556{n}"]

    app, block = primo_ve(variants(load(fixtures, "ms.json"), 6, vary),
                          {"vid": "01USM_INST:MDL", "tab": "MDL", "scope": "MDL"}, serve)
    return Hub(app, block, [f"alma99101410060930556{n}" for n in range(1, 7)], pages=2,
               env={"PRIMO_API_KEY": PRIMO_KEY}, asked=asked_offsets(["1", "4"]))


def mwdl(fixtures: Path, serve) -> Hub:
    doc = (fixtures / "mwdl.xml").read_bytes()
    docs = [doc.replace(b"digcoll_slc_27works_598", f"digcoll_slc_27works_598-{n}".encode()) for n in range(1, 9)]
    required = {"institution": ["MWDL"], "loc": ["local,scope:(mw)"], "query_exc": MWDL_EXCLUDED}
    app = PrimoBriefApi(docs, required)
    block = {"type": "api", "endpoint": f"{serve(app)}/PrimoWebServices/xservice/search/brief", "format": "xml",
             "namespaces": {"sear": "http://www.exlibrisgroup.com/xsd/jaguar/search",
                            "primo": "http://www.exlibrisgroup.com/xsd/primo/primo_nm_bib"},
             "records_path": "/sear:SEGMENTS/sear:JAGROOT/sear:RESULT/sear:DOCSET/sear:DOC",
             "id_path": ".//primo:PrimoNMBib/primo:record/primo:control/primo:recordid",
             "error_path": "//sear:ERROR/@MESSAGE",
             "params": {"institution": "MWDL", "loc": "local,scope:(mw)", "query": "any,contains,*",
                        "query_exc": MWDL_EXCLUDED},
             "paging": {"style": "offset", "offset_param": "indx", "limit_param": "bulkSize", "first": 1,
                        "page_size": 3, "total_path": "/sear:SEGMENTS/sear:JAGROOT/sear:RESULT/sear:DOCSET/@TOTALHITS"}}
    return Hub(app, block, [f"digcoll_slc_27works_598-{n}" for n in range(1, 9)], pages=3,
               asked=asked_offsets(["1", "4", "7"], "indx"))


def ia(fixtures: Path, serve) -> Hub:
    # 1-3 only in elmscollege, 4-5 in both collections (yielded once), 6-7 only in americana
    homes = {1: ["elmscollege"], 2: ["elmscollege"], 3: ["elmscollege"], 4: ["elmscollege", "americana"],
             5: ["americana", "elmscollege"], 6: ["americana"], 7: ["americana"]}

    def vary(item: dict, n: int) -> None:
        item["identifier"], item["collection"] = f"artofdyingwell00bell{n}", homes[n]

    app = IaScrapeApi(variants(load(fixtures, "ia.json"), 7, vary), count=2)
    block = {"type": "api", "endpoint": f"{serve(app)}/services/search/v1/scrape", "records_path": "items",
             "id_path": "identifier", "sets": ["elmscollege", "americana"],
             "params": {"q": "collection:{set}", "fields": IA_FIELDS},
             "paging": {"style": "cursor", "cursor_param": "cursor", "cursor_path": "cursor"}}

    def asked(requests: list) -> None:
        assert [(query["q"][0], "cursor" in query) for _, query in requests] == [
            ("collection:elmscollege", False), ("collection:elmscollege", True), ("collection:elmscollege", True),
            ("collection:americana", False), ("collection:americana", True)]

    return Hub(app, block, [f"artofdyingwell00bell{n}" for n in range(1, 8)], pages=5, asked=asked)


def mdl_records(fixtures: Path, count: int) -> list[dict]:
    def vary(record: dict, n: int) -> None:
        record["id"] = f"00002e8fc21342f03889239b438edc3b281960{n:02d}"
        record["attributes"]["metadata"]["isShownAt"] += f"-{n}"

    return variants(load(fixtures, "mdl.json"), count, vary)


def mdl_block(app: MdlApi, serve) -> dict:
    return {"type": "api", "endpoint": f"{serve(app)}/api/v2/records", "records_path": "data", "id_path": "id",
            "params": {"page[size]": 3, "filter[import-job-tags]": "dpla"},
            "paging": {"style": "next", "next_path": "links.next"}}


def minnesota(fixtures: Path, serve) -> Hub:
    app = MdlApi(mdl_records(fixtures, 7))

    def asked(requests: list) -> None:
        assert [query.get("page[number]") for _, query in requests] == [None, ["2"], ["3"]]
        assert all(query["filter[import-job-tags]"] == ["dpla"] for _, query in requests)

    return Hub(app, mdl_block(app, serve), [f"00002e8fc21342f03889239b438edc3b281960{n:02d}" for n in range(1, 8)],
               pages=3, asked=asked)


def sd(fixtures: Path, serve) -> Hub:
    """South Dakota through MDL's API (ingestion3's SdProfile binds MdlHarvester): MDL's record shape, sd's profile."""
    app = MdlApi(mdl_records(fixtures, 6))
    return Hub(app, mdl_block(app, serve), [f"00002e8fc21342f03889239b438edc3b281960{n:02d}" for n in range(1, 7)],
               pages=2)


def lc(fixtures: Path, serve) -> Hub:
    """Two collections sharing item 4; the second lists an item loc.gov no longer has (a counted record error)."""
    record = load(fixtures, "lc.json")
    items = {}
    for n in range(1, 7):
        item = json.loads(json.dumps(record).replace("73691632", f"7369163{n}"))
        items[f"7369163{n}"] = item
    app = LocApi({"maps-a": [f"7369163{n}" for n in (1, 2, 3, 4)], "maps-b": ["73691634", "73691635", "73691636", "gone"]},
                 items)
    block = {"type": "api", "format": "xml", "endpoint": f"{serve(app)}/collections/{{set}}/", "sets": ["maps-a", "maps-b"],
             "params": {"fo": "sitemap"}, "records_path": "//*[local-name()='url']/*[local-name()='loc']",
             "items": {"format": "json", "params": {"fo": "json", "at": "item"}, "url_pattern": "/item/"},
             "id_path": "item.id",
             "paging": {"style": "page", "page_param": "sp", "limit_param": "c", "page_size": 3,
                        "ends_on_short_page": True}}

    def asked(requests: list) -> None:
        pages = [(path, query["sp"]) for path, query in requests if path.startswith("/collections/")]
        assert pages == [("/collections/maps-a/", ["1"]), ("/collections/maps-a/", ["2"]),
                         ("/collections/maps-b/", ["1"]), ("/collections/maps-b/", ["2"])]
        assert [path for path, _ in requests].count("/item/73691634/") == 2  # listed twice, yielded once

    return Hub(app, block, [f"http://www.loc.gov/item/7369163{n}/" for n in range(1, 7)], pages=4, failed=1,
               asked=asked)


HUBS = {"getty": getty, "mississippi": mississippi, "mwdl": mwdl, "ia": ia, "minnesota": minnesota, "sd": sd, "lc": lc}
# the profile ingestion3 maps each with (its CHProviderProfiles' mapping, as this project names the profiles)
PROFILES = {"getty": "getty", "mississippi": "mississippi", "mwdl": "mwdl", "ia": "ia", "minnesota": "mdl", "sd": "sd",
            "lc": "lc"}
