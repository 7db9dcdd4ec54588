"""The models' image loader (checker.media.load_image) opens every image through the shared door: its header is
checked first, so a decompression bomb is a named MediaError, never Pillow's DecompressionBombError (issue 40)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checker.media import load_image
from curation.config import CONFIG_NAME, Settings
from curation.errors import MediaError
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.media_factory import make_image
from tests.omnicurate.test_cli_strict_inputs import candidates_file, png_bomb


def test_a_bomb_a_huge_header_and_a_fifo_are_named(tmp_path: Path) -> None:
    """Over Pillow's hard limit (which Image.open refuses with its own error) and over a caller's limit, the
    size is named from the header; a FIFO is named as what it is, never waited on."""
    bomb = png_bomb(tmp_path / "bomb.png")  # 3,600 megapixels
    with pytest.raises(MediaError, match=r"bomb.png: the image is 60,000 × 60,000 pixels \(3,600 megapixels\)"):
        load_image(bomb)
    ten = png_bomb(tmp_path / "ten.png", 10_000, 10_000)
    with pytest.raises(MediaError, match=r"ten.png: the image is 10,000 × 10,000 pixels"):
        load_image(ten, max_pixels=40_000_000)
    with pytest.raises(MediaError, match="ten.png: the image is corrupt or truncated"):
        load_image(ten)  # under the hard limit: decoded, and only its header is real
    os.mkfifo(tmp_path / "fifo.png")
    with pytest.raises(MediaError, match=r"fifo.png: it is a FIFO \(a named pipe\)"):
        load_image(tmp_path / "fifo.png")
    make_image(tmp_path / "ok.png", fmt="PNG")
    assert load_image(tmp_path / "ok.png").size == (64, 48)


def test_screen_with_a_model_meets_a_bomb_by_name(workspace: Workspace, tiny_omni: Path, tmp_path: Path) -> None:
    """`curate screen --backend transformers:MODEL`: a candidate's image replaced by a bomb since its import is
    refused by name (exit 2) when the model is to see it, not a traceback from Pillow."""
    candidates = candidates_file(tmp_path / "in", ("a.jpg", "b.jpg"))
    runner = CliRunner()
    base = ["-w", str(workspace.root)]
    assert runner.invoke(app, [*base, "import", "candidates", str(candidates)]).exit_code == 0
    settings = Settings.load(workspace.root / CONFIG_NAME)
    settings.screen.steps = ["score"]
    settings.save(workspace.root / CONFIG_NAME)
    png_bomb(tmp_path / "in" / "b.jpg")
    result = runner.invoke(app, [*base, "screen", "--backend", f"transformers:{tiny_omni}", "--json"])
    assert "Traceback" not in result.output and "DecompressionBomb" not in result.output
    assert result.exit_code == 2, result.output
    assert "b.jpg: the image is 60,000 × 60,000 pixels (3,600 megapixels)" in result.stderr, result.stderr
    assert json.loads(result.stdout or "null") is None
