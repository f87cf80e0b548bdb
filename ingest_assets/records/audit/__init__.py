"""The books of the record pipeline: the count-drop gate and the reconciliation checks (per-day counts are the
layout's own: ``storage.counts``)."""
