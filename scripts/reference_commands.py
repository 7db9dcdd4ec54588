"""The command and reason-code pages of the manual's reference (docs/reference/cli.md, reasons.md), written by
scripts/gen_reference.py: every ``curate`` command from the command line's own definitions (Click), every reason
code from ``curation.reasons``."""

from __future__ import annotations

import inspect
from enum import Enum
from typing import Any

from scripts.reference_common import HEADER
from scripts.reference_common import cell as _cell

# ---- commands -----------------------------------------------------------------------------------------------


def _click_root() -> Any:
    import typer

    from omnicurate.cli.main import app

    return typer.main.get_command(app)


def _argument_name(param: Any) -> str:
    return str(getattr(param, "metavar", None) or param.name).upper()


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _param_row(param: Any) -> str:
    """One argument or option (Typer bundles its own Click, so parameters are read by their attributes)."""
    if _is_argument(param):
        name, kind = f"`{_argument_name(param)}`", "argument"
    else:
        name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
        kind = "flag" if getattr(param, "is_flag", False) else "option"
    default = ""
    value = param.default
    if not _is_argument(param) and not param.required and value not in (None, False, (), []) and not callable(value):
        default = f"`{getattr(value, 'value', value)}`"
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    choices = [c.value for c in annotation] if isinstance(annotation, type) and issubclass(annotation, Enum) else []
    text = (getattr(param, "help", None) or "") + (
        " (one of " + ", ".join(f"`{c}`" for c in choices) + ")" if choices else ""
    )
    return f"| {name} | {kind} | {'yes' if param.required else 'no'} | {default} | {_cell(text)} |"


def cli_page(root: Any = None) -> str:
    root = root or _click_root()
    out = [
        HEADER,
        "# Commands\n\n",
        "Every `curate` command, from the command line's own definitions (`curate COMMAND --help` prints the "
        "same). Conventions ([CLI conventions](../cli-conventions.md)): paths on the command line are relative to "
        "the current folder; `--json` prints one JSON document; exit codes 0 (success), 1 (a check found a "
        "problem, a statistic is undefined), 2 (bad input or usage).\n\n",
    ]

    def walk(command: Any, path: list[str]) -> None:
        group = hasattr(command, "commands")
        if path and not getattr(command, "hidden", False):
            name = " ".join(path)
            out.append(f"## `{name}`\n\n")
            doc = inspect.cleandoc(command.help or "").strip()
            if doc:
                out.append(doc + "\n\n")
            params = [p for p in command.params if getattr(p, "expose_value", True) and p.name != "help"]
            arguments = " ".join(_argument_name(p) for p in params if _is_argument(p))
            options = " [OPTIONS]" if any(not _is_argument(p) for p in params) else ""
            usage = f"curate {name} COMMAND ..." if group else f"curate {name}{options} {arguments}"
            out.append(f"```\n{' '.join(usage.split())}\n```\n\n")
            if params:
                out.append("| name | kind | required | default | help |\n|---|---|---|---|---|\n")
                out.append("\n".join(_param_row(p) for p in params) + "\n\n")
        if group:
            for sub in sorted(command.commands):
                walk(command.commands[sub], [*path, sub])

    walk(root, [])
    return "".join(out).rstrip() + "\n"


# ---- reason codes -------------------------------------------------------------------------------------------


def reasons_page() -> str:
    from curation.reasons import REASONS

    out = [
        HEADER,
        "# Reason codes\n\n",
        "Why an item is returned, held or left out, as `curate status`, `curate funnel`, the UI and the release's "
        "`admission.jsonl` list them. Codes are stable strings; `<...>` is filled in (a view, a modality, a "
        "cluster id).\n\n",
    ]
    for family, codes in REASONS.items():
        out.append(f"## {family}\n\n| code | meaning |\n|---|---|\n")
        out += [f"| `{code}` | {_cell(meaning)} |\n" for code, meaning in codes.items()]
        out.append("\n")
    return "".join(out).rstrip() + "\n"
