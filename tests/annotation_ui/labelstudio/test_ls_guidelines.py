"""A stage's guidelines (``guidelines/<stage>.md``) become its Label Studio project's instructions on push."""

from __future__ import annotations

from pathlib import Path

from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.stages import push_stage
from curation.workspace import Workspace
from tests.annotation_ui.labelstudio.lsfixtures import seed
from tests.annotation_ui.labelstudio.server import LsServer


def test_guidelines_are_sent_as_the_projects_instructions(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    first = push_stage(workspace, connection, "grammar")
    project = ls_env.client().projects.get(first.project_id)
    assert not project.expert_instruction  # no guidelines written yet: nothing sent

    folder = workspace.root / "guidelines"
    folder.mkdir()
    (folder / "grammar.md").write_text(
        "# Grammar pass\n\nFail an item whose options are **not parallel**.\n\n<script>alert(1)</script>\n",
        encoding="utf-8",
    )
    push_stage(workspace, connection, "grammar")
    project = ls_env.client().projects.get(first.project_id)
    assert "<h1>Grammar pass</h1>" in project.expert_instruction
    assert "<strong>not parallel</strong>" in project.expert_instruction
    assert "<script>" not in project.expert_instruction  # raw HTML in the file is not passed through
    assert project.show_instruction is True

    (folder / "grammar.md").write_text("Second edition.\n", encoding="utf-8")
    push_stage(workspace, connection, "grammar")
    assert ls_env.client().projects.get(first.project_id).expert_instruction == "<p>Second edition.</p>\n"
