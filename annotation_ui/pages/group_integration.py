"""Group integration (TRIAD C.2 step 6): sisters side by side, the perturbed modality marked,
the automatic group checks' results, and the reviewer's pass or fail for the whole group.

Only groups ready for it are listed (every live sister passed its answer check), each with its sisters' states.
The page shows every sister's label, so before showing anything of the picked group it says so, names the blind
checks the reviewer would give up, and waits for a confirm (which is recorded as an exposure). The verdict and note
are kept as the reviewer's draft until submitted (drawn, and so restored, only past that confirm)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import (
    record_review,
    reveal_gate,
    review_queue,
    show_audio,
    show_image,
    show_options,
    show_text,
    verdict_form,
)
from annotation_ui.logic import group_panel, group_summary
from annotation_ui.page_drafts import PageDraft, verdict_fields
from curation.group_options import option_differences
from curation.notes import NOTE_LABELS, item_notes
from curation.review_queues import group_content

PAGE = "group_integration"

user, ws, snap, group = review_queue(
    "Group integration",
    "Sisters must differ only in the perturbed modality (no two identical), keep their options as the template "
    "allows, and two sisters one modality apart must have different answers (the altered cue changes it). "
    "Only groups whose every sister passed its blind answer check are listed.",
    "group",
    "group_integration",
    noun="group",
    describe=group_summary,
)
panel = group_panel(ws, snap, group)
if not reveal_gate(
    ws,
    snap,
    user,
    [s.id for s in panel.sisters],
    f"the {len(panel.sisters)} sisters of group {group}",
    f"page group_integration {group}",
):
    st.stop()


def badge(modality: str) -> str:
    if modality == panel.perturbed or (panel.perturbed == "mixed" and modality in panel.varying):
        return " :orange-badge[perturbed]"
    if modality in panel.varying:
        return " :red-badge[differs, but not perturbed]"
    return ""


st.subheader(f"Group {panel.group}: {len(panel.sisters)} sisters, perturbed modality **{panel.perturbed}**")
if panel.rule_reasons:
    st.error("Automatic checks: " + ", ".join(f"`{r}`" for r in panel.rule_reasons), icon=":material/error:")
else:
    st.success("Automatic checks: all pass.", icon=":material/check_circle:")

differences = option_differences({sister.id: sister.options for sister in panel.sisters})
if differences:
    st.warning(
        "The sisters' options differ. TRIAD §3.4 allows minimal wording or cardinality adjustments; "
        "judge whether these are such, and fail the group if not.",
        icon=":material/compare_arrows:",
    )
    st.dataframe(
        [
            {"option": d.key, **{item: "(absent)" if text is None else text for item, text in d.texts.items()}}
            for d in differences
        ],
        hide_index=True,
    )

for column, sister in zip(st.columns(len(panel.sisters)), panel.sisters, strict=True):
    with column, st.container(border=True):
        st.markdown(f"#### {sister.id}")
        state = snap.status_by_id[sister.id]
        st.text(
            f"State: {state.state}"
            + (f" at {state.stage}" if state.stage else "")
            + (f" · {', '.join(state.reasons)}" if state.reasons else "")
        )
        st.markdown(f"**Text**{badge('text')}")
        st.text(sister.context)
        st.markdown(f"**Image**{badge('image')}")
        show_image(ws, sister.image)
        st.markdown(f"**Audio**{badge('audio')}")
        show_audio(ws, sister.audio)
        for modality, note in item_notes(sister.extra).items():  # the A+/I+ notes, reviewed with the item
            show_text(NOTE_LABELS[modality], note)
        show_text("Question", sister.question)
        show_options(sister.options, sister.answer)

form = f"group-{group}"
assert snap.derived is not None
shown = group_content(snap.derived, "group_integration", group)  # the sisters as this page shows them
draft = PageDraft(ws, user.name, PAGE, f"group:{group}", verdict_fields(form), shown, "verdict")
answer = verdict_form(form, "Verdict for the group", "Note", "Which sister to fix, and why", draft)
if answer is not None:
    verdict, note = answer
    record_review(
        ws,
        {"group": group, "stage": "group_integration", "reviewer": user.name, "verdict": verdict, "note": note},
        f"Recorded your verdict on group {group}.",
        forget=draft.keys,
        draft=draft.target,
    )
