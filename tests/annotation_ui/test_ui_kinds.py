"""One app for every kind, through AppTest: what each page shows and keeps to itself (server paths, sample ids,
tracebacks), guidelines panels, plain-word form errors and the shortcuts each high-volume page declares."""

from __future__ import annotations

import logging

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import APP, advance

from annotation_ui.components import USER_KEY
from annotation_ui.logic import SignedIn


@pytest.fixture(autouse=True)
def _workspace_env(monkeypatch, request):
    for name in ("ui_workspace",):
        if name in request.fixturenames:
            monkeypatch.setenv("CURATE_WORKSPACE", str(request.getfixturevalue(name).root))


def open_page(page: str | None, name: str | None = None, roles: tuple[str, ...] = ()) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    if name:
        at.session_state[USER_KEY] = SignedIn(name, frozenset(roles))
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def wire(at: AppTest) -> str:
    """Every element the server sent, as its protobuf text: labels, options, values and widget ids alike."""
    return "\n".join(str(getattr(node, "proto", "")) for block in (at.main, at.sidebar) for node in block)


def test_the_server_path_is_shown_to_maintainers_only(ui_workspace):
    root = str(ui_workspace.root)
    assert root not in wire(open_page(None))  # signed out
    assert root not in wire(open_page(None, "rev1", ("reviewer",)))
    assert any(root in c.value for c in open_page(None, "maya", ("maintainer", "reviewer")).sidebar.caption)


def test_a_failing_page_names_the_error_and_logs_it_never_a_traceback(ui_workspace, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError(f"boom in {ui_workspace.root}/curate.db")

    monkeypatch.setattr("annotation_ui.logic.queue_report_from", broken)
    with caplog.at_level(logging.ERROR, logger="annotation_ui"):
        at = open_page(None, "rev1", ("reviewer",))  # through app.py (switch_page would run the page alone)
    assert at.title[0].value == "Grammar pass"  # a reviewer's first page
    assert not at.exception  # Streamlit's own error box (with its traceback) never appears
    [error] = at.error
    assert "unexpected error (RuntimeError)" in error.value and "reference" in error.value
    assert str(ui_workspace.root) not in wire(at) and "Traceback" not in wire(at)
    reference = error.value.split("reference ")[1].split(":")[0]
    [logged] = [r for r in caplog.records if reference in r.getMessage()]
    assert logged.exc_info is not None and "boom in" in str(logged.exc_info[1])  # the details stay on the server


def test_guidelines_panel_on_a_stage_page(ui_workspace):
    at = open_page("grammar", "rev1", ("reviewer",))
    assert not at.expander  # none written: no panel
    folder = ui_workspace.root / "guidelines"
    folder.mkdir()
    (folder / "grammar.md").write_text("Fail options that are **not parallel**.", encoding="utf-8")
    at = open_page("grammar", "rev1", ("reviewer",))
    [panel] = at.expander
    assert panel.label == "Guidelines"
    assert [m.value for m in panel.markdown] == ["Fail options that are **not parallel**."]  # maintainer Markdown


def test_author_form_errors_in_the_forms_own_words(ui_workspace):
    at = open_page("author", "ann2", ("author",))
    next(b for b in at.button if b.label == "Save item").click().run()
    errors = [e.value for e in at.error]
    assert "Ambiguous modalities: choose at least 1 entry; none is given" in errors, errors
    assert not any("after validation" in e or e.startswith("ambiguous:") for e in errors), errors


def test_shortcuts_are_declared_and_said_on_the_page(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev1", ("reviewer",))
    shortcuts = {b.label: b.proto.shortcut for b in at.main.button}
    assert shortcuts == {"Previous view": "p", "Next view": "n", "Submit checklist": "ctrl+enter"}
    assert any(c.value.startswith("Keyboard: 1–5 tick an option") for c in at.caption)
    assert "data-omni-keys" in wire(at)  # the 1–9 keys script


def test_the_mcq_dashboard_counts_mcq_stages_only(ui_workspace):
    at = open_page("dashboard", "maya", ("maintainer", "reviewer"))
    [funnel, *_] = at.get("plotly_chart")
    assert '"grammar"' in funnel.proto.spec
    for other in ("filter", "revise", "checklist_curation", "response_review"):
        assert f'"{other}"' not in funnel.proto.spec, other
