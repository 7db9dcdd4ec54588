"""The CLI as users meet it: the demo, --json shapes, exit codes, workspace choice and help texts."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

runner = CliRunner()


def invoke(*args: str, env: dict | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def test_demo_shows_the_whole_flow(demo_workspace: Workspace) -> None:
    result = invoke("-w", str(demo_workspace.root), "status", "--json")
    assert result.exit_code == 0
    rows = {r["id"]: r for r in json.loads(result.stdout)}
    assert set(rows["kitchen-01-a"]) == {"id", "group", "kind", "state", "stage", "reasons"}
    states = {k: (v["state"], v["stage"]) for k, v in rows.items()}
    assert states["kitchen-01-a"] == states["kitchen-01-b"] == ("admitted", None)
    reasons = {k: v["reasons"] for k, v in rows.items()}
    assert "reducible:image" in reasons["door-01-a"]
    # one checklist reviewer of three finds B consistent with everything: `any` and `majority` disagree
    assert reasons["traffic-01-b"] == ["checklist:disagreement", "probe:underdetermined"]
    assert rows["traffic-01-b"]["state"] == "held"
    assert reasons["kitchen-01-b"] == ["probe:reducible"]  # the replayed probe's second opinion warns
    assert reasons["stress-01-c"] == ["audio_unnatural:naturalness"]
    assert "group:multiple_perturbed" in reasons["bank-01-a"]
    assert "tts_only_audio" in reasons["bank-01-c"]
    assert reasons["stress-01-a"] == ["group:sister_pending"]
    funnel = json.loads(invoke("-w", str(demo_workspace.root), "funnel", "--json").stdout)
    assert funnel["states"] == {"in_review": 4, "returned": 5, "held": 1, "admitted": 2, "discarded": 0}
    assert funnel["admission_rate"] == round(2 / 12, 4)
    assert {r["reason"] for r in funnel["reasons"]} >= {"checklist:disagreement", "group:sister_pending"}
    assert sum(c.get("returned", 0) for c in funnel["stages"].values()) == 5


def test_demo_twice_changes_nothing(tmp_path: Path) -> None:
    first = invoke("demo", str(tmp_path / "d"))
    assert first.exit_code == 0 and "12 created" in first.stderr
    second = invoke("demo", str(tmp_path / "d"))
    assert second.exit_code == 0 and "12 unchanged" in second.stderr and "101 unchanged" in second.stderr


def test_workspace_from_option_env_or_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke("init", str(tmp_path / "w")).exit_code == 0
    assert invoke("-w", str(tmp_path / "w"), "people", "add", "ann1", "--role", "author").exit_code == 0
    by_env = invoke("people", "list", "--json", env={"CURATE_WORKSPACE": str(tmp_path / "w")})
    assert json.loads(by_env.stdout)[0]["name"] == "ann1"
    monkeypatch.chdir(tmp_path / "w")
    monkeypatch.delenv("CURATE_WORKSPACE", raising=False)
    assert json.loads(invoke("people", "list", "--json").stdout)[0]["roles"] == ["author"]
    monkeypatch.chdir(tmp_path)
    missing = invoke("status")
    assert missing.exit_code == 2 and "is not a workspace" in missing.stderr


def test_bad_input_exits_2_with_every_problem(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "w"))
    invoke("-w", str(tmp_path / "w"), "people", "add", "ann1", "--role", "author")
    path = write_items(tmp_path / "in", [item_row("a", answer="X"), item_row("b", options={"A": "one"})])
    result = invoke("-w", str(tmp_path / "w"), "import", "items", str(path))
    assert result.exit_code == 2
    assert f"{path}:1: answer:" in result.stderr and f"{path}:2: options:" in result.stderr
    assert "nothing was imported" in result.stderr
    bad_role = invoke("-w", str(tmp_path / "w"), "people", "add", "x", "--role", "king")
    assert bad_role.exit_code == 2 and "unknown role 'king'" in bad_role.stderr


def test_json_output_is_one_plain_document(
    tmp_path: Path, curate_process: Callable[..., subprocess.Popen[str]]
) -> None:
    def curate(*args: str) -> str:
        run = curate_process(*args, env={"COLUMNS": "40"})
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        return out

    curate("init", str(tmp_path / "w"))
    curate("-w", str(tmp_path / "w"), "people", "add", "ann1", "--role", "author")
    path = write_items(tmp_path / "in", [item_row(f"a-very-long-identifier-{i}") for i in range(3)])
    curate("-w", str(tmp_path / "w"), "import", "items", str(path))
    rows = json.loads(curate("-w", str(tmp_path / "w"), "status", "--json"))
    assert [r["state"] for r in rows] == ["in_review"] * 3 and rows[0]["stage"] == "grammar"


def _commands(group, prefix: str = ""):  # type: ignore[no-untyped-def]
    out = []
    for name, cmd in group.commands.items():
        out.append((f"{prefix}{name}", cmd))
        if hasattr(cmd, "commands"):
            out += _commands(cmd, f"{prefix}{name} ")
    return out


def test_every_command_and_option_has_help() -> None:
    import typer.main

    root = typer.main.get_command(app)
    commands = _commands(root)
    assert {"init", "status", "import items", "review queue", "people add"} <= {name for name, _ in commands}
    missing = []
    for name, cmd in commands:
        if not (cmd.help or cmd.short_help):
            missing.append(name)
        for param in cmd.params:
            if type(param).__name__.endswith("Option") and not param.help:
                missing.append(f"{name} {param.opts[0]}")
    assert missing == []


def test_unknown_schema_revision_is_refused(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "w")
    with ws.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999_future'")
    ws.close()
    result = invoke("-w", str(tmp_path / "w"), "status")
    assert result.exit_code == 2 and "cannot upgrade the workspace database" in result.stderr


def test_empty_database_is_upgraded_in_place(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "w")
    ws.close()
    (tmp_path / "w" / "curate.db").unlink()
    result = invoke("-w", str(tmp_path / "w"), "status", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_head_revision_read_from_the_scripts_matches_alembic() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from curation import db

    cfg = Config()
    cfg.set_main_option("script_location", str(db.MIGRATIONS))
    assert db.head_revision() == ScriptDirectory.from_config(cfg).get_current_head()
