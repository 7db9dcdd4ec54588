"""Workspace settings, stored as ``curate.toml`` with the defaults of design.md."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .baseline.settings import BaselineSettings
from .errors import Problem, ValidationFailed
from .exclusion_rules import RuleName, RuleSentence, default_rules
from .licences import DEFAULT_OPEN_LICENCES
from .screening.settings import ScreenSettings, StorySettings

CONFIG_NAME = "curate.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatabaseSettings(_Section):
    url: str = "sqlite:///curate.db"
    """SQLAlchemy URL; a relative SQLite path is taken relative to the workspace folder."""


class ReviewSettings(_Section):
    grammar_quorum: int = Field(2, ge=1)
    """TRIAD §4.2: each item is "checked by two reviewers for grammaticality and idiom"; both sign off."""
    audio_signoff_quorum: int = Field(2, ge=1)
    """Listeners who score the audio (naturalness, clarity, artefacts; 1-5) before it counts as signed off."""
    image_screening_quorum: int = Field(2, ge=1)
    """TRIAD §4.2: AI-generated images are "screened by two annotators" for artefacts; every screening passes."""
    audio_min_mean: float = Field(3.5, ge=1, le=5)
    """The listeners' mean on every axis must reach this, else ``audio_unnatural:<axis>``."""
    subset_checklist_quorum: int = Field(3, ge=1)
    """Reviewers who answer all views of the modality-subset checklist."""
    combine: Literal["any", "majority", "all"] = "any"
    """How the checklist reviewers' consistent sets are combined per view and option: an option is consistent
    when ``any`` reviewer, a ``majority`` or ``all`` of them found it so. When ``any`` and ``majority`` give
    different verdicts, the item is held (``checklist:disagreement``) until a maintainer adjudicates."""
    answer_check_quorum: int = Field(1, ge=1)
    """Blind answer checks per item."""
    group_integration_quorum: int = Field(1, ge=1)
    """Group reviewers per scene group."""
    min_group_size: int = Field(2, ge=1)
    """Live sisters a group needs, else ``group:too_small``."""
    group_answers: Literal["perturbation", "all_distinct", "not_all_same"] = "perturbation"
    """When sisters' answers are ``group:duplicate_answers``. ``perturbation`` (TRIAD §3.2, §3.4: "the correct
    answer changes with the altered cue"): two sisters that differ in exactly one modality (compared on content:
    media by content hash, text normalized) share an answer, or all sisters share one; sisters two or more
    modalities apart may share one (App. F.1's group A, B, B is admitted). ``all_distinct`` (stricter): any two sisters share an answer.
    ``not_all_same`` (looser): all sisters share one. Sisters identical in every modality are
    ``group:identical_sisters`` whatever their answers."""
    group_options: Literal["reviewer", "exact"] = "reviewer"
    """How sisters' options are compared. ``reviewer`` (TRIAD §3.4, which allows minimal wording or cardinality
    adjustments): the differences are shown to the group reviewer, whose verdict decides. ``exact``: any
    difference is ``group:option_mismatch``."""
    separation: Literal["triad", "author_only"] = "triad"
    """Who may review what. ``triad`` (TRIAD C.2 as its pool of five ran it, ``curation.kinds.mcq.separation``):
    the author (A) reviews nothing; the blind answer checker (D) holds no role but the checklist; the group
    reviewer (E) is neither D nor a checklist reviewer; the first grammar reviewer (B) and first listener (C) may
    give each other's second sign-off, E either; checklist reviewers hold B, C or D.
    ``author_only``: only "nobody reviews what they authored". Exposure refuses blind checks either way."""
    reservation_minutes: float = Field(5, gt=0, le=24 * 60)
    """How long a queue entry offered to a person stays theirs (renewed while their page is open; released on
    submit, skip, sign-out or expiry): people on one queue are offered different entries, and a stage with
    quorum q has at most q live reservations per entry."""
    exclusion_rules: dict[RuleName, RuleSentence] = Field(default_factory=default_rules)
    """TRIAD's exclusion rules as attestations (``curation.exclusions``): rule name (an identifier) -> the
    sentence each subset-checklist reviewer attests ``pass`` or ``fail`` per item. A ``fail`` returns the item
    (``exclusion:<rule>``); a rule no reviewer attested ``pass`` holds it (``exclusion_unattested:<rule>``).
    The default: ``ethics`` (TRIAD §4, App. B.1 rule 4) and ``identifying`` (App. B.1 rule 2); TRIAD's other
    exclusion rules are stages of their own. ``{}`` (an empty table): no rules."""


