"""Judges run as the paper ran them (Judge Anything §3.1, App. D): the App. D prompts in three settings
(``overall``: the overall criterion only; ``rubric``: overall and the six rubrics with their scoring rules;
``checklist``: the same plus the task's curated checklist), *Analyze-then-Judge* (a ``comment`` before each
``score`` or ``choice``), three samples per judgment with slightly varied prompts at temperature 0.7, and
every pair judged in both orders.

Answers are parsed strictly: a criterion whose answer is not a JSON object with a ``comment`` and a valid
``score`` (1–5) or ``choice`` (0 first, 1 tie, 2 second) is recorded as invalid, never repaired. Outputs
land in ``judge_output`` under ``<judge>/<setting>`` as the report reads them (the first run's valid
samples), with every run's answers (``runs``) for the consistency figures of §3.3.

The model itself is a callable given by the shell (the domain knows no backend).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select
from sqlmodel import col

from curation.errors import Problem, ValidationFailed
from curation.workspace import Workspace, record_event

from . import record_store, sample_store, task_store
from .rubrics import CRITERIA, DEFINITIONS, OVERALL, RUBRICS, SCALE
from .schema import ChecklistEntry, PairSample, ScoreSample
from .tables import JudgeOutput

Setting = Literal["overall", "rubric", "checklist"]
SETTINGS: tuple[str, ...] = ("overall", "rubric", "checklist")
TEMPERATURE = 0.7
"""The paper's judging temperature (§3.1)."""
SAMPLES = 3
"""Judgments sampled per sample, each with a slightly varied prompt (§3.1)."""
VARIANTS = (
    "",
    "Take your time and look at every part of the input and the response before you judge.\n",
    "Judge carefully and fairly; do not let the length or the order of responses sway you.\n",
)
SCORE_SYSTEM = (
    "You are a loyal judge, your task is to score the performance of the model's response on the given task. You "
    "will be given a task, including the input and the model's response. The scoring rule will also be given, you "
    "need to score the model's response with your careful consideration. If the judge task require multi-modal "
    "inputs, you should use your visual and auditory senses to judge. You should entirely understand, see or hear "
    "the task and the model's response, base on the given information, you should think of your scoring reasons "
    'in each rubric\'s "comment" step by step first, and then you are required to give scores for each rubric in '
    'each rubric\'s "score" part base on the scoring rule. Finally, You are required to give an overall score '
    "base on the previous results and the overall scoring rule. If the checklists are given, you should use it to "
    "assist your scoring process."
)
PAIR_SYSTEM = (
    "You are a loyal judge, your task is to choose the better one from two models' responses on the given task. "
    "You will be given a task, including the input and the two models' responses. The pairing rule will also be "
    "given, you need to choose with your careful consideration. If the judge task require multi-modal inputs, you "
    "should use your visual and auditory senses to judge. If the response model misunderstand the task and "
    "response in wrong modality, you should take into consideration. You should entirely understand, see or hear "
    "the task and the model's response, base on the given information, you should think of your choosing reasons "
    'in the each rubric\'s "comment" step by step first, and then you are required to give a choice in "choice" '
    "base on the rule. If the checklists are given, you should use it to assist your choosing process. Choosing "
    "Rule: Reasoning in detail before you determine the choice, then give your choice from [0,1,2], 0 means the "
    "first response is better, 1 means the two responses are equally good, 2 means the second response is better."
)
CHOICE_OF = {0: "first", 1: "tie", 2: "second"}
SWAP = {"first": "second", "second": "first", "tie": "tie"}


def criteria_of(setting: str) -> tuple[str, ...]:
    """The criteria a setting asks for: the overall one alone, or the six rubrics and the overall."""
    if setting not in SETTINGS:
        raise ValidationFailed(
            [Problem(f"unknown setting {setting!r}; settings are {', '.join(SETTINGS)}", "--setting")]
        )
    return (OVERALL,) if setting == "overall" else (*RUBRICS, OVERALL)


