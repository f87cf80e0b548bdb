"""``python -m ingest_assets.cli ...`` is ``ingest-assets ...``."""

import sys

from ingest_assets.cli.main import main

sys.exit(main())
