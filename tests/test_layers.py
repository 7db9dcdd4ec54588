"""The import-linter contracts of pyproject.toml hold, and they do catch a domain module importing a shell."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run bare in ``root`` (it reads ``[tool.importlinter]`` from its pyproject.toml)."""
    script = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True)


def test_the_tree_keeps_every_contract() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("curation/_shell_import.py", "import exports.build\n", "Layers"),
        ("checker/_sibling_import.py", "import annotation_ui.logic\n", "Layers"),
        ("curation/_ui_import.py", "import streamlit\n", "The domain knows nothing"),
        ("exports/_helper_import.py", "import devsupport.reviews\n", "The product never imports"),
        ("checker/_cycle.py", "from checker import run\n", None),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path, module: str, line: str, contract: str | None) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if contract is None:  # a cycle between siblings: run imports the new module, which imports run back
        (tmp_path / "checker/run.py").write_text((ROOT / "checker/run.py").read_text() + "\nfrom . import _cycle\n")
        contract = "No cycles"
    (tmp_path / module).write_text(line)
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [line for line in result.stdout.splitlines() if line.endswith("BROKEN")]
    assert any(line.startswith(contract) for line in broken), result.stdout + result.stderr


def test_an_import_inside_a_function_that_closes_a_circle_breaks_the_module_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    facts = tmp_path / "curation/facts.py"  # the workflow reads the facts: a late import of it closes a circle
    facts.write_text(facts.read_text() + "\n\ndef _late():\n    from .workflow import derive_status\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [line for line in result.stdout.splitlines() if line.endswith("BROKEN")]
    assert broken == ["No import circle between single modules (imports inside functions count) BROKEN"], broken
    assert "- curation.facts -> curation.workflow" in result.stdout
