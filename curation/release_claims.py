"""``release-claims.toml``: the maintainer's own words for a release (design.md, "Releases — what a release may
claim").

A release states only what the workspace's records give (counts, settings in force, stages, licences, sources)
and what the maintainer wrote in this file: intended uses, uses it is not fit for, limitations, biases, personal
or sensitive information, social impact, the maintenance plan, a description and a homepage. A key left out
states nothing, and a workspace without the file (made before it existed) states none of these. The text goes
into the release as typed; the file is read strictly (unknown keys, wrong types and blank strings are refused,
naming the file and the key) and nothing is built until it is clean.
"""

from __future__ import annotations

import tomllib
import unicodedata
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from .errors import Problem, ValidationFailed

CLAIMS_NAME = "release-claims.toml"
MAX_FILE_BYTES = 256_000
"""The whole file; a larger one is refused unread."""
MAX_STATEMENT_CHARS = 4_000
MAX_STATEMENTS = 20
ALLOWED_CONTROLS = frozenset("\n\t")


def _statement(value: str) -> str:
    """Non-blank, and no control character but line feeds and tabs (the text goes into Markdown and JSON as
    typed, so nothing in it may be invisible)."""
    if not value.strip():
        raise ValueError("is blank; write the statement, or leave the key out to state nothing")
    bad = sorted({f"U+{ord(c):04X}" for c in value if unicodedata.category(c) == "Cc" and c not in ALLOWED_CONTROLS})
    if bad:
        raise ValueError(f"holds control character(s) {', '.join(bad)}; only line breaks and tabs are allowed")
    return value


Statement = Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS), AfterValidator(_statement)]
"""One statement of the maintainer's: 1 to 4,000 characters, not blank, no control characters but ``\\n``, ``\\t``."""
Statements = Annotated[list[Statement], Field(max_length=MAX_STATEMENTS)]


class ReleaseClaims(BaseModel):
    """The maintainer's statements in ``release-claims.toml``; each goes into every release built from the
    workspace, as typed, where the table in docs/releases-claims.md says (card section and Croissant field)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    description: Statement | None = None
    """What the benchmark is for, in the maintainer's words: the card's motivation and Croissant ``description``."""
    uses: Statements = []
    """Recommended uses: the card's uses section and Croissant ``rai:dataUseCases``."""
    out_of_scope: Statements = []
    """Uses the release is not fit for: the card's uses section and ``rai:dataLimitations`` (the RAI field of
    known limitations and non-recommended uses)."""
    limitations: Statements = []
    """Known limitations: the card and ``rai:dataLimitations``."""
    biases: Statements = []
    """Known biases: the card and ``rai:dataBiases`` (after the composition counts the records give)."""
    personal_information: Statements = []
    """Personal or sensitive information the data holds (voices, faces, names): the card's ethical section and
    ``rai:personalSensitiveInformation``."""
    social_impact: Statement | None = None
    """The card's ethical section and ``rai:dataSocialImpact``."""
    maintenance: Statement | None = None
    """Who maintains the release and how to report a problem: the card's maintenance section and
    ``rai:dataReleaseMaintenancePlan`` (after what the platform enforces: immutable versions)."""
    homepage: Annotated[str, Field(max_length=2_000, pattern=r"^https?://[^\s]+$")] | None = None
    """Where the release is published (http or https URL): Croissant ``url``. Without it the Croissant ``url``
    is a placeholder under ``example.invalid`` (a reserved name no site can have)."""

    @property
    def empty(self) -> bool:
        return self == ReleaseClaims()


def load_claims(root: Path) -> ReleaseClaims:
    """The claims of the workspace at ``root``; none (the empty claims) when it has no such file. A damaged
    file is refused with every problem, each naming the file and the key."""
    from .jsonl import read_text_document

    path = root / CLAIMS_NAME
    if not path.exists() and not path.is_symlink():
        return ReleaseClaims()
    text = read_text_document(path, MAX_FILE_BYTES, CLAIMS_NAME)
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationFailed(
            [Problem(f"not valid TOML ({exc})", file=str(path))], f"fix {CLAIMS_NAME}; nothing was built"
        ) from exc
    try:
        return ReleaseClaims.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(_message(err), field=".".join(str(p) for p in err["loc"]), file=str(path)) for err in exc.errors()
        ]
        raise ValidationFailed(problems, f"fix {CLAIMS_NAME} and build again; nothing was built") from exc


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        known = ", ".join(ReleaseClaims.model_fields)
        return f"unknown key; the keys are {known}"
    return str(err["msg"]).removeprefix("Value error, ")


TEMPLATE = f'''# {CLAIMS_NAME}: what releases of this workspace state in the maintainer's own words.
#
# A release states only what the workspace's records give (counts, the settings in force, stages,
# licences, sources, languages) and what is written in this file. Nothing here is filled in for you:
# a key left out (as every key below is) states nothing, and the release says nothing on that point.
# Each text goes into the dataset card (README.md) and croissant.json as typed, so write it as you want
# it read. Unknown keys, wrong types and blank strings are refused by `curate release build`, which
# then builds nothing. A published version keeps the words it was built with: changed words need a
# new version. See docs/releases-claims.md for where each key appears.
#
# Lists hold one statement per string; a statement may span lines ("""...""").

# What the benchmark is for (the card's motivation; Croissant description).
# description = ""

# Recommended uses (card: uses; Croissant rai:dataUseCases).
# uses = []

# Uses the release is not fit for (card: uses; Croissant rai:dataLimitations).
# out_of_scope = []

# Known limitations (card; Croissant rai:dataLimitations).
# limitations = []

# Known biases, beyond the composition counts the release gives (card; Croissant rai:dataBiases).
# biases = []

# Personal or sensitive information in the data: voices, faces, names (card: ethics;
# Croissant rai:personalSensitiveInformation). A release states consent only for clips whose
# speakers' consent is recorded (`curate audio consent`); what you write here is shown as your words.
# personal_information = []

# Social impact (card: ethics; Croissant rai:dataSocialImpact).
# social_impact = ""

# Who maintains the release and how to report a problem (card: maintenance;
# Croissant rai:dataReleaseMaintenancePlan).
# maintenance = ""

# Where the release is published, an http(s) URL (Croissant url).
# homepage = ""
'''
"""What `curate init` writes: every key commented out, so a new workspace's releases claim nothing."""


def write_template(root: Path) -> None:
    """Write the template into a new workspace (never over an existing file)."""
    path = root / CLAIMS_NAME
    if not path.exists() and not path.is_symlink():
        path.write_text(TEMPLATE, encoding="utf-8")
