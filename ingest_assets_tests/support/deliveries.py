"""Hub deliveries as ingestion3's file harvesters read them, built at test time from ingestion3's own fixture records
(``../shared/fixtures/ingestion3/``, read in place): the records varied by id, packed into zips, tars, gzip files and
folders in a temporary path, or uploaded to an S3 bucket (moto's server). Where a hub's delivery is known only from
the harvester's code, the shape is reconstructed as docs/harvest-files.md describes."""

from __future__ import annotations

import copy
import gzip
import io
import json
import re
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from ingest_assets_tests.support import SHARED_FIXTURES

INGESTION3 = SHARED_FIXTURES / "ingestion3"
OAI = "http://www.openarchives.org/OAI/2.0/"
MARC = "http://www.loc.gov/MARC21/slim"
NARA = "http://description.das.nara.gov/"


def fixture_json(name: str) -> dict:
    return json.loads((INGESTION3 / name).read_text(encoding="utf-8"))


def fixture_text(name: str) -> str:
    return (INGESTION3 / name).read_text(encoding="utf-8")


def json_variants(name: str, ids: Iterable[str], set_id: Callable[[dict, str], None]) -> list[dict]:
    """The fixture record ``name`` once per id, ``set_id(record, id)`` putting the id where the hub has it."""
    base, records = fixture_json(name), []
    for local_id in ids:
        record = copy.deepcopy(base)
        set_id(record, local_id)
        records.append(record)
    return records


def jsonl(records: Iterable[Mapping[str, Any]], *, array: bool = False) -> bytes:
    """One compact JSON record a line; ``array``: written as a JSON array one item a line (``[{..}`` ``,{..}`` ``]``),
    the way ingestion3's harvesters expect some hubs to send it."""
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    if array:
        lines = ["[" + lines[0], *("," + line for line in lines[1:]), "]"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def xml_variant(text: str, old_id: str, new_id: str) -> str:
    """``text`` with its id ``old_id`` (as element text) replaced by ``new_id`` (every occurrence)."""
    return text.replace(f">{old_id}<", f">{new_id}<")


def without_declaration(text: str) -> str:
    return re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", text)


def one_line(text: str) -> str:
    """An XML document on one line (xmll's output): whitespace within tags and between them collapsed, line breaks
    in text as character references."""
    text = re.sub(r"<[^>]*>", lambda tag: re.sub(r"\s+", " ", tag.group()), without_declaration(text).strip())
    return re.sub(r">\s+<", "><", text).replace("\r", "").replace("\n", "&#10;")


def oai_response(records: Iterable[str], namespace: str | None = OAI) -> bytes:
    """An OAI-PMH ListRecords response holding ``records`` (cut-out ``<record>`` elements, read in its namespace);
    ``namespace=None``: the same without the OAI namespace, as a dump whose records carry none was written."""
    body, declared = "".join(records), f' xmlns="{namespace}"' if namespace else ""
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH{declared}><responseDate>2026-01-05T00:00:00Z'
            f'</responseDate><request verb="ListRecords">https://hub.example.org/oai</request><ListRecords>{body}'
            "</ListRecords></OAI-PMH>\n").encode("utf-8")


def deleted_oai_record(identifier: str) -> str:
    return (f'<record><header status="deleted"><identifier>{identifier}</identifier>'
            "<datestamp>2026-01-04</datestamp></header></record>")