class MediaSettings(_Section):
    """Media targets; bounds refuse values no medium could meet (a sample rate of 0, a loudness of 1000 LUFS)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    audio_sample_rate: int = Field(48000, ge=8000, le=384000)
    audio_channels: int = Field(1, ge=1, le=8)
    audio_subtype: str = "PCM_16"
    audio_lufs: float = Field(-23.0, ge=-70, le=0)
    audio_true_peak_dbtp: float = Field(-1.0, ge=-20, le=0)
    audio_min_seconds: float = Field(0.5, ge=0)
    audio_max_seconds: float = Field(120.0, gt=0)
    image_quality: int = Field(90, ge=1, le=95)
    image_max_edge: int = Field(1024, ge=16)
    max_image_pixels: int = Field(40_000_000, ge=1, le=178_956_970)
    """Larger images are refused where they are taken in (items, tasks, candidates, books, uploads) as possible
    decompression bombs, from the size in their header, before any pixel is decoded (Pillow refuses more than
    178,956,970 pixels whatever this says)."""
    max_audio_seconds: float = Field(600.0, gt=0)
    """Longer recordings are refused where they are taken in, from the length in their header, before any sample
    is decoded (a small compressed file can decode to hours of samples; ten minutes of 48 kHz stereo already
    decode to 460 MB of samples to measure). ``audio_max_seconds`` is the spec's target, reported as
    ``media:duration``; this is the door's limit."""
    max_video_frames: int = Field(216_000, ge=1)
    """Videos with more frames (two hours at 30 frames per second) are refused where they are taken in, from their
    header before a frame is read, and again while their stream is counted; their frame size is held to
    ``max_image_pixels``."""
    max_file_mb: float = Field(200.0, gt=0)


GateMode = Literal["off", "warn", "block"]


class GateSettings(_Section):
    """The one blocking policy of item-level gates, read by admission (status) and by the release build.

    ``off`` ignores a gate's findings, ``warn`` lists them among the reasons, ``block`` holds the item (and
    keeps it out of a release). Gates not named here block.
    """

    probe: GateMode = "off"
    """The probe checker's verdicts (``probe:<verdict>``): shown only, listed as reasons, or holding the item."""
    option_in_context: Literal["warn", "block"] = "warn"
    """An option's text in the item's own context: a warning by default, since anaphora items ("Anna told
    Maria that she...", options Anna/Maria) name their options in the context by design."""
    note_option: Literal["warn", "block"] = "block"
    """An option's text in one of the item's notes (``leak:note_option``): it holds the item by default, as TRIAD
    App. E.3 forbids a note to mention the answer option; ``warn`` only lists it (a workspace whose transcripts
    must quote option words). A leaf or a sister's id in a note (``leak:note_leaf``, ``leak:note_sister``) always
    blocks under ``audit``."""
    media: GateMode = "block"
    """Media that do not meet ``[media]`` (``media:<problem>``)."""
    audit: GateMode = "block"
    """Unresolved duplicate clusters and leaks found by ``curate audit`` (``duplicate:<cluster>``, ``leak:<kind>``)."""
    story_audit: GateMode = "block"
    """Omni-StoryBench App. C: duplicate conditions, foreign 8-word spans, duplicate clusters across books."""
    story_overlap: GateMode = "warn"
    """A condition sharing 8+ words with its own reference narration (App. C flags, never removes, these)."""
    consent: GateMode = "block"
    """Audio whose speakers have no recorded consent (``consent:missing``; ``curation.audio_production``)."""
    takes: GateMode = "block"
    """Voice-acted clips short of ``[audio] min_takes`` takes or of a producer's choice (``takes:<problem>``)."""
    spot_check: GateMode = "block"
    """Sampled voice-acted clips not yet spot-checked (``spot_check:pending``) or found inconsistent by the
    listener (``spot_check:inconsistent``)."""
    recording: GateMode = "warn"
    """An audio-perturbed group whose clips differ in actor, session or equipment (``group:recording_mismatch``,
    TRIAD B.5): a heads-up by default, ``block`` to hold the group."""

    def mode(self, gate: str) -> str:
        """The policy of the gate named ``gate`` (release gates named ``media_*`` follow ``media``)."""
        if gate.startswith("media_"):
            gate = "media"
        value = getattr(self, gate, "block") if gate in type(self).model_fields else "block"
        return str(value)


