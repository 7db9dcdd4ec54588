"""The team test (issues 21 and 39): eight people in real Chromium answer the blind checks of one shared queue at
once for a minute, on SQLite and PostgreSQL. Every Submit click is either recorded once or told why not; no record
is lost, silent or doubled; no item gets more records than the stage's quorum; pages offer different people
different items, so at most 10 % of submissions are refused after the work was done; no page and no websocket
frame a blind reviewer receives carries a label marker."""

from __future__ import annotations

import pytest
from ui_helpers import chromium_path

from devsupport.ui_team import build_team_workspace, problems, run_team, serve, summary, team_names

pytestmark = pytest.mark.browser
PEOPLE, SECONDS, ITEMS = 8, 60, 48


def test_eight_people_on_one_blind_queue_for_a_minute(workspace, tmp_path, db_backend):
    chromium = chromium_path()
    if chromium is None:
        from tests.conftest import missing_service

        missing_service("no chromium: install Debian's `chromium` package or set CURATE_CHROMIUM", "browser")
    build_team_workspace(workspace, tmp_path / "src", ITEMS, PEOPLE)
    with serve(workspace.root, tmp_path / "streamlit.log") as url:
        run = run_team(url, team_names(PEOPLE), SECONDS, chromium)
    figures = summary(run, workspace)
    print(figures)  # the closing note's figures (pytest -s)
    assert problems(workspace, run) == []
    assert figures["surplus"] == 0  # a quorum of one took one record per item, whatever the timing
    assert figures["recorded"] >= PEOPLE  # everyone got work done, not only refusals
    assert figures["refused_share"] <= 0.10  # reserved work: people are offered different items
    assert {c.person for c in run.clicks} == set(team_names(PEOPLE))