def write_zip(path: Path, members: Mapping[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def write_tar(path: Path, members: Mapping[str, bytes], mode: str = "w:gz") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def write_gz(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data))
    return path


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def upload_folder(client, bucket: str, prefix: str, folder: Path) -> list[str]:
    """Every file below ``folder`` to ``s3://bucket/prefix/<relative path>``; the keys, sorted."""
    client.create_bucket(Bucket=bucket)
    keys = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        key = f"{prefix}/{path.relative_to(folder).as_posix()}"
        client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        keys.append(key)
    return keys


# ---- the XML hubs' records ----------------------------------------------------------------------------------

def marc_collection(ids: Iterable[str]) -> bytes:
    """HathiTrust's MARC XML: a ``<collection>`` of the fixture record, one per 001 control number."""
    record = without_declaration(fixture_text("hathi.xml"))
    old = etree.fromstring(record.encode()).findtext(f"{{{MARC}}}controlfield[@tag='001']")
    records = "".join(xml_variant(record, old, new) for new in ids)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<collection xmlns="{MARC}">{records}</collection>\n'.encode()


def nara_export(ids: Iterable[str], *, undigitised: Iterable[str] = (), av: Iterable[str] = (),
                units: Iterable[str] = ()) -> bytes:
    """A NARA description export file: items of the fixture, one per naId, then ``av`` itemAv and ``units`` fileUnit
    descriptions with digital objects (reconstructed: the fixture item's fields under those elements, as NARA's
    description schema shares them), plus items and a file unit without digital objects (which ingestion3's
    harvesters leave out)."""
    item = without_declaration(fixture_text("nara.xml"))
    old = etree.fromstring(item.encode()).findtext(f"{{{NARA}}}naId")
    items = [xml_variant(item, old, new) for new in ids]
    for kind, naids in (("itemAv", av), ("fileUnit", units)):
        for naid in naids:
            record = etree.fromstring(xml_variant(item, old, naid).encode())
            record.tag = f"{{{NARA}}}{kind}"
            items.append(etree.tostring(record, encoding="unicode"))
    for naid in undigitised:
        bare = etree.fromstring(xml_variant(item, old, naid).encode())
        bare.remove(bare.find(f"{{{NARA}}}digitalObjectArray"))
        items.append(etree.tostring(bare, encoding="unicode"))
    items.append(f'<fileUnit xmlns="{NARA}"><naId>900000001</naId><title>a file unit, not digitised</title></fileUnit>')
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<export>{"".join(items)}</export>\n'.encode()


def nara_deletes(ids: Iterable[str]) -> bytes:
    """A NARA delete list (``NAC_DESC_Deletes_NNN.xml``): the naIds to delete, as ``<naId>`` elements (all that
    ingestion3's readers take from it, ``xml \\\\ "naId"``)."""
    body = "".join(f"<description><naId>{naid}</naId></description>" for naid in ids)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<deletes>{body}</deletes>\n'.encode()


# ---- each file hub's delivery, as its ingestion3 harvester reads it -------------------------------------------

@dataclass(frozen=True)
class Shape:
    """A delivery written to ``folder``: the ids its harvest brings, in order, those of them that are deletions (a
    delete list's), and the records its status marks deleted (left out by ``action: drop``, ingestion3's way, or
    kept as deletions by ``action: delete``)."""

    folder: Path
    ids: list[str]
    statused: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def set_at(*keys: str) -> Callable[[dict, str], None]:
    """Puts an id at each of the dotted ``keys`` of a JSON record."""
    def put(record: dict, value: str) -> None:
        for key in keys:
            *parents, last = key.split(".")
            node = record
            for parent in parents:
                node = node[parent]
            node[last] = value
    return put


def with_status(record: dict, status: str) -> dict:
    return {**record, "status": status}


def community_webs(folder: Path) -> Shape:
    """CommunityWebsHarvester: zips of a JSON array one record a line; the fifth record is deleted."""
    ids = [f"archive-it::seed:{n}" for n in range(1, 6)]
    records = json_variants("community-webs.json", ids, set_at("id"))
    write_zip(folder / "2026-01.zip", {"export/part-1.json": jsonl(records[:3], array=True)})
    write_zip(folder / "2026-02.zip", {"part-2.json": jsonl([records[3], with_status(records[4], "deleted")], array=True)})
    return Shape(folder, ids[:4], ids[4:])


def georgia(folder: Path) -> Shape:
    """DlgFileHarvester: .jsonl files and zips of JSON lines (two of DLG's fixture records)."""
    plain = json_variants("dlg.json", ["aaa_agpapers_1016", "aaa_agpapers_1017"], set_at("id"))
    zipped = json_variants("dlg_missing_preview.json", ["dlg_vang_1", "dlg_vang_2", "dlg_vang_3"], set_at("id"))
    write(folder / "dlg-2026-01-01.jsonl", jsonl(plain))
    write_zip(folder / "dlg-2026-01-01.zip", {"a.jsonl": jsonl(zipped[:2]), "b.jsonl": jsonl([with_status(zipped[2], "deleted")])})
    return Shape(folder, ["aaa_agpapers_1016", "aaa_agpapers_1017", "dlg_vang_1", "dlg_vang_2"], ["dlg_vang_3"])


def lc(folder: Path) -> Shape:
    """DplaJsonlFileHarvester: zips of DPLA JSON lines, each an index hit (ingestion3's json-retcon/lc.json) whose
    ``_id`` is ``lc--<id>``; reconstructed: ingestion3's fixture hit under the ``_id`` the harvester reads."""
    hit = fixture_json("json-retcon/lc.json")
    old = hit["_source"]["id"]
    ids = [f"{old[:-1]}{n}" for n in range(4)]
    records = []
    for local_id in ids:
        record = json.loads(json.dumps(hit).replace(old, local_id))
        record["_id"] = f"lc--{local_id}"
        records.append(record)
    write_zip(folder / "lc.zip", {"lc-0.jsonl": jsonl(records[:2]), "lc-1.jsonl": jsonl(records[2:])})
    return Shape(folder, ids)


def florida(folder: Path) -> Shape:
    """FlFileHarvester: .jsonl and .zip files (an S3 prefix); the id is sourceResource.identifier."""
    ids = [f"http://purl.flvc.org/fsu/fd/FSU_{n}" for n in range(5)]
    records = json_variants("fl.json", ids, set_at("sourceResource.identifier", "isShownAt"))
    write(folder / "SSDN-2026-05-24.jsonl", jsonl(records[:2]))
    write_zip(folder / "SSDN-2026-05-25.zip", {"ssdn.jsonl": jsonl([*records[2:4], with_status(records[4], "deleted")])})
    return Shape(folder, ids[:4], ids[4:])


def heartland(folder: Path) -> Shape:
    """HeartlandFileHarvester (Missouri + Iowa): .jsonl files and zips of JSON lines; the id is ``@id``; files in name
    order (ia.zip, then mo.jsonl)."""
    ids = [f"missouri--urn:data.mohistory.org:msu_all:{n}" for n in range(4)]
    records = json_variants("mo.json", ids, set_at("@id"))
    write(folder / "mo.jsonl", jsonl(records[:2]))
    write_zip(folder / "ia.zip", {"ia.jsonl": jsonl([records[2], with_status(records[3], "Deleted")])})
    return Shape(folder, [ids[2], ids[0], ids[1]], [ids[3]])


def nypl(folder: Path) -> Shape:
    """NYPLFileHarvester: one zip of JSON lines whose ``uuid`` is the id, MODS embedded."""
    ids = [f"93cd9a10-c552-012f-20e8-58d385a7bc3{n}" for n in range(3)]
    write_zip(folder / "nypl-export.zip", {"nypl/records.jsonl": jsonl(json_variants("nypl.json", ids, set_at(
        "uuid", "solr_doc_hash.uuid")))})
    return Shape(folder, ids)


def hathi(folder: Path) -> Shape:
    """HathiFileHarvester: a .tar.gz of MARC XML collections, with a macOS ``._`` file and a README beside them."""
    write_tar(folder / "hathi_full_1.tar.gz", {
        "marc/part-1.xml": marc_collection(["009420214", "009420215"]),
        "marc/part-2.xml": marc_collection(["009420216"]),
        "marc/._part-1.xml": b"\x00\x05\x16\x07 macOS resource fork",
        "marc/README": b"not xml: not read",
    })
    return Shape(folder, ["009420214", "009420215", "009420216"])


def nara(folder: Path) -> Shape:
    """NaraFileHarvester: .tar.gz and .tar.bz2 exports (items, one without digital objects, a file unit without any,
    an itemAv and a file unit with them) and a delete list; the newest file first, a deletion before its record."""
    write_tar(folder / "nara_export_2025-04-01.tar.gz", {"group-1.xml": nara_export(["1001", "1002", "1003"], undigitised=["1009"])})
    write_tar(folder / "nara_export_2025-04-29.tar.bz2", {"group-2.xml": nara_export(["1003", "1004"], av=["1005"],
                                                                                      units=["1006"])}, mode="w:bz2")
    write(folder / "deletes" / "NAC_DESC_Deletes_001.xml", nara_deletes(["1002"]))
    return Shape(folder, ["1002", "1003", "1004", "1005", "1006", "1001"], deleted=["1002"])


def oai_dump(folder: Path, fixture: str, namespace: str | None) -> Shape:
    """OaiFileHarvester: a zip of OAI-PMH responses (two pages) and a .gz of one response with a deleted record."""
    record = without_declaration(fixture_text(fixture)).strip()
    old = etree.fromstring(record.encode(), etree.XMLParser(recover=True)).findtext("header/identifier")
    ids = [f"{old}-{n}" for n in range(4)]
    variants = [xml_variant(record, old, new) for new in ids]
    write_zip(folder / "2026-01.zip", {"page-1.xml": oai_response(variants[:2], namespace),
                                       "page-2.xml": oai_response(variants[2:3], namespace)})
    write_gz(folder / "2026-02.xml.gz", oai_response([variants[3], deleted_oai_record(f"{old}-gone")], namespace))
    return Shape(folder, ids, [f"{old}-gone"])


def jh3(folder: Path) -> Shape:
    """OaiXmllHarvester: pyoaiharvester's output broken into lines by xmll, one OAI record a line, plain and gzipped."""
    record = one_line(fixture_text("jh3.xml"))
    ids = [f"blavatnik_postcards:1013{n}" for n in range(3)]
    lines = [xml_variant(record, "blavatnik_postcards:10131", new) for new in ids]
    write(folder / "part-00000.xml", ("\n".join(lines[:2]) + "\n").encode())
    write_gz(folder / "part-00001.xml.gz", (lines[2] + "\n").encode())
    return Shape(folder, ids)


def smithsonian(folder: Path) -> Shape:
    """SiFileHarvester: .xml.gz files of one ``<doc>`` a line (xmll, no root), beside the expected-counts .txt."""
    doc = one_line(fixture_text("si.xml"))
    old = etree.fromstring(doc.encode()).findtext("descriptiveNonRepeating/record_ID")
    ids = [f"{old}{n}" for n in range(5)]
    write_gz(folder / "ACM_DPLA.xml.gz", ("\n".join(xml_variant(doc, old, new) for new in ids[:3]) + "\n").encode())
    write_gz(folder / "CHNDM_DPLA.xml.gz", ("\n".join(xml_variant(doc, old, new) for new in ids[3:])).encode())
    write(folder / "counts.txt", b"ACM_DPLA.xml records = 3\nCHNDM_DPLA.xml records = 2\n")
    return Shape(folder, ids)


# the fixture of each hub whose zips hold one record a member, and the id its profile reads in it
ONE_RECORD_FIXTURES = {"virginias": ("virginias.xml", "uva-lib:1002813"),
                       "ct": ("ct.xml", "http://hdl.handle.net/11134/20002:1323"),
                       "vt": ("vt.xml", "http://archive.org/details/hhfbc-c7")}


def one_record_zips(folder: Path, hub: str) -> Shape:
    """VaFileHarvester (virginias, ct) and VtFileHarvester (vt): zips whose every member is one XML record, the
    member's name its id (each record's own id in it made its own)."""
    fixture, old = ONE_RECORD_FIXTURES[hub]
    text = fixture_text(fixture)
    ids = [f"records/{hub}-{n}.xml" for n in range(4)]
    records = [xml_variant(text, old, f"{old}-{n}").encode() for n in range(4)]
    write_zip(folder / "batch-1.zip", dict(zip(ids[:3], records[:3], strict=True)))
    write_zip(folder / "batch-2.zip", {ids[3]: records[3]})
    return Shape(folder, ids)