class LabelStudioSettings(_Section):
    """Where the Label Studio bridge finds its server; LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY override."""

    url: str = "http://localhost:8080"
    """The server's address (LABEL_STUDIO_URL overrides; `curate ls up` prints it)."""
    token: str = ""
    """API token of the account the bridge acts as (better kept in LABEL_STUDIO_API_KEY than here)."""
    document_root: str = ""
    """The server's LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT (that variable overrides): media are published there."""
    media_folder: str = "omnicurate"
    """Subfolder of document_root that holds published media (content-addressed, shared by all projects)."""
    timeout_s: float = Field(60.0, gt=0)


class AgreementSettings(_Section):
    """Workspace-level agreement gates (a release refuses below them) and adjudication thresholds.

    A minimum set to ``-1`` turns that gate off. ``adjudicate_*`` send items to the adjudication queue.
    """

    checklist_alpha_min: float = Field(0.667, ge=-1, le=1)
    """Krippendorff's alpha (nominal) over item x view x option checklist decisions."""
    answer_kappa_min: float = Field(0.6, ge=-1, le=1)
    """Cohen's kappa between authors' labels and blind answer checks."""
    audio_alpha_min: float = Field(-1, ge=-1, le=1)
    """Ordinal alpha of audio sign-off scores, on every axis (off by default)."""
    adjudicate_checklist_split: float = Field(0.25, ge=0, le=1)
    """Queue an item when reviewers split on more than this share of its view x option decisions."""
    adjudicate_audio_spread: int = Field(2, ge=1, le=4)
    """Queue an item when audio scores on one axis differ by this much or more."""
    audit_subset: int = Field(50, ge=1)
    """Agreement is also reported on a held-out audit subset of this many items (TRIAD C.3: fifty queries),
    drawn seeded and stratified by the group's perturbed modality; all items when there are fewer."""
    audit_seed: int = 0
    """Seed of the audit subset's draw: the same seed and items give the same subset."""


class JudgeSettings(_Section):
    """The ``judge_task`` kind (Judge Anything): checklist bounds, sampling and cross-validation."""

    checklist_min: int = Field(1, ge=1)
    checklist_max: int = Field(6, ge=1)
    """A curated checklist holds checklist_min..checklist_max entries per rubric, for every rubric its
    candidates cover (the paper: 1 to 6 from each rubric's checklist, ~19 per query)."""
    draft_shown: int = Field(8, ge=1)
    """The curation page and `curate judge checklist show` show at most this many drafted entries per rubric
    (the first, in draft order); a draft may hold any number, and a record may select any drafted entry."""
    caption_backend: str = ""
    """The backend (replay:, transformers:, openai:) that captions a medium a judge or system cannot take
    (App. C.3); empty: no caption route, and such a medium is refused by name."""
    takes: dict[str, list[Literal["text", "image", "audio", "video"]]] = {}
    """Per backend spec (as --backend takes it), the input modalities the model takes; a backend not named
    here takes what its probe finds (transformers:) or every modality."""
    pairs_per_task: int = Field(2, ge=1)
    sample_seed: int = 0
    annotators_per_sample: int = Field(3, ge=1)
    """Each score and pair sample is served to this many people (cross-validation), never twice to one; the
    paper's Table 2 has three annotators per sample."""
    judge_scores: Literal["mean", "median"] = "mean"
    """How a judge's several samples of one score are combined (choices: majority)."""
    bootstrap: int = Field(1000, ge=0)


