"""Probe-based well-posedness checker (TRIAD §3.2, App. D.2, G.1–G.6): a second opinion and a gate.

Every item is shown to an omni model in 8 views (``none``, the single modalities, the pairs, the full
triplet) with TRIAD's P0 prompt and literal placeholders for hidden modalities (``prompts``). A backend
(``backends``: replay, transformers, vllm, openai) answers each view with K samples or with the exact
option log-probabilities of one constrained prefill; ``estimators`` turn those into consistent option
sets, ``verdicts`` into ``label_mismatch`` / ``underdetermined`` / ``reducible`` / ``well_posed``.
Raw outputs are cached in the workspace (``cache``, table ``probe_result``), so re-runs probe only what
changed and a killed run resumes; each item's latest verdict is its ``probe`` gate result (``check``).
Entry point: ``curate check --probe BACKEND``.
"""
