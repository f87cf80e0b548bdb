"""Run one repository ingest interval as its own process (the spec's "every harvesting starts its own
process" option): ``ingest-assets repository --template-index URL [...]`` (or ``--wiki-api URL``
/ ``--export FILE`` with ``--base-url``: a wiki read directly).

Prints a JSON summary; exit status 0 = done, 3 = refused (another ingest is running), 1 = units failed.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from ingest_assets.cli.main import Parser
from ingest_assets.core.errors import UsageError

from ingest_assets.core.http import HttpClient
from ingest_assets.repository import open_repository
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.ingest import IngestSettings, RepositoryIngest
from ingest_assets.repository.mediawiki import MediaWikiApi, WikiTemplateSource
from ingest_assets.repository.template_index import TemplateIndexClient
from ingest_assets.repository.validation import load_vocabularies
from ingest_assets.core.settings import Settings
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import open_storage


def main(argv: list[str] | None = None) -> int:
    settings = Settings.current()
    parser = Parser(prog="ingest-assets repository", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--template-index", help="TemplateParameterIndex URL")
    source.add_argument("--wiki-api", help="MediaWiki api.php URL (read the wiki directly)")
    source.add_argument("--export", help="MediaWiki Special:Export XML file")
    parser.add_argument("--base-url", help="the wiki's page URL prefix (with --wiki-api / --export)")
    parser.add_argument("--provider", default="k2n", help="registry name (report paths)")
    parser.add_argument("--database", default=settings.database_url)
    parser.add_argument("--repository", default=settings.repository, help="OCFL root or Fedora URL")
    parser.add_argument("--storage", default=settings.storage_url)
    parser.add_argument("--vocabularies", default=None, help="folder of vocabulary XML files")
    parser.add_argument("--language", default="en", help="default language of keys")
    parser.add_argument("--max-duration", type=float, default=24 * 3600, help="MaximumIngestDuration (s)")
    parser.add_argument("--start", type=datetime.fromisoformat, default=None, help="first `from` (ISO)")
    parser.add_argument("--allow-private", action="store_true", help="allow 127.0.0.1/private sources")
    args = parser.parse_args(argv)
    if not args.template_index and not args.base_url:
        parser.error("--base-url is needed with --wiki-api / --export")
    if args.export and not Path(args.export).is_file():
        raise UsageError(f"{args.export}: no such file", hint="--export takes a MediaWiki Special:Export XML file")
    http = HttpClient(allow_private=args.allow_private)
    if args.template_index:
        records = TemplateIndexClient(args.template_index, http, provider=args.provider)
    elif args.wiki_api:
        records = WikiTemplateSource.from_api(MediaWikiApi(args.wiki_api, http), base_url=args.base_url)
    else:
        records = WikiTemplateSource.from_export(args.export, base_url=args.base_url)
    engine = make_engine(args.database)
    service = RepositoryIngest(
        IngestSettings(source=args.template_index or args.wiki_api or args.export, provider=args.provider,
                       default_language=args.language, start=args.start),
        source=records, repository=open_repository(args.repository, auth=settings.fedora_auth()), index=ObjectIndex(engine),
        bookkeeping=Bookkeeping(engine, max_duration=timedelta(seconds=args.max_duration)),
        vocabularies=load_vocabularies(args.vocabularies), storage=open_storage(args.storage),
    )
    result = service.run()
    summary = {
        "refused": result.refused,
        "since": result.since.isoformat() if result.since else None,
        "until": result.until.isoformat() if result.until else None,
        "units": [{"kind": o.kind, "uri": o.uri, "pid": o.pid, "ingested": o.ingested, "skipped": o.skipped,
                   "error": o.error} for o in result.outcomes],
        "problems": result.problems,
    }
    print(json.dumps(summary))
    return 3 if result.refused else (1 if result.failed else 0)


if __name__ == "__main__":
    sys.exit(main())
