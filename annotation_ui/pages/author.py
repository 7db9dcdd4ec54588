"""Write a new item or edit one of yours: media with preview, the TRIAD fields, taxonomy leaves with their
definitions as help, the scene group (sisters shown; their answers only after a confirm, as an exposure),
the optional audio and image notes (TRIAD's A+ / I+ descriptions, ``curation.notes``), provenance. Every typed
field is kept as the author's draft on the server until saved or discarded (a reload resumes it). Problems
appear beside their field, all of them at once; an upload that is no image or audio (or a decompression bomb) is
named at once, never previewed."""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlalchemy import select

from annotation_ui.components import (
    checked_upload,
    flash,
    other_kind_hint,
    require,
    reveal_gate,
    show_audio,
    show_image,
    snapshot,
    workspace,
)
from curation.authoring import Upload, item_fields, save_uploaded_item
from curation.drafts import discard_draft, load_draft, save_draft
from curation.errors import CurateError, ValidationFailed
from curation.kinds.mcq import MCQ
from curation.notes import NOTE_LABELS, NOTE_MAX_CHARS, NOTE_MODALITIES
from curation.tables import Item
from curation.taxonomy import TAXONOMY
from curation.vocab import AUDIO_SOURCES, IMAGE_SOURCES, MODALITIES, OPTION_KEYS, PERTURBED

EDIT_ITEM = "edit_item"
NEW = "New item"

user = require("author")
ws = workspace()
snap = snapshot()
st.title("Write or edit an item")

with ws.session() as s:
    authored = s.execute(select(Item.id, Item.kind).where(Item.author == user.name).order_by(Item.id)).all()
mine = [item for item, kind in authored if kind == MCQ.name]  # this form writes TRIAD items (the mcq kind)
elsewhere = {item: kind for item, kind in authored if kind != MCQ.name}
wanted = st.session_state.pop(EDIT_ITEM, None)
if wanted in elsewhere:
    st.info(
        f"{wanted} is a {elsewhere[wanted]} item, which this page cannot edit. {other_kind_hint(elsewhere[wanted])}"
    )
choices = [NEW, *mine]
if wanted in mine:
    st.session_state["author-target"] = wanted
target = st.selectbox("Item", choices, key="author-target")
editing = target != NEW
current: dict[str, Any] = item_fields(ws, target) if editing else {}
prefix = f"author-{target}"
PROBLEMS = f"{prefix}-problems"
problems: dict[str, list[str]] = st.session_state.get(PROBLEMS, {})
DRAFT_PAGE, draft_subject = "author", f"item:{target}" if editing else "new"
prov = current.get("provenance", {})
FIELDS: dict[str, Any] = {  # every typed field -> its value when no draft holds one (the stored item's, or empty)
    "group": current.get("group", ""),
    "perturbed": PERTURBED[0],
    "n-options": len(current.get("options", {})) or 4,
    "id": current.get("id", ""),
    "language": current.get("language", "en"),
    "context": current.get("context", ""),
    "question": current.get("question", ""),
    **{f"opt-{key}": current.get("options", {}).get(key, "") for key in OPTION_KEYS[:8]},
    "answer": current.get("answer"),
    **{f"leaf-{m}": current.get("taxonomy", {}).get(m) for m in MODALITIES},
    "ambiguous": list(current.get("ambiguous", [])),
    "image-source": prov.get("image", {}).get("source", IMAGE_SOURCES[0]),
    "image-license": prov.get("image", {}).get("license", ""),
    "audio-source": prov.get("audio", {}).get("source", AUDIO_SOURCES[0]),
    "audio-license": prov.get("audio", {}).get("license", ""),
    **{f"note-{m}": current.get("notes", {}).get(m, "") for m in NOTE_MODALITIES},
}
NOTED = [m for m in NOTE_MODALITIES if m in (snap.facts[target].modalities if editing else MODALITIES)]
"""The modalities the item has that a note may describe: only theirs get a note area."""


def key_of(name: str) -> str:
    return f"{prefix}-{name}"


def keep_draft() -> None:
    """Copy every typed field to the server (uploads are not part of a draft): a reload resumes them."""
    values = {name: st.session_state.get(key_of(name)) for name in FIELDS if key_of(name) in st.session_state}
    save_draft(ws, user.name, DRAFT_PAGE, draft_subject, values)


# first draw in this tab, or back from another item (Streamlit drops the state of widgets a run did not draw):
# the person's draft, else the item
if f"{prefix}-init" not in st.session_state or key_of("id") not in st.session_state:
    draft = load_draft(ws, user.name, DRAFT_PAGE, draft_subject) or {}
    for name, default in FIELDS.items():
        st.session_state[key_of(name)] = draft.get(name, default)
    st.session_state[f"{prefix}-init"] = True
    if draft:
        st.info(
            "Your unsaved draft of this item was restored (uploads are not kept in a draft: upload them again).",
            icon=":material/restore:",
        )
