"""``curate people``: who may author, review and maintain."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from curation.tables import Person

from .common import fail, open_workspace, out_console, print_json

app = typer.Typer(help="Manage people and their roles (author, reviewer, maintainer).", no_args_is_help=True)

LanguagesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--languages",
        help="Language tags the person reads, comma-separated or repeated (zh,en); an empty value clears them "
        "(reads every language).",
    ),
]
CanOption = Annotated[
    list[str] | None,
    typer.Option(
        "--can",
        help="A stage the person is qualified for; repeat or comma-separate. At a stage anyone is qualified for, "
        "only those qualified are offered it. An empty value clears them.",
    ),
]


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="The person's name (unique; used in JSONL files).")],
    role: Annotated[list[str], typer.Option("--role", "-r", help="author, reviewer or maintainer; repeat.")],
    email: Annotated[str | None, typer.Option(help="E-mail, used to match Label Studio users.")] = None,
    languages: LanguagesOption = None,
    can: CanOption = None,
) -> None:
    """Add a person, or add roles to an existing one."""
    ws = open_workspace()
    person = ws.add_person(name, role, email)
    if languages is not None or can is not None:
        person = ws.set_abilities(name, languages, can)
    out_console.print(_line(person))


@app.command("edit")
def edit(
    name: Annotated[str, typer.Argument(help="The person to change.")],
    languages: LanguagesOption = None,
    can: CanOption = None,
) -> None:
    """Set the languages a person reads and the stages they are qualified for. Queues offer an item only to
    reviewers who read its language (people with none set read every language) and, at a stage anyone is
    qualified for, only to those qualified; the staffing planner plans with the same rule."""
    if languages is None and can is None:
        raise fail("nothing to change: give --languages and/or --can (an empty value clears it)")
    person = open_workspace().set_abilities(name, languages, can)
    out_console.print(_line(person))


def _line(person: Person) -> str:
    extra = (f"; reads {person.languages}" if person.languages else "") + (
        f"; qualified for {person.can}" if person.can else ""
    )
    return f"{person.name}: {person.roles}{extra}"


@app.command("list")
def list_people(json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List people and their roles."""
    people = open_workspace().people()
    if json_out:
        print_json(
            [
                {
                    "name": p.name,
                    "roles": sorted(p.role_set),
                    "email": p.email,
                    "languages": sorted(p.language_set),
                    "can": sorted(p.can_set),
                }
                for p in people
            ]
        )
        return
    table = Table("name", "roles", "email", "languages", "can")
    for p in people:
        table.add_row(p.name, p.roles, p.email or "", p.languages, p.can)
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
