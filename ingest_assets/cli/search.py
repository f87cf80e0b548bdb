"""``ingest-assets search QUERY``: query the search index from the command line."""

from __future__ import annotations

import json
import sys

from ingest_assets.cli.main import Parser
from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index
from ingest_assets.records.indexing.search_index import MAX_HITS
from ingest_assets.core.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets search", description=__doc__)
    parser.add_argument("query", help="words that must all match; \"a phrase\", prefix*; '*' lists documents")
    parser.add_argument("--index", help="index directory or Elasticsearch URL (default: INGEST_SEARCH setting)")
    parser.add_argument("--alias", default=DEFAULT_ALIAS, help=f"alias to query (default {DEFAULT_ALIAS})")
    parser.add_argument("--size", type=int, default=10, help=f"maximum hits (default 10, at most {MAX_HITS})")
    parser.add_argument("--json", action="store_true", help="print whole documents as JSON lines")
    args = parser.parse_args(argv)
    if not 0 < args.size <= MAX_HITS:
        parser.error(f"--size must be 1 to {MAX_HITS}")
    index = open_search_index(args.index or Settings.current().search)
    try:
        hits = index.search(args.alias, args.query, size=args.size)
        total = index.count(args.alias)
    finally:
        index.close()
    for doc in hits:
        if args.json:
            print(json.dumps(doc, ensure_ascii=False, sort_keys=True))
        else:
            source = doc.get("sourceResource", {})
            title = " / ".join(source.get("title", []))
            provider = doc.get("dataProvider", {}).get("name") or doc.get("provider", {}).get("name", "")
            print(f"{doc.get('id')}\t{title}\t{provider}\t{doc.get('isShownAt', '')}")
    print(f"{len(hits)} hit(s) shown, {total} document(s) in {args.alias!r}", file=sys.stderr)
    return 0

