"""The ``judge_task`` kind (Judge Anything): any-to-any tasks, curated checklists, reviewed responses,
score and pair samples, and judges measured against people.

This package is domain only: schemas, checklist curation and cross-validation, pair sampling, serving
samples to annotators, video probing and the judge-vs-human report. Shells (CLI, Streamlit pages, model
backends) call into it.
"""

from .kind import JUDGE_TASK  # noqa: E402  (registers the kind)

__all__ = ["JUDGE_TASK"]
