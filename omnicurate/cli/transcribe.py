"""``curate transcribe --backend SPEC``: speech-to-text for every clip, stored per model (TRIAD G.6)."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import checked_backend, err_console, open_workspace, print_json


def transcribe_cmd(
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="whisper:<model-folder> (transformers), openai:<base-url>#<model>[#key=ENV_NAME] (any server with "
            "/v1/audio/transcriptions) or replay:<file.jsonl> (recorded transcripts).",
        ),
    ],
    item: Annotated[
        list[str] | None, typer.Option("--item", help="Transcribe only this item's clip (repeatable).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Transcribe each audio clip the model has not transcribed yet; the checker's transcript route reads the result."""
    from checker.transcription import open_transcriber, transcribe_clips
    from curation.transcripts import clips, pending, store_transcripts

    ws = open_workspace()
    transcriber = open_transcriber(checked_backend(backend))
    try:
        every = clips(ws, item)
        todo = pending(ws, transcriber.model_id, every)
        err_console.print(
            f"{len(every)} clip(s); {len(every) - len(todo)} already transcribed by {transcriber.model_id}",
            highlight=False,
            markup=False,
        )
        done, skipped = transcribe_clips(transcriber, todo)
    finally:
        transcriber.close()
    stored = store_transcripts(ws, done, actor="cli")
    document = {
        "model": transcriber.model_id,
        "backend": transcriber.kind,
        "clips": len(every),
        "transcribed": stored,
        "already": len(every) - len(todo),
        "not_in_replay": skipped,
        "transcripts": [{"audio": t.audio_sha256, "language": t.language, "text": t.text} for t in done],
    }
    if json_out:
        print_json(document)
        return
    err_console.print(
        f"transcribed {stored} clip(s) with {transcriber.model_id}"
        + (f"; {len(skipped)} clip(s) not in the replay file" if skipped else ""),
        highlight=False,
        markup=False,
    )
