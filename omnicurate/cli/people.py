"""``curate people``: who may author, review and maintain."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from .common import fail, open_workspace, out_console, print_json

app = typer.Typer(help="Manage people and their roles (author, reviewer, maintainer).", no_args_is_help=True)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="The person's name (unique; used in JSONL files).")],
    role: Annotated[list[str], typer.Option("--role", "-r", help="author, reviewer or maintainer; repeat.")],
    email: Annotated[str | None, typer.Option(help="E-mail, used to match Label Studio users.")] = None,
) -> None:
    """Add a person, or add roles to an existing one."""
    person = open_workspace().add_person(name, role, email)
    out_console.print(f"{person.name}: {person.roles}")


@app.command("list")
def list_people(json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List people and their roles."""
    people = open_workspace().people()
    if json_out:
        print_json([{"name": p.name, "roles": sorted(p.role_set), "email": p.email} for p in people])
        return
    table = Table("name", "roles", "email")
    for p in people:
        table.add_row(p.name, p.roles, p.email or "")
    out_console.print(table)


@app.command("passwd")
def passwd(
    name: Annotated[str, typer.Argument(help="The person whose password to set.")],
    password: Annotated[
        str | None,
        typer.Option(help="At least 8 characters (default: asked twice on a terminal, else one line of stdin)."),
    ] = None,
) -> None:
    """Set a person's sign-in password for the annotation UI (stored hashed with scrypt).

    On a terminal the password is asked twice, hidden; otherwise the first line of standard input is the
    password (``printf '%s\\n' "$PW" | curate people passwd ann1``)."""
    ws = open_workspace()
    ws.person(name)  # an unknown name is refused before asking anything
    if password is None:
        if sys.stdin.isatty():
            password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
        else:
            password = sys.stdin.readline().removesuffix("\n").removesuffix("\r")
            if not password:
                raise fail("no password on standard input (give one line, or use --password)")
    ws.set_password(name, password)
    out_console.print(f"password set for {name}")
