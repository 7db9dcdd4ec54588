"""``curate ls up`` / ``curate ls down``: a local Label Studio in one command (annotation_ui.labelstudio.local_server)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import JsonFlag, cli_path, err_console, out_console, print_json

HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        help="Folder of the server's venv, data and token (default ~/.local/share/omnicurate/labelstudio-VERSION).",
    ),
]


def up_cmd(
    home: HomeOpt = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8080,
    email: Annotated[str, typer.Option(help="The server account the bridge signs in as.")] = "maintainer@localhost",
    label_studio: Annotated[
        Path | None,
        typer.Option("--label-studio", help="Use this installed label-studio program instead of installing one."),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Install the pinned Label Studio in a venv of its own (once), start it on 127.0.0.1 with an API token, and
    print the three variables to export; running it again prints them again."""
    from annotation_ui.labelstudio.local_server import default_home, start

    folder = cli_path(home, "--home", must_exist=False) if home else default_home()
    binary = cli_path(label_studio, "--label-studio") if label_studio else None
    server = start(folder, port, email, binary, log=lambda msg: err_console.print(msg, highlight=False))
    if json_out:
        print_json(
            {"url": server.url, "pid": server.pid, "home": server.home, "email": server.email, "env": server.exports()}
        )
        return
    err_console.print(f"Label Studio at {server.url} (pid {server.pid}; sign in as {server.email}, password in "
                      f"{server.home}/account.json); stop it with `curate ls down`", highlight=False, soft_wrap=True)  # fmt: skip
    for key, value in server.exports().items():
        out_console.print(f"export {key}={value}", highlight=False, markup=False)


def down_cmd(home: HomeOpt = None) -> None:
    """Stop the local Label Studio started by `curate ls up` (its data stays for the next `up`)."""
    from annotation_ui.labelstudio.local_server import default_home, stop

    folder = cli_path(home, "--home", must_exist=False) if home else default_home()
    server = stop(folder)
    out_console.print(
        f"stopped Label Studio at {server.url}" if server else f"no local Label Studio runs from {folder}"
    )


def register(ls_app: typer.Typer) -> None:
    ls_app.command("up")(up_cmd)
    ls_app.command("down")(down_cmd)
