"""How the reference describes a Pydantic model (scripts/gen_reference.py's formats and settings pages): each
field's type, default, constraints and meaning (its attribute docstring), the model's own docstring, and every
public model of a package, found in the code."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import textwrap
import types
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from scripts.reference_common import cell as _cell


def attribute_docs(model: type) -> dict[str, str]:
    """The docstrings written under fields (``name: int = 1`` then ``\"\"\"why\"\"\"``), base classes first."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls in (BaseModel, object) or cls.__module__.split(".")[0] not in {"curation", "checker", "exports"}:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def type_name(annotation: Any) -> str:
    """A field's type as a reader of JSON sees it."""
    if annotation is type(None):
        return "null"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"list[{type_name(args[0])}]" if args else "list"
    if origin is dict:
        return f"object[{type_name(args[0])} → {type_name(args[1])}]" if args else "object"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", str(annotation)).replace("|", "\\|")


def _nested_models(annotation: Any) -> Iterable[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _nested_models(arg)


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return ""
    value = info.default_factory() if info.default_factory is not None else info.default  # type: ignore[call-arg]
    if value is PydanticUndefined:
        return ""
    if isinstance(value, BaseModel):
        return "(its defaults)"
    return f"`{json.dumps(value, default=str)}`"


def _constraints(info: FieldInfo) -> str:
    found = []
    for meta in info.metadata:
        for key, sign in (
            ("ge", "≥"),
            ("gt", ">"),
            ("le", "≤"),
            ("lt", "<"),
            ("min_length", "min length"),
            ("max_length", "max length"),
        ):
            value = getattr(meta, key, None)
            if value is not None:
                found.append(f"{sign} {value}")
        pattern = getattr(meta, "pattern", None)
        if pattern:
            found.append(f"pattern `{pattern}`")
    return ", ".join(found)


def model_table(model: type[BaseModel]) -> str:
    docs = attribute_docs(model)
    rows = ["| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        key = info.alias or name
        meaning = info.description or docs.get(name, "")
        limits = _constraints(info)
        if limits:
            meaning = f"{meaning} ({limits})" if meaning else f"({limits})"
        rows.append(
            f"| `{key}` | {type_name(info.annotation)} | {'yes' if info.is_required() else 'no'} | "
            f"{_default(info)} | {_cell(meaning)} |"
        )
    return "\n".join(rows)


def _doc(model: type) -> str:
    own = model.__dict__.get("__doc__")
    return " ".join(inspect.cleandoc(own).split()) if own else ""


def discovered_models(package: str = "curation") -> list[type[BaseModel]]:
    """Every public Pydantic model defined in ``package`` but its tables (the domain imports no optional runtime)."""
    found: dict[str, type[BaseModel]] = {}
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        if ".migrations" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__ == info.name
                and not name.startswith("_")
                and not hasattr(value, "__table__")  # a database table (SQLModel), not a format
            ):
                found[f"{info.name}:{name}"] = value
    return [found[k] for k in sorted(found)]
