"""Engines that run mapping, enrichment and indexing: in this process or on Spark, over one set of step functions."""
