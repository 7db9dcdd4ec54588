"""The interchange formats the reference documents (scripts/gen_reference.py writes formats.md from them):
every file a command reads, with the Pydantic model that reads a line and example lines that the model (and,
for a replay file, the step that reads the recorded answer) accepts. Replay and draft files are listed by the
models the code defines: :func:`unlisted_replay_models` names one the reference leaves out."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.replay_formats import StructuredReplayLine
from curation.kinds.judge.judging import criteria_of, parse_answer
from curation.kinds.judge.query_prescreen import parse_suggestion
from curation.screening.model import TASK_MODELS

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Format:
    """One interchange file: the model that reads a line, the command that takes it, an example line."""

    title: str
    model: str
    """``module:Class`` of the Pydantic model a line is validated with."""
    command: str
    example: dict[str, Any]
    note: str = ""
    dispatch: dict[str, Any] = field(default_factory=dict)
    """Keys the reader of a mixed file uses to pick the model (shown in the example, not validated by it)."""
    more: tuple[dict[str, Any], ...] = ()
    """Further example lines (each validated by the model as the first is)."""
    check: Callable[[dict[str, Any]], object] | None = None
    """A further check of each example line (a recorded answer the command reads as valid), raising if it fails."""

    @property
    def examples(self) -> tuple[dict[str, Any], ...]:
        return (self.example, *self.more)


FORMATS: tuple[Format, ...] = (
    Format(
        "Item (mcq)",
        "curation.schema:ItemContent",
        "curate import items FILE; curate export items FILE",
        {
            "id": "kitchen-01-a",
            "group": "kitchen-01",
            "perturbed": "audio",
            "language": "en",
            "author": "ann1",
            "context": "Sure, that was a really helpful suggestion.",
            "image": "media/kitchen.jpg",
            "audio": "media/kitchen_sincere.wav",
            "question": "How does the speaker feel about the suggestion?",
            "options": {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"},
            "answer": "A",
            "taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"},
            "ambiguous": ["text", "audio"],
            "provenance": {
                "image": {"source": "photo", "license": "CC0-1.0"},
                "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
            },
            "notes": {
                "image": "A woman at a kitchen table pushes a plate of burnt toast away with two fingers.",
                "audio": 'A woman, flat and drawn out: "Sure, that was a really helpful suggestion." A sigh.',
            },
        },
        "Media paths are relative to the JSONL file. `ambiguous` (the modalities that are ambiguous on their own) "
        'is required. Over two modalities (`"modalities": ["text", "image"]`) the missing one\'s fields are '
        "absent. `notes` is optional (TRIAD App. E.3's A+ / I+ descriptions, only for the item's own image and "
        "audio); a note naming an option, one of the item's taxonomy leaves or a sister's id is a leak "
        "(`leak:note_option`, `leak:note_leaf`, `leak:note_sister`). Releases carry them as `image_note` and "
        "`audio_note`. `provenance.audio` may also name `speakers`, `producer`, `session` and `equipment` "
        "(docs/kinds/mcq-audio-production.md).",
    ),
    Format(
        "Audio take (mcq)",
        "curation.audio_production.records:TakeLine",
        "curate audio takes FILE",
        {"item": "kitchen-01-a", "take": "t1", "audio": "takes/t1.wav"},
        "One take of an item's audio; the path is relative to the JSONL file. The clip's producer chooses one "
        "(`curate audio choose`); only the item's `audio` is released (docs/kinds/mcq-audio-production.md).",
    ),
    Format(
        "Review: grammar",
        "curation.schema:GrammarReview",
        "curate import reviews FILE",
        {"item": "kitchen-01-a", "stage": "grammar", "reviewer": "rev2", "verdict": "pass", "note": ""},
    ),
    Format(
        "Review: audio sign-off",
        "curation.schema:AudioReview",
        "curate import reviews FILE",
        {
            "item": "kitchen-01-a",
            "stage": "audio_signoff",
            "reviewer": "rev3",
            "scores": {"naturalness": 4, "clarity": 5, "artefacts": 4},
        },
    ),
    Format(
        "Review: subset checklist",
        "curation.schema:ChecklistReview",
        "curate import reviews FILE",
        {
            "item": "kitchen-01-a",
            "stage": "subset_checklist",
            "reviewer": "rev1",
            "consistent": {
                "text": ["A", "B", "C"],
                "image": ["A", "B", "D"],
                "audio": ["A", "B"],
                "text+image": ["A", "B"],
                "text+audio": ["A", "C"],
                "image+audio": ["A", "B"],
                "text+image+audio": ["A"],
            },
            "ambiguous": ["text", "audio"],
            "exclusions": {"ethics": "pass", "identifying": "pass"},
        },
        "`exclusions` attests each exclusion rule of the workspace (`[review] exclusion_rules`; the default rules "
        "are `ethics` and `identifying`) `pass` or `fail`. A `fail` returns the item (`exclusion:<rule>`); until a "
        "counted reviewer attests a rule `pass`, the item is held (`exclusion_unattested:<rule>`). A rule the "
        "workspace does not list is refused.",
    ),
    Format(
        "Review: blind answer check",
        "curation.schema:AnswerReview",
        "curate import reviews FILE",
        {"item": "kitchen-01-a", "stage": "answer_check", "reviewer": "rev5", "answer": "A"},
    ),
    Format(
        "Review: group integration",
        "curation.schema:GroupReview",
        "curate import reviews FILE",
        {"group": "kitchen-01", "stage": "group_integration", "reviewer": "rev6", "verdict": "pass"},
    ),
    Format(
        "Story candidate",
        "curation.screening.schema:CandidateLine",
        "curate import candidates FILE",
        {
            "id": "bk1-p03",
            "book": "bk1",
            "page": 3,
            "title": "Kito and the zebra",
            "source": {"collection": "african_storybook", "license": "CC-BY-4.0"},
            "current": {"image": "media/bk1/p03.jpg", "text": "Kito ran to the river."},
            "next": {"image": "media/bk1/p04.jpg", "text": "The zebra was waiting there."},
        },
        "Image paths are relative to the JSONL file.",
    ),
    Format(
        "Story filter record",
        "curation.screening.revise:FilterRecord",
        "curate import reviews FILE",
        {"item": "bk1-p03", "stage": "filter", "reviewer": "rev1", "verdict": "drop", "reason": "weak link"},
    ),
    Format(
        "Story revise record",
        "curation.screening.revise:ReviseRecord",
        "curate story revise FILE",
        {"item": "bk1-p03", "stage": "revise", "reviewer": "rev2", "edits": {"conditions.scene": "By the river"}},
    ),
    Format(
        "Story study: system output",
        "curation.study.lines:OutputLine",
        "curate story study create NAME --release DIR --outputs FILE",
        {"system": "sys-a", "transition": "bk1-p03", "text": "The zebra drank.", "image": "out/bk1-p03.png"},
    ),
    Format(
        "Story study: judge scores",
        "curation.study.lines:JudgeLine",
        "curate story study judges NAME FILE",
        {
            "judge": "gpt-judge",
            "system": "sys-a",
            "transition": "bk1-p03",
            "track": "text",
            "scores": {
                "metadata_alignment": 7,
                "continuity": 8,
                "condition_compliance": 6,
                "ground_truth_consistency": 7,
            },
        },
    ),
    Format(
        "Judge task",
        "curation.kinds.judge.schema:TaskLine",
        "curate judge import tasks FILE",
        {
            "id": "i2t-01",
            "instruction": "Describe the picture.",
            "inputs": {"image": "media/cat.jpg"},
            "output": "text",
            "source": "MMVet",
            "license": "CC-BY-4.0",
        },
    ),
    Format(
        "Judge response",
        "curation.kinds.judge.schema:ResponseLine",
        "curate judge import responses FILE",
        {"task": "i2t-01", "system": "sys-a", "output": {"text": "A cat sleeps on a chair."}},
    ),
    Format(
        "Judge record: checklist curation / cross-check",
        "curation.kinds.judge.schema:ChecklistSelectionRecord",
        "curate judge import records FILE (entry ids: curate judge checklist show TASK)",
        {"task": "i2t-01", "stage": "checklist_curation", "reviewer": "ann1", "selected": ["rele-6b1def4682"]},
    ),
    Format(
        "Judge record: checklist adjudication",
        "curation.kinds.judge.schema:ChecklistAdjudicationRecord",
        "curate judge import records FILE",
        {
            "task": "i2t-01",
            "adjudicator": "maya",
            "selected": ["rele-6b1def4682"],
            "reason": "the curator's entry is specific to the task",
        },
        dispatch={"stage": "checklist_adjudication"},
    ),
    Format(
        "Judge record: response review",
        "curation.kinds.judge.schema:ResponseReviewRecord",
        "curate judge import records FILE",
        {
            "response": "i2t-01:sys-c",
            "stage": "response_review",
            "reviewer": "rev1",
            "usable": False,
            "reason": "off-topic",
        },
    ),
    Format(
        "Judge annotation (score or pair sample)",
        "curation.kinds.judge.annotation_store:AnnotationLine",
        "curate judge import annotations FILE (sample ids: curate judge samples --json)",
        {
            "sample": "s:i2t-01:sys-a",
            "annotator": "ann1",
            "scores": {
                "overall": 4,
                "relevance": 5,
                "trustworthiness": 4,
                "creativity": 3,
                "clarity": 4,
                "coherence": 4,
                "completeness": 3,
            },
        },
    ),
    Format(
        "Judge output",
        "curation.kinds.judge.schema:JudgeOutputLine",
        "curate judge import outputs FILE",
        {
            "sample": "s:i2t-01:sys-a",
            "judge": "judge-gpt",
            "scores": {
                "overall": [4, 5],
                "relevance": [5, 5],
                "trustworthiness": [4, 4],
                "creativity": [3, 4],
                "clarity": [4, 4],
                "coherence": [4, 5],
                "completeness": [3, 3],
            },
        },
    ),
    Format(
        "Human baseline answer",
        "curation.baseline.importing:AnswerLine",
        "curate baseline import CAMPAIGN FILE",
        {"item": "kitchen-01-a", "rater": "rev5", "form": "open", "answer": "grateful for the help"},
        "A rater's answer to an item assigned to them: `open` (free text, 1–2,000 characters, given first) or "
        "`standard` (an option key). Answers are final. A file may mix answer and grade lines; it is taken whole "
        "or not at all.",
        more=({"item": "kitchen-01-a", "rater": "rev5", "form": "standard", "answer": "A"},),
    ),
    Format(
        "Human baseline grade",
        "curation.baseline.importing:GradeLine",
        "curate baseline import CAMPAIGN FILE",
        {"item": "kitchen-01-a", "rater": "rev5", "grader": "rev6", "correct": True},
        "A person's verdict on a rater's open-ended answer (a line with `grader` is a grade); never the rater's own.",
    ),
)

HAND_WRITTEN_FORMATS = """\
## Formats read without a model of their own

