"""Authorship is history: whoever authored any revision of an item stays its author for separation and exposure.

An item's ``author`` column names the author of its current revision; re-importing it under another name
changes that column, never what the first author knows. :func:`former_authors` reads the authors of the
earlier revisions, so that the separation rules and the exposure derivation count them too.
"""

from __future__ import annotations

from sqlalchemy import String, select
from sqlmodel import Session, col

from .tables import Item, ItemRevision


def former_authors(session: Session, items: list[str] | None = None) -> dict[str, frozenset[str]]:
    """Item id -> the people who authored a revision of it but not its current one (items with none absent)."""
    author = ItemRevision.__table__.c.content["author"].as_string()  # type: ignore[attr-defined]
    query = (
        select(col(ItemRevision.item_id), author.cast(String), col(Item.author))
        .join(Item, col(Item.id) == col(ItemRevision.item_id))
        .where(col(Item.revision) > 1)
    )
    if items is not None:
        query = query.where(col(Item.id).in_(items))
    found: dict[str, set[str]] = {}
    for item_id, past, current in session.execute(query):
        if past and past != current:
            found.setdefault(item_id, set()).add(past)
    return {item_id: frozenset(people) for item_id, people in found.items()}


def authored(session: Session, item_id: str, person: str) -> bool:
    """Did ``person`` author any revision of the item?"""
    item = session.get(Item, item_id)
    if item is not None and item.author == person:
        return True
    return person in former_authors(session, [item_id]).get(item_id, frozenset())
