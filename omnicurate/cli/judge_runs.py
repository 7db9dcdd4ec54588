"""``curate judge respond`` and ``curate judge run``: systems answer tasks and judges judge samples through
the model backends, resumably, with progress bars; a second run of the same command adds nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress

from .common import JsonFlag, checked_backend, open_workspace, out_console, print_json, progress_bar

if TYPE_CHECKING:
    from curation.workspace import Workspace


def _asset_paths(ws: Workspace) -> Callable[[str], Path]:
    """sha256 -> the stored file of every asset (inputs and media responses the models see)."""
    from sqlalchemy import select

    from curation.tables import Asset

    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    return lambda sha: ws.asset_path(assets[sha])


def _progress(label: str) -> tuple[Progress, object]:
    bar = progress_bar(*Progress.get_default_columns())
    return bar, bar.add_task(label, total=None)


CaptionBackend = Annotated[
    str | None,
    typer.Option(
        "--caption-backend",
        help="Captions media the model cannot take: replay:<file.jsonl>, transformers:<folder> or openai:<url>#<model> "
        "(default: [judge] caption_backend).",
    ),
]


def respond_cmd(
    system: Annotated[str, typer.Option("--system", help="The system's name (responses are <task>:<system>).")],
    backend: Annotated[str, typer.Option("--backend", help="replay:<file.jsonl> or openai:<url>[,<url>…]#<model>.")],
    accepts: Annotated[
        str, typer.Option("--accepts", help="Input modalities the system takes, e.g. text,image.")
    ] = "text",
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    caption_backend: CaptionBackend = None,
    json_out: JsonFlag = False,
) -> None:
    """Answer every task whose inputs the system accepts (text outputs); with a captioning backend, inputs it
    does not accept are given as captions (App. C.3). Provenance, with the route, goes to the event log."""
    from checker.captions import open_captioner
    from checker.generation import open_generator
    from curation.kinds.judge.responding import respond

    ws = open_workspace()
    generator = open_generator(checked_backend(backend))
    path_of = _asset_paths(ws)
    captioner = open_captioner(ws, checked_backend(caption_backend) if caption_backend else None, path_of)

    def answer(task: str, system_prompt: str, user: str, media: tuple[tuple[str, str], ...]) -> str:
        paths = [(m, path_of(sha)) for m, sha in media]
        return generator.generate(task, system_prompt, user, paths, temperature, seed)

    bar, task_id = _progress(f"{system} answers")
    with bar:
        run = respond(
            ws,
            system,
            generator.model_id,
            {m.strip() for m in accepts.split(",") if m.strip()},
            answer,
            {"temperature": temperature, "seed": seed},
            lambda done, total: bar.update(task_id, completed=done, total=total),  # type: ignore[arg-type]
            captioner,
        )
    if json_out:
        print_json({"system": system, "model": generator.model_id, **run.as_dict()})
    else:
        out_console.print(
            f"{system}: {len(run.answered)} answered, {len(run.already)} already answered, "
            f"{len(run.not_accepted)} not for this system; review them with `curate judge import records`",
            highlight=False,
            markup=False,
        )


def run_cmd(
    judge: Annotated[str, typer.Option("--judge", help="The judge's name (outputs are <judge>/<setting>).")],
    backend: Annotated[str, typer.Option("--backend", help="replay:<file.jsonl> or openai:<url>[,<url>…]#<model>.")],
    setting: Annotated[str, typer.Option("--setting", help="overall, rubric or checklist (App. D).")] = "checklist",
    samples: Annotated[int, typer.Option(help="Samples per judgment (the paper: 3).", min=1)] = 3,
    run: Annotated[int, typer.Option("--run", help="Which repeated run this is (run-to-run consistency).", min=1)] = 1,
    kind: Annotated[str, typer.Option("--kind", help="score, pair or both.")] = "both",
    takes: Annotated[
        str | None,
        typer.Option(
            "--takes", help="Input modalities the judge takes, e.g. text,audio (default: [judge.takes], else probed)."
        ),
    ] = None,
    caption_backend: CaptionBackend = None,
    json_out: JsonFlag = False,
) -> None:
    """Judge every score and pair sample (pairs in both orders) at temperature 0.7; invalid answers are recorded
    as invalid, never repaired; `curate judge report` then compares the judge with people. Media the judge
    cannot take are given as captions (App. C.3), and each run records the route per modality."""
    from checker.captions import open_captioner, takes_of
    from checker.generation import open_generator
    from curation.errors import Problem, ValidationFailed
    from curation.kinds.judge.captioning import route_prompt, uncaptioned
    from curation.kinds.judge.judging import TEMPERATURE, JudgePrompt, run_judge

    if kind not in ("score", "pair", "both"):
        raise ValidationFailed([Problem(f"unknown kind {kind!r}; use score, pair or both", "--kind")])
    ws = open_workspace()
    spec = checked_backend(backend)
    generator = open_generator(spec)
    path_of = _asset_paths(ws)
    taken = takes_of(ws, spec, generator, takes)
    captioner = open_captioner(ws, checked_backend(caption_backend) if caption_backend else None, path_of)

    def route(prompt: JudgePrompt) -> tuple[JudgePrompt, dict[str, str]]:
        uncaptioned(prompt.media, taken, captioner, f"judge {judge}")
        return route_prompt(ws, prompt, taken, captioner)

    def generate(key: str, prompt: JudgePrompt, index: int) -> str:
        paths = [(m, path_of(sha)) for m, sha in prompt.media]
        return generator.generate(key, prompt.system, prompt.user, paths, TEMPERATURE, index)

    bar, task_id = _progress(f"{judge} ({setting}) judges")
    with bar:
        result = run_judge(
            ws,
            judge,
            generator.model_id,
            setting,
            generate,
            ("score", "pair") if kind == "both" else (kind,),
            samples,
            run,
            lambda done, total: bar.update(task_id, completed=done, total=total),  # type: ignore[arg-type]
            route,
        )
    if json_out:
        print_json({"judge": f"{judge}/{setting}", "run": run, **result.as_dict()})
    else:
        out_console.print(
            f"{judge}/{setting} run {run}: {result.judged} samples judged, {result.cached} already judged, "
            f"{result.invalid} of {result.answers} answers invalid",
            highlight=False,
            markup=False,
        )
