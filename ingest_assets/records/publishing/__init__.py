"""Publishing a hub can trust (DPLA's Contract 3 and Gates B/C, review before publish, hub-partitioned indexing).

    daily.report_day       a new provider day: registered for review, its report written and mailed
    review.Ledger          each provider day's way to the public (pending, approved, rejected, published)
    candidates             a provider's candidate index: its live index copied, the run's days applied
    gates                  what a candidate must pass before the alias flips, and the canary after
    promotion.Publisher    gated promotion, automatic rollback, retention, rollback on request
    takedowns              records kept out until undone
    report, render, mail   the provider report (JSON + HTML in _LOGS/, Markdown) and its mail
    status                 per-provider and per-index status models
    journal, tables        what publishing did, in SQL

No Dagster here: ``ingest_assets/defs/records/publishing.py`` wires it, ``ingest_assets/cli`` commands call it.
"""