for name, choices in {
    "image-source": IMAGE_SOURCES,
    "audio-source": AUDIO_SOURCES,
    "perturbed": PERTURBED,
    **{f"leaf-{m}": tuple(TAXONOMY[m]) for m in MODALITIES},
}.items():
    if st.session_state.get(key_of(name)) not in (*choices, None):  # a recorded value the lists no longer hold
        st.session_state[key_of(name)] = None if name.startswith("leaf-") else choices[0]


FIELD_LABELS = {
    "id": "Item id",
    "group": "Scene group id",
    "perturbed": "Perturbed modality",
    "language": "Language",
    "context": "Context",
    "question": "Question",
    "options": "Options",
    "answer": "Answer",
    "taxonomy": "Ambiguity taxonomy",
    "ambiguous": "Ambiguous modalities",
    "provenance": "Provenance",
    "notes": "Notes",
    "image": "Image",
    "audio": "Audio",
    "item": "The item",
}


def field_label(name: str) -> str:
    """A problem's field as the form labels it ("Ambiguous modalities", "Options › B"), not its JSON path."""
    head, *rest = name.split(".")
    return " › ".join([FIELD_LABELS.get(head, head), *rest])


def errors_for(*fields: str) -> None:
    """Show the problems of these fields (and their sub-fields) right here, in the form's own words."""
    for name, messages in problems.items():
        if any(name == f or name.startswith(f"{f}.") for f in fields):
            for message in messages:
                st.error(f"{field_label(name)}: {message}", icon=":material/error:")


if editing:
    status = snap.status_by_id.get(target)
    if status is not None:
        st.caption(
            f"Revision {snap.facts[target].revision} · state **{status.state}** "
            + " ".join(f"`{r}`" for r in status.reasons)
        )

# ----- media (outside the form, so the preview shows at once) -----------------------------------
left, right = st.columns(2)
with left:
    image_file = st.file_uploader("Image", type=["jpg", "jpeg", "png", "webp"], key=f"{prefix}-image")
    if image_file is not None:
        if checked_upload(ws, "image", image_file, problems):
            st.image(image_file.getvalue())
    elif editing:
        show_image(ws, snap.facts[target].image, caption="current image (upload to replace)")
    errors_for("image")
with right:
    audio_file = st.file_uploader("Audio", type=["wav", "flac", "ogg", "mp3"], key=f"{prefix}-audio")
    if audio_file is not None:
        if checked_upload(ws, "audio", audio_file, problems):
            st.audio(audio_file.getvalue())
    elif editing:
        show_audio(ws, snap.facts[target].audio)
        st.caption("current audio (upload to replace)")
    errors_for("audio")

# ----- group (outside the form: naming an existing one shows its sisters) -------------------------
group = st.text_input(
    "Scene group id (an existing group, or a new one)",
    key=key_of("group"),
    placeholder="e.g. kitchen-02",
    on_change=keep_draft,
).strip()
if group in snap.perturbed:
    perturbed = snap.perturbed[group]
    sisters = [snap.facts[i] for i in snap.sisters.get(group, []) if i != target]
    st.caption(f"Perturbed modality: **{perturbed}** · sisters: " + (", ".join(s.id for s in sisters) or "none yet"))
    # The sisters' answers are labels: shown only once the author knows them or confirms (an exposure).
    if sisters and reveal_gate(
        ws, snap, user, [s.id for s in sisters], f"the sisters of group {group}", f"page author {group}"
    ):
        for sister in sisters:
            st.text(f"{sister.id}: {sister.context} (answer {sister.answer})")
else:
    if group:
        st.caption("A new group: its sisters will share this id.")
    perturbed = st.selectbox(
        "Perturbed modality (what differs between sisters)", PERTURBED, key=key_of("perturbed"), on_change=keep_draft
    )
errors_for("group", "perturbed")
n_options = st.number_input("Number of options", 2, 8, key=key_of("n-options"), on_change=keep_draft)

# ----- the item (every field kept as a draft on the server as it is typed) ----------------------
keys = OPTION_KEYS[: int(n_options)]
if st.session_state.get(key_of("answer")) not in keys:
    st.session_state[key_of("answer")] = None
