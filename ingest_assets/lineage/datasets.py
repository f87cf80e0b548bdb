"""A dataset's lineage: the stored files and result, the manifest, the platform API answers it came from,
the terminal landing page and the request, from the lineage document its latest processing wrote."""

from __future__ import annotations

import json

from ingest_assets.datasets.model import INGEST_TYPE
from ingest_assets.core.errors import NotFoundError
from ingest_assets.lineage import Lineage, Step
from ingest_assets.storage import Storage
from ingest_assets.storage.layout import dataset_lineage_key


def dataset_lineage(storage: Storage, base_url: str, ingest_type: str = INGEST_TYPE) -> Lineage:
    key = dataset_lineage_key(ingest_type, base_url)
    if not storage.exists(key):
        raise NotFoundError("no processed dataset request for this base_url", file=storage.uri(key), record=base_url)
    doc = json.loads(storage.read_bytes(key))
    files = doc.get("manifest") or []
    warcs = sorted({storage.uri(f["extra"]["warc"]) for f in files if "warc" in f.get("extra", {})})
    stored = doc.get("item_bundle_path") or doc.get("item_name") or ", ".join(warcs)
    steps = [
        Step("dataset result", stored, {key: doc.get(key) for key in (
            "status", "hit", "ingest_strategy", "platform", "platform_domain", "platform_id", "file_count", "total_size",
            "software_version")}),
        Step("manifest", doc.get("platform_id") or base_url, {"files": files}),
        *(Step("platform API response", answer["url"], {k: v for k, v in answer.items() if k != "url"})
          for answer in doc.get("api_responses", [])),
        Step("terminal page", doc.get("terminal_url") or "", {
            "status": doc.get("terminal_status_code"), "fetched": doc.get("terminal_dt"), "sha1": doc.get("terminal_sha1hex"),
            "hops": doc.get("hops", [])}),
        Step("request", base_url, doc.get("request") or {}),
    ]
    return Lineage(f"dataset {base_url}", steps)