@dataclass(frozen=True)
class JudgePrompt:
    """One model call: the system instruction, the user's text and the media (modality-tagged asset hashes)."""

    system: str
    user: str
    media: tuple[tuple[str, str], ...]
    roles: tuple[str, ...] = ()
    """What each medium is (``input video``, ``first response``): how a caption that replaces one names it."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps([self.system, self.user, self.media]).encode()).hexdigest()


def _criterion_text(kind: str, criterion: str, setting: str) -> str:
    verb = "score" if kind == "score" else "choose base on"
    name = "the overall quality" if criterion == OVERALL else f"the {criterion}"
    text = f'- "{criterion}": You are going to {verb} {name} of the model\'s performance. {DEFINITIONS[criterion]}'
    if kind == "score" and setting != "overall":
        text += " Scoring Rule: " + " ".join(f"{n}: {rule}" for n, rule in sorted(SCALE[criterion].items()))
    return text


def judge_prompt(
    kind: str,
    setting: str,
    task: Any,
    responses: Sequence[Any],
    checklist: Sequence[ChecklistEntry],
    variant: int = 0,
) -> JudgePrompt:
    """The App. D prompt for one sample in one order: the task, the response(s) in the order shown, the
    criteria of the setting (with the checklist in the ``checklist`` setting) and the answer's JSON form."""
    criteria = criteria_of(setting)
    answer = "score (an integer 1-5)" if kind == "score" else "choice (0, 1 or 2)"
    parts = [VARIANTS[variant % len(VARIANTS)], f"Task instruction: {task.instruction}"]
    media = [(m, sha) for m, sha in sorted(task.inputs.items())]
    roles = [f"input {m}" for m, _ in media]
    labels = ["Response"] if kind == "score" else ["First response", "Second response"]
    for label, response in zip(labels, responses, strict=True):
        if response.asset:
            parts.append(f"{label}: the attached {response.modality} ({label.lower()}).")
            media.append((response.modality, response.asset))
            roles.append(label.lower())
        else:
            parts.append(f"{label}: {response.text}")
    parts.append("Criteria:\n" + "\n".join(_criterion_text(kind, c, setting) for c in criteria))
    if setting == "checklist":
        rows = [f"- [{e.rubric}] {e.text}" for e in checklist]
        parts.append("Checklist:\n" + "\n".join(rows))
    keys = ", ".join(f'"{c}": {{"comment": "...", "{answer.split()[0]}": ...}}' for c in criteria)
    parts.append(f"Answer with one JSON object: {{{keys}}}, giving each {answer} after its comment.")
    system = SCORE_SYSTEM if kind == "score" else PAIR_SYSTEM
    return JudgePrompt(system, "\n\n".join(p for p in parts if p), tuple(media), tuple(roles))


def parse_answer(kind: str, criteria: Iterable[str], text: str) -> dict[str, int | str | None]:
    """Criterion → score (1-5) or choice (first/tie/second), None where the answer is invalid. Strict: a JSON
    object, each criterion an object with a string ``comment`` and an integer answer in range."""
    criteria = list(criteria)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return dict.fromkeys(criteria)
    if not isinstance(data, dict):
        return dict.fromkeys(criteria)
    out: dict[str, int | str | None] = {}
    key, allowed = ("score", range(1, 6)) if kind == "score" else ("choice", range(0, 3))
    for criterion in criteria:
        answer = data.get(criterion)
        value = answer.get(key) if isinstance(answer, dict) else None
        valid = (
            isinstance(answer, dict)
            and isinstance(answer.get("comment"), str)
            and type(value) is int
            and value in allowed
        )
        out[criterion] = (value if kind == "score" else CHOICE_OF[value]) if valid else None  # type: ignore[index]
    return out


Generate = Callable[[str, JudgePrompt, int], str]
"""``(key, prompt, sample index) -> raw answer``: the shell's backend (replay, transformers, vLLM, OpenAI)."""
Route = Callable[[JudgePrompt], tuple[JudgePrompt, dict[str, str]]]
"""A prompt as the judge takes it and the route of each modality (:func:`.captioning.route_prompt`)."""


def _native(prompt: JudgePrompt) -> tuple[JudgePrompt, dict[str, str]]:
    return prompt, {m: "native" for m, _ in prompt.media}


@dataclass
class JudgeRun:
    judged: int = 0
    cached: int = 0
    invalid: int = 0
    answers: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"judged": self.judged, "cached": self.cached, "invalid": self.invalid, "answers": self.answers}


@dataclass
class _Sample:
    id: str
    kind: str
    task: Any
    orders: dict[str, list[Any]] = field(default_factory=dict)


def _samples(ws: Workspace, kinds: Sequence[str]) -> list[_Sample]:
    tasks = {t.id: t for t in task_store.tasks(ws)}
    responses = {r.id: r for r in task_store.responses(ws)}
    out = []
    for kind in kinds:
        for sample in sample_store.samples(ws, kind):
            if isinstance(sample, ScoreSample):
                orders = {"shown": [responses[sample.response]]}
            else:
                assert isinstance(sample, PairSample)
                pair = [responses[sample.first], responses[sample.second]]
                orders = {"shown": pair, "swapped": pair[::-1]}
            out.append(_Sample(sample.id, kind, tasks[sample.task], orders))
    return out


