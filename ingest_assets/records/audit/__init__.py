"""The books of the record pipeline: per-day counts, the count-drop gate and the reconciliation checks."""
