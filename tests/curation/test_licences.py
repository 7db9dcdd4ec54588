"""Issue 40, one open-licence list (curation.licences): what it takes in by default, how a rights line counts as
its SPDX identifier, and the ``[licences]`` settings that replace or extend it."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import LicenceSettings, Settings
from curation.errors import ValidationFailed
from curation.licences import DEFAULT_OPEN_LICENCES, is_open, licence_problem

DEFAULT = list(DEFAULT_OPEN_LICENCES)


@pytest.mark.parametrize(
    "value",
    ["CC0-1.0", "cc-by-4.0", "CC-BY-SA-4.0", "MIT", "Apache-2.0", "ODbL-1.0", "PD", "CC BY 4.0", "public domain"],
)
def test_open_licences_are_taken_in(value: str) -> None:
    assert is_open(value, DEFAULT) and licence_problem(value, DEFAULT) is None


@pytest.mark.parametrize(
    "value",
    [
        "All rights reserved",
        "CC-BY-NC-4.0",
        "CC-BY-ND-4.0",
        "https://creativecommons.org/licenses/by-nc-sa/4.0/",
        "proprietary",
        "unknown",
        "",
    ],
)
def test_closed_or_unknown_licences_are_refused_in_words(value: str) -> None:
    problem = licence_problem(value, DEFAULT)
    assert problem is not None and problem.startswith(
        f'"{value}" is not an open licence; the workspace accepts: CC0-1.0'
    )
    assert problem.endswith("add its SPDX identifier to [licences] add in curate.toml")


def test_the_settings_replace_or_extend_the_list(tmp_path: Path) -> None:
    assert LicenceSettings().accepted() == DEFAULT
    extended = LicenceSettings(add=["CC-BY-NC-4.0", "MIT"])
    assert extended.accepted() == [*DEFAULT, "CC-BY-NC-4.0"]
    assert licence_problem("Creative Commons Attribution-NonCommercial 4.0", extended.accepted()) is None
    assert LicenceSettings(accept=["CC0-1.0"]).accepted() == ["CC0-1.0"]
    path = tmp_path / "curate.toml"
    path.write_text('[licences]\nadd = ["CC-BY-NC-4.0"]\n')
    assert Settings.load(path).licences.accepted()[-1] == "CC-BY-NC-4.0"
    path.write_text('[licences]\nadd = [""]\n')
    with pytest.raises(ValidationFailed, match="licences.add.0"):
        Settings.load(path)