def run_judge(
    ws: Workspace,
    judge: str,
    model: str,
    setting: str,
    generate: Generate,
    kinds: Sequence[str] = ("score", "pair"),
    samples: int = SAMPLES,
    run: int = 1,
    progress: Callable[[int, int], None] = lambda done, total: None,
    route: Route = _native,
) -> JudgeRun:
    """Judge every sample of the kinds (score and pair) in the setting; run ``run`` of the judge. A sample
    already judged in this run by the same model and prompts is skipped: a rerun adds nothing. ``route``
    replaces media the judge cannot take by captions; each run records the route per modality."""
    criteria = criteria_of(setting)
    name = f"{judge}/{setting}"
    checklists = {c.task: c.final for c in record_store.task_checklists(ws)}
    todo = _samples(ws, kinds)
    report = JudgeRun()
    for done, sample in enumerate(todo, 1):
        routes: dict[str, str] = {}
        prompts: dict[str, list[JudgePrompt]] = {}
        for order, shown in sample.orders.items():
            prompts[order] = []
            for i in range(samples):
                prompt = judge_prompt(sample.kind, setting, sample.task, shown, checklists.get(sample.task.id, []), i)
                routed, taken = route(prompt)
                prompts[order].append(routed)
                routes.update(taken)
        digest = hashlib.sha256("".join(p.sha256 for ps in prompts.values() for p in ps).encode()).hexdigest()
        with ws.session() as s:
            row = s.execute(
                select(JudgeOutput).where(col(JudgeOutput.sample) == sample.id, col(JudgeOutput.judge) == name)
            ).scalar_one_or_none()
            payload: dict[str, Any] = dict(row.payload) if row is not None else {}
        runs = dict(payload.get("runs", {}))
        previous = runs.get(str(run))
        if previous is not None and previous["model"] == model and previous["prompts_sha256"] == digest:
            report.cached += 1
            progress(done, len(todo))
            continue
        answers: dict[str, dict[str, list[int | str | None]]] = {}
        raw: dict[str, list[str]] = {}
        for order, order_prompts in prompts.items():
            answers[order] = {c: [] for c in criteria}
            raw[order] = []
            for index, prompt in enumerate(order_prompts):
                text = generate(f"{sample.id}|{setting}|{order}|{run}|{index}", prompt, index)
                raw[order].append(text)
                for criterion, value in parse_answer(sample.kind, criteria, text).items():
                    if value is not None and order == "swapped":
                        value = SWAP[str(value)]  # back to the sample's own sides
                    answers[order][criterion].append(value)
                    report.answers += 1
                    report.invalid += value is None
        runs[str(run)] = {
            "model": model,
            "prompts_sha256": digest,
            "temperature": TEMPERATURE,
            "samples": samples,
            "answers": answers,
            "raw": raw,
            "route": dict(sorted(routes.items())),
        }
        first = runs[min(runs, key=int)]["answers"]
        valid = {c: [v for order in first.values() for v in order[c] if v is not None] for c in criteria}
        key = "scores" if sample.kind == "score" else "choices"
        new = {"setting": setting, "runs": runs, key: {c: v for c, v in valid.items() if v}}
        with ws.writing() as s:
            row = s.execute(
                select(JudgeOutput).where(col(JudgeOutput.sample) == sample.id, col(JudgeOutput.judge) == name)
            ).scalar_one_or_none()
            if row is None:
                s.add(JudgeOutput(sample=sample.id, judge=name, payload=new))
            else:
                row.payload = new
                s.add(row)
            record_event(s, "judge-run", "judge.run", f"judge_sample:{sample.id}", None,
                         {"judge": name, "run": run, "model": model, "prompts_sha256": digest})  # fmt: skip
        report.judged += 1
        progress(done, len(todo))
    return report


def _majority(values: Sequence[Any]) -> Any:
    """The most frequent valid value (ties broken by the value's order), None when there is none."""
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[0][0]


def position_consistency(outputs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Of the pair judgments made in both orders (same sample, criterion, run and sample index, both valid):
    the share whose choice is the same once the swapped order is mapped back."""
    agree = total = 0
    for payload in outputs:
        for run in payload.get("runs", {}).values():
            shown, swapped = run["answers"].get("shown", {}), run["answers"].get("swapped")
            if swapped is None:
                continue
            for criterion, values in shown.items():
                for a, b in zip(values, swapped.get(criterion, []), strict=False):
                    if a is not None and b is not None:
                        total += 1
                        agree += a == b
    return {"pairs": total, "value": agree / total if total else None}


def run_consistency(outputs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Majority consistency over repeated runs (§3.3): per sample and criterion, each run's answer (the
    majority choice, or the rounded mean score, of its valid samples); the share of runs that give the most
    frequent of these answers, averaged over the units judged in at least two runs."""
    shares = []
    for payload in outputs:
        runs = list(payload.get("runs", {}).values())
        if len(runs) < 2:
            continue
        for criterion in CRITERIA:
            answers = []
            for run in runs:
                values = [v for order in run["answers"].values() for v in order.get(criterion, []) if v is not None]
                if not values:
                    continue
                numeric = all(isinstance(v, int) for v in values)
                answers.append(round(sum(values) / len(values)) if numeric else _majority(values))
            if len(answers) >= 2:
                shares.append(Counter(answers).most_common(1)[0][1] / len(answers))
    return {"units": len(shares), "value": sum(shares) / len(shares) if shares else None}


def consistency(ws: Workspace) -> dict[str, dict[str, Any]]:
    """Per judge (``name/setting``): position consistency (pairs in both orders) and run-to-run consistency."""
    with ws.session() as s:
        rows = list(s.execute(select(col(JudgeOutput.judge), col(JudgeOutput.payload))).all())
    by_judge: dict[str, list[Mapping[str, Any]]] = {}
    for judge, payload in rows:
        if "runs" in payload:
            by_judge.setdefault(judge, []).append(payload)
    return {
        judge: {"position": position_consistency(p), "runs": run_consistency(p)}
        for judge, p in sorted(by_judge.items())
    }
