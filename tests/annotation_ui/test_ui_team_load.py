"""The team test (issue 21): eight people in real Chromium answer the blind checks of one shared queue at once
for a minute on PostgreSQL. Every Submit click is either recorded once or told why not; no record is lost,
silent or doubled; no page and no websocket frame a blind reviewer receives carries a label marker."""

from __future__ import annotations

import pytest
from ui_helpers import chromium_path

from devsupport.ui_team import build_team_workspace, problems, run_team, serve, summary, team_names

pytestmark = pytest.mark.browser
PEOPLE, SECONDS, ITEMS = 8, 60, 48


@pytest.mark.parametrize("db_backend", ["postgres"])
def test_eight_people_on_one_blind_queue_for_a_minute(workspace, tmp_path, db_backend):
    chromium = chromium_path()
    if chromium is None:
        from tests.conftest import missing_service

        missing_service("no chromium: install Debian's `chromium` package or set CURATE_CHROMIUM", "browser")
    build_team_workspace(workspace, tmp_path / "src", ITEMS, PEOPLE)
    with serve(workspace.root, tmp_path / "streamlit.log") as url:
        run = run_team(url, team_names(PEOPLE), SECONDS, chromium)
    figures = summary(run)
    print(figures)  # the closing note's figures (pytest -s)
    assert problems(workspace, run) == []
    assert figures["recorded"] >= PEOPLE  # everyone got work done, not only refusals
    assert figures["told"] > 0  # overlapping queues: someone else's record was told, never silent
    assert {c.person for c in run.clicks} == set(team_names(PEOPLE))
