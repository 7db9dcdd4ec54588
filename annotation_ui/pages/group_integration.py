"""Group integration (TRIAD C.2 step 6): sisters side by side, the perturbed modality marked,
the automatic group checks' results, and the reviewer's pass or fail for the whole group."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_audio, show_image, verdict_form
from annotation_ui.logic import group_panel

user, ws, snap, group = review_queue(
    "Group integration",
    "Sisters must differ only in the perturbed modality, share their options, and not all share one answer.",
    "group",
    "group_integration",
    noun="group",
)
panel = group_panel(ws, snap, group)


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

for column, sister in zip(st.columns(len(panel.sisters)), panel.sisters, strict=True):
    with column, st.container(border=True):
        st.markdown(f"#### {sister.id}")
        st.markdown(f"**Text**{badge('text')}\n\n{sister.context}")
        st.markdown(f"**Image**{badge('image')}")
        show_image(ws, sister.image)
        st.markdown(f"**Audio**{badge('audio')}")
        show_audio(ws, sister.audio)
        st.markdown(f"**{sister.question}**")
        st.markdown(
            "\n".join(
                f"- **{key}.** {text}" + (" ← answer" if key == sister.answer else "")
                for key, text in sister.options.items()
            )
        )

answer = verdict_form(f"group-{group}", "Verdict for the group", "Note", "Which sister to fix, and why")
if answer is not None:
    verdict, note = answer
    record_review(
        ws,
        {"group": group, "stage": "group_integration", "reviewer": user.name, "verdict": verdict, "note": note},
        f"Recorded your verdict on group {group}.",
    )
