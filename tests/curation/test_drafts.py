"""Drafts on SQLite and PostgreSQL: kept per person, page and subject, replaced, dropped, and the newest one per
page found (where the judge score and pair pages resume after a reload)."""

from __future__ import annotations

import time

import pytest

from curation.drafts import MAX_DRAFT_CHARS, discard_draft, load_draft, newest_draft, save_draft
from curation.errors import ValidationFailed


def test_drafts_are_per_person_page_and_subject_and_the_newest_is_found(workspace):
    for name in ("ann1", "ann2"):
        workspace.add_person(name, ["reviewer"])
    assert newest_draft(workspace, "ann1", "judge_score") is None
    save_draft(workspace, "ann1", "judge_score", "s:a", {"overall": 2})
    time.sleep(0.01)
    save_draft(workspace, "ann1", "judge_score", "s:b", {"clarity": 5, "note": "清楚"})
    save_draft(workspace, "ann2", "judge_score", "s:a", {"overall": 4})
    save_draft(workspace, "ann1", "judge_pair", "p:a", {"overall": "tie"})
    assert newest_draft(workspace, "ann1", "judge_score") == "s:b"
    assert load_draft(workspace, "ann1", "judge_score", "s:b") == {"clarity": 5, "note": "清楚"}
    time.sleep(0.01)
    save_draft(workspace, "ann1", "judge_score", "s:a", {"overall": 3})  # a change makes it the newest again
    assert newest_draft(workspace, "ann1", "judge_score") == "s:a"
    assert load_draft(workspace, "ann2", "judge_score", "s:a") == {"overall": 4}, "another person's is their own"
    discard_draft(workspace, "ann1", "judge_score", "s:a")
    assert load_draft(workspace, "ann1", "judge_score", "s:a") is None
    assert newest_draft(workspace, "ann1", "judge_score") == "s:b"
    assert newest_draft(workspace, "ann1", "judge_pair") == "p:a"
    with pytest.raises(ValidationFailed, match=f"at most {MAX_DRAFT_CHARS} characters"):
        save_draft(workspace, "ann1", "judge_score", "s:c", {"note": "x" * MAX_DRAFT_CHARS})
    assert load_draft(workspace, "ann1", "judge_score", "s:c") is None
