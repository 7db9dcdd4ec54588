"""Screening candidate story transitions (Omni-StoryBench §4.1, App. C–D) down to a reviewed benchmark.

Kind-independent domain parts: the transition schema with model provenance, candidates as light rows,
rule filters, the App. C audits, selection, and the declared screening pipeline with its funnel.
"""