with st.container(border=True):
    item_id = st.text_input(
        "Item id", key=key_of("id"), disabled=editing, placeholder="e.g. kitchen-02-a", on_change=keep_draft
    )
    errors_for("id", "author")
    language = st.text_input("Language (BCP 47)", key=key_of("language"), on_change=keep_draft)
    errors_for("language")
    context = st.text_area("Context (the text modality)", key=key_of("context"), on_change=keep_draft)
    errors_for("context")
    question = st.text_input("Question", key=key_of("question"), on_change=keep_draft)
    errors_for("question")
    options = {key: st.text_input(f"Option {key}", key=key_of(f"opt-{key}"), on_change=keep_draft) for key in keys}
    errors_for("options")
    answer = st.selectbox(
        "Answer", keys, key=key_of("answer"), placeholder="The option the full item supports", on_change=keep_draft
    )
    errors_for("answer")
    st.markdown("**Ambiguity taxonomy** (TRIAD App. A): where does each modality's ambiguity come from?")
    taxonomy = {}
    for column, modality in zip(st.columns(3), MODALITIES, strict=True):
        leaves = list(TAXONOMY[modality])
        taxonomy[modality] = column.selectbox(
            f"{modality.capitalize()} leaf",
            leaves,
            key=key_of(f"leaf-{modality}"),
            on_change=keep_draft,
            help="\n\n".join(f"**{leaf}**: {TAXONOMY[modality][leaf].definition}" for leaf in leaves),
        )
    errors_for("taxonomy")
    ambiguous = st.multiselect(
        "Ambiguous modalities (each is ambiguous alone; the count is the tier)",
        MODALITIES,
        key=key_of("ambiguous"),
        on_change=keep_draft,
    )
    errors_for("ambiguous")
    st.markdown(
        "**Notes** (optional, TRIAD App. E.3): a compact audio note — transcript, prosody that disambiguates, "
        "voice properties, non-speech sounds — and a literal caption of the image. Never name an option, the "
        "taxonomy leaf or a sister item."
    )
    notes = {
        m: st.text_area(NOTE_LABELS[m], key=key_of(f"note-{m}"), on_change=keep_draft, max_chars=NOTE_MAX_CHARS)
        for m in NOTED
    }
    errors_for("notes")
    st.markdown("**Provenance and licence**")
    c1, c2, c3, c4 = st.columns(4)
    image_source = c1.selectbox("Image source", IMAGE_SOURCES, key=key_of("image-source"), on_change=keep_draft)
    image_license = c2.text_input("Image licence (SPDX)", key=key_of("image-license"), on_change=keep_draft)
    audio_source = c3.selectbox("Audio source", AUDIO_SOURCES, key=key_of("audio-source"), on_change=keep_draft)
    audio_license = c4.text_input("Audio licence (SPDX)", key=key_of("audio-license"), on_change=keep_draft)
    errors_for("provenance")
    save_column, discard_column, _ = st.columns([1, 1, 3])
    submitted = save_column.button("Save item", type="primary")
    if discard_column.button("Discard my draft", icon=":material/delete:"):
        discard_draft(ws, user.name, DRAFT_PAGE, draft_subject)
        for name in [*FIELDS, "init"]:
            st.session_state.pop(key_of(name), None)
        st.rerun()

if submitted:
    fields: dict[str, Any] = {
        "id": current.get("id", item_id),
        "group": group,
        "perturbed": perturbed,
        "language": language,
        "context": context,
        "question": question,
        "options": options,
        "answer": answer or "",
        "taxonomy": {m: leaf or "" for m, leaf in taxonomy.items()},
        "ambiguous": ambiguous,
        # an empty (or only blank) area is no note
        **({"notes": kept} if (kept := {m: t for m, t in notes.items() if t and not t.isspace()}) else {}),
        "provenance": {
            # keep extra provenance keys (attribution, url, ...) of an edited item
            "image": {**prov.get("image", {}), "source": image_source, "license": image_license},
            "audio": {**prov.get("audio", {}), "source": audio_source, "license": audio_license},
        },
    }
    progress = st.progress(0.1, text="Reading the uploads…")
    image = Upload(image_file.name, image_file.getvalue()) if image_file is not None else None
    audio = Upload(audio_file.name, audio_file.getvalue()) if audio_file is not None else None
    progress.progress(0.4, text="Checking the item and decoding its media…")
    try:
        report = save_uploaded_item(ws, user.name, fields, image, audio)
    except ValidationFailed as exc:
        progress.empty()
        found: dict[str, list[str]] = {}
        for p in exc.problems:
            found.setdefault(p.field or "item", []).append(p.message)
        st.session_state[PROBLEMS] = found
        st.rerun()
    except CurateError as exc:
        progress.empty()
        st.session_state[PROBLEMS] = {"item": [str(exc)]}
        st.rerun()
    progress.progress(1.0, text="Saved.")
    st.session_state.pop(PROBLEMS, None)
    discard_draft(ws, user.name, DRAFT_PAGE, draft_subject)
    for name in [*FIELDS, "init"]:
        st.session_state.pop(key_of(name), None)
    saved = fields["id"]
    what = "created" if report.created else "saved as a new revision" if report.revised else "unchanged"
    flash(f"Item {saved} {what}.")
    st.session_state[EDIT_ITEM] = saved
    st.rerun()

errors_for("item")