class ProbeSettings(_Section):
    """A named probe for ``curate check --probe NAME``: its backend spec and where its API key lives."""

    spec: str
    """A backend spec as ``--probe`` takes it, e.g. ``openai:https://host/v1#model``."""
    key_env: str = Field("", pattern=r"^$|^[A-Za-z_][A-Za-z0-9_]*$")
    """The environment variable holding the key (``openai`` probes; default OPENAI_API_KEY). Never the key."""

    @model_validator(mode="before")
    @classmethod
    def _no_key_in_the_file(cls, data: object) -> object:
        if isinstance(data, dict) and {"key", "api_key", "token"} & set(data):
            raise ValueError("a key never goes in curate.toml: set an environment variable and name it in key_env")
        return data


class CheckerSettings(_Section):
    probes: dict[str, ProbeSettings] = {}
    """``[checker.probes.NAME]`` tables: two providers, each with its own key variable, run together."""


class LicenceSettings(_Section):
    """The open licences every import takes (``curation.licences``): a licence given with incoming data (item
    provenance, judge tasks, story candidates, books) that is not among them refuses its file; a judge candidate
    query under one is held by name."""

    accept: list[Annotated[str, Field(min_length=1, max_length=100)]] = list(DEFAULT_OPEN_LICENCES)
    """SPDX identifiers of the licences taken in (case aside); giving it replaces the default list."""
    add: list[Annotated[str, Field(min_length=1, max_length=100)]] = []
    """More identifiers taken in besides ``accept`` (e.g. ``["CC-BY-NC-4.0"]`` for a research-only benchmark)."""

    def accepted(self) -> list[str]:
        return list(dict.fromkeys([*self.accept, *self.add]))


class AudioSettings(_Section):
    """Audio production (TRIAD App. B.2): takes and the independent listener's spot check of voice-acted clips
    (those whose provenance names a producer)."""

    min_takes: int = Field(3, ge=1)
    """Takes a voice-acted clip needs recorded before its producer's choice counts (TRIAD B.2: at least three)."""
    spot_check_rate: float = Field(0.05, ge=0, le=1)
    """Share of voice-acted clips an independent listener spot-checks (TRIAD B.2: 5 %); at least one clip while
    any exists and the rate is above 0."""
    spot_check_seed: int = 0
    """Seed of the spot-check draw: the same seed and clips give the same sample."""


class ReleaseSettings(_Section):
    authors: Literal["pseudonymous", "named"] = "pseudonymous"
    """How authors appear in a release's admission record; reviewers are always pseudonymous."""


class Settings(_Section):
    database: DatabaseSettings = DatabaseSettings()
    review: ReviewSettings = ReviewSettings()
    media: MediaSettings = MediaSettings()
    gates: GateSettings = GateSettings()
    labelstudio: LabelStudioSettings = LabelStudioSettings()
    agreement: AgreementSettings = AgreementSettings()
    judge: JudgeSettings = JudgeSettings()
    screen: ScreenSettings = ScreenSettings()
    checker: CheckerSettings = CheckerSettings()
    story: StorySettings = StorySettings()
    release: ReleaseSettings = ReleaseSettings()
    audio: AudioSettings = AudioSettings()
    licences: LicenceSettings = LicenceSettings()
    baseline: BaselineSettings = BaselineSettings()

    @classmethod
    def load(cls, path: Path) -> Settings:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise
        except tomllib.TOMLDecodeError as exc:
            raise ValidationFailed([Problem(str(exc), file=str(path))], "curate.toml is not valid TOML") from exc
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = [
                Problem(err["msg"], field=".".join(str(p) for p in err["loc"]), file=str(path)) for err in exc.errors()
            ]
            raise ValidationFailed(problems, "fix curate.toml and try again") from exc

    def save(self, path: Path) -> None:
        path.write_text(tomli_w.dumps(self.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
