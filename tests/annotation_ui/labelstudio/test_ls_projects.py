"""Pieces of the bridge that need no server."""

from annotation_ui.labelstudio.projects import annotator_email


def test_annotator_is_found_whether_completed_by_is_an_id_or_an_object() -> None:
    users = {7: "rev1@lab.org"}
    assert annotator_email({"completed_by": 7}, users) == ("rev1@lab.org", "rev1@lab.org")
    assert annotator_email({"completed_by": {"id": 7, "email": "x"}}, users) == ("rev1@lab.org", "rev1@lab.org")
    assert annotator_email({"completed_by": 9}, users) == ("", "#9")
    assert annotator_email({}, users) == ("", "#None")