### Ratings (`curate stats alpha|kappa|fleiss FILE`)
CSV with the header `unit,coder,value` (or JSON Lines with those keys), one row per rating; a missing
rating is simply absent; an optional `group` column makes bootstrap intervals resample whole groups.
Any other column or key, a column named twice, a CSV row of another width than its header, a value that is
NaN or infinite (`NaN`, `-Infinity`, `1e400` or the text `nan`, `inf`), and in JSON Lines a `true`, a list or
an object where a number or a text goes are refused, each as `FILE:LINE`; nothing is computed from the file.
"""


def _screening_answer(line: dict[str, Any]) -> object:
    """The recorded output is an answer the screening step takes (its task's schema)."""
    parsed = StructuredReplayLine.model_validate(line)
    return TASK_MODELS[parsed.task].model_validate(parsed.output)


def _judge_answer(line: dict[str, Any]) -> object:
    """A judge's recorded answer parses with a value for every criterion of its setting; a prescreen's is a
    decision."""
    if "|" not in line["key"]:  # a query's prescreen decision (JSON) or a system's response (text)
        if line["output"].startswith("{") and parse_suggestion(line["output"])["decision"] == "invalid":
            raise ValueError(f"{line['key']}: not a prescreen decision")
        return line
    sample, setting = line["key"].split("|")[:2]
    kind = "pair" if sample.startswith("p:") else "score"
    parsed = parse_answer(kind, criteria_of(setting), line["output"])
    if None in parsed.values():
        raise ValueError(f"{line['key']}: the answer leaves {[c for c, v in parsed.items() if v is None]} invalid")
    return parsed


REPLAY_FORMATS: tuple[Format, ...] = (
    Format(
        "Probe replay (`curate check --probe replay:FILE`)",
        "checker.backends.replay:ReplayLine",
        "curate check --probe replay:FILE",
        {"item": "kitchen-01-a", "view": "text", "probs": {"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25}},
        "One line per item and view, the answers a probe model gave (`samples`) or its option probabilities "
        "(`probs`); `curate check --record` writes them, with the `audio_route` it took. Views: `none`, `text`, "
        "`image`, `audio`, `text+image`, `text+audio`, `image+audio`, `text+image+audio`. An answer is one of the "
        'item\'s option letters, or `"<unparseable>"` for an answer that named none (it counts towards K, never '
        "as an option); at most 1,000 answers a line. `probs` maps the item's option letters to numbers in [0, 1] "
        '(`true`, `"0.5"`, `NaN` and `Infinity` are refused) that sum to 1 (within 0.001); an option left out '
        "has probability 0. A file may mix `samples` and `probs` lines. Unknown fields, a second line for one "
        "item and view, a view the item does not have and an option it does not have are refused, each as "
        "`FILE:LINE`; a refused file probes and stores nothing.",
        more=({"item": "kitchen-01-a", "view": "text+image+audio", "samples": ["A", "A", "B", "A", "A"]},),
    ),
    Format(
        "Screening replay",
        "checker.replay_formats:StructuredReplayLine",
        "curate screen --backend replay:FILE; [screen.model] backend and [screen.model.<step>] backend",
        {
            "subject": "book:bk1",
            "task": "book_meta",
            "output": {
                "genre": "Slice of Life",
                "topic": "A boy and a zebra meet at the river",
                "style": "Painterly storybook",
                "narrative_tense": "Past",
                "narrative_perspective": "Third-person limited",
                "characters": [{"name": "Kito", "sex": "male", "species": "human", "role": "protagonist"}],
            },
        },
        "One line per subject and task, every task the declared steps ask: `score` (the `score` step), and "
        "`book_meta` (once per book, subject `book:<book>`), `conditions` and `speech` (the `annotate` step). An "
        "`output` is held to its task's schema (the models [BookMetadata](#bookmetadata), "
        "[NextPageConditions](#nextpageconditions), [SpeechTarget](#speechtarget), [Scores](#scores)); "
        'a `book_meta` answer may also come in App. D\'s `{"metadata": {…}}` envelope. The prompts the '
        "tasks are asked with are in [Screening prompts](prompts.md).",
        more=(
            {
                "subject": "bk1-p03",
                "task": "score",
                "output": {
                    "current_page_quality": {"score": 8, "rationale": "A clear picture and a full sentence."},
                    "next_page_quality": {"score": 7, "rationale": "Clear, if a little dark."},
                    "image_style_coherence": {"score": 9, "rationale": "One illustrator, one palette."},
                    "transition_coherence": {"score": 8, "rationale": "The zebra waits where Kito runs to."},
                },
            },
            {
                "subject": "bk1-p03",
                "task": "conditions",
                "output": {
                    "characters": [
                        {"name": "Kito", "emotion": "curious", "visibility": "visible", "action": "arrives"},
                        {"name": "Zebra", "visibility": "visible", "action": "waits", "speech_intent": "greet"},
                    ],
                    "scene": "The river bank at noon",
                    "text_goal": "Say that the zebra was already there",
                    "ambient_sound": "running water",
                },
            },
            {
                "subject": "bk1-p03",
                "task": "speech",
                "output": {
                    "speaker": "Zebra",
                    "utterance": "You came at last!",
                    "emotion": "happy",
                    "speed": "normal",
                    "pitch": "high",
                    "gender": "female",
                },
            },
        ),
        check=_screening_answer,
    ),
    Format(
        "Judge checklist draft (replay)",
        "curation.kinds.judge.drafting:DraftReplayLine",
        "curate judge draft --backend replay:FILE",
        {
            "task": "v2t-01",
            "model": "gemini-1.5-pro",
            "captions": {"video": "A white bar sweeps across coloured tiles."},
            "checklist": {
                "relevance": ["Does the text describe the picture?"],
                "trustworthiness": ["Is every detail in the picture?"],
                "creativity": ["Is the description vivid?"],
                "clarity": ["Is the text easy to read?"],
                "coherence": ["Does the text hold together?"],
                "completeness": ["Is the main subject named?"],
            },
        },
    ),
    Format(
        "Judge generation replay (prescreen, responses, judge runs)",
        "checker.replay_formats:GenerationReplayLine",
        "curate judge queries prescreen|respond|run --backend replay:FILE",
        {"key": "q-0001", "output": '{"decision": "keep", "reason": null}', "model": "qwen2.5-vl-7b"},
        "One line per call, keyed as the command asks (see `key`); `output` is the model's text, read as a live "
        "model's would be (an answer that does not parse is recorded as invalid, never repaired).",
        more=(
            {"key": "i2t-01", "output": "A grey cat sleeps on a wooden chair.", "model": "sys-a"},
            {
                "key": "s:i2t-01:sys-a|overall|shown|1|0",
                "output": '{"overall": {"comment": "Accurate and complete.", "score": 4}}',
                "model": "judge-gpt",
            },
        ),
        check=_judge_answer,
    ),
    Format(
        "Transcript replay",
        "checker.transcription:TranscriptReplayLine",
        "curate transcribe --backend replay:FILE",
        {
            "audio": "d8c3f43245afc4418f278153e5055ae6dc0b509e18dcec9d4b90c4dcb3845d7a",
            "text": "Sure, that was a really helpful suggestion.",
            "model": "whisper-large-v3",
        },  # fmt: skip
        "One line per clip (its sha256, as `curate transcribe --json` prints it): the transcript a speech-to-text "
        "model gave. `model` is optional and the same on every line (default `replay:<digest>`). A clip given "
        "twice, two models or an unknown field are refused as `FILE:LINE`; clips the file does not hold are "
        "listed, not transcribed.",
    ),
)
"""Replay and draft files: recorded model answers that stand in for a model."""


def replay_models(roots: Iterable[str] = ("curation", "checker")) -> list[str]:
    """``module:Class`` of every model of a replay or draft file line in the code (a class whose name ends with
    ``Line`` and holds ``Replay`` or ``Draft``), found by reading the source (no import)."""
    found = []
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for node in tree.body:
                named = isinstance(node, ast.ClassDef) and node.name.endswith("Line")
                if named and ("Replay" in node.name or "Draft" in node.name):
                    found.append(f"{module}:{node.name}")  # type: ignore[attr-defined]
    return found


def unlisted_replay_models(formats: Iterable[Format]) -> list[str]:
    """The replay and draft line models the reference does not list."""
    listed = {f.model for f in formats}
    return [m for m in replay_models() if m not in listed]
