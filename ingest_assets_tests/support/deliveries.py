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


def nara_export(ids: Iterable[str], *, undigitised: Iterable[str] = ()) -> bytes:
    """A NARA description export file: items of the fixture, one per naId, plus items and a file unit without
    digital objects (which ingestion3's harvesters leave out)."""
    item = without_declaration(fixture_text("nara.xml"))
    old = etree.fromstring(item.encode()).findtext(f"{{{NARA}}}naId")
    items = [xml_variant(item, old, new) for new in ids]
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
