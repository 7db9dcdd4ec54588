"""Every reason code with its meaning, in one place: what `curate status`, the funnel, the UI and a release's
admission record may say, and what the manual's reference (docs/reference/reasons.md) lists.

A code is a stable string; ``<...>`` stands for a filled-in part (a view, a modality, a cluster id). A test
checks that the demos of every kind produce only codes listed here (tests/curation/test_reasons.py), and one
that every reason a judge query can be given is listed in its family (tests/curation/kinds/judge/
test_query_reasons.py); a new rule adds its code here.
"""

from __future__ import annotations

import re
from typing import Final

JUDGE_QUERIES: Final = "Judge queries (`curate judge queries list`; a judge release's `query_curation`)"
"""The family of the reasons a candidate query is held or dropped for (``curation.kinds.judge.queries``)."""

REASONS: Final[dict[str, dict[str, str]]] = {
    "Review stages (mcq)": {
        "grammar": "a grammar reviewer failed the item (TRIAD §4.2: both reviewers must sign off).",
        "audio_unnatural:<axis>": "the listeners' mean on an audio axis (naturalness, clarity, artefacts) is "
        "below `[review] audio_min_mean`.",
        "tts_only_audio": "the audio is plain text-to-speech (`tts`), which is never admitted; edit or record it.",
        "underdetermined": "with every modality, more than one option stays consistent (the checklist's full view).",
        "label_mismatch": "with every modality, the one consistent option is not the item's answer (or none is).",
        "reducible:<view>": "a strict subset of the modalities (the view) already leaves a single option: the item "
        "does not need all of them.",
        "not_enlarging:<modality>": "dropping this modality does not enlarge the consistent set: it adds nothing.",
        "answer_check_disagrees": "the blind answer check chose another option than the label.",
        "checklist:disagreement": "the subset-checklist reviewers disagree under the combination rule; a maintainer "
        "records a consensus (`curate adjudicate`).",
        "exclusion:<rule>": "a counted subset-checklist reviewer attested `fail` on this exclusion rule (`[review] "
        "exclusion_rules`, e.g. `ethics`, `identifying`): the item breaks it and goes back to its author.",
        "exclusion_unattested:<rule>": "no counted subset-checklist reviewer attested this exclusion rule `pass` (their "
        "records carry no `exclusions` answer for it): the item is held until one does; a changed record from the "
        "same reviewer replaces the earlier one.",
        "overridden:<stage>": "a maintainer overrode the stage's verdict (`curate decide ... override`).",
    },
    "Scene groups": {
        "group:multiple_perturbed": "two sisters differ in a modality other than the group's `perturbed` one "
        "(compared on content: media by content hash, text normalized; questions and options are templates).",
        "group:perturbed_unchanged": "two sisters have the same content in the group's `perturbed` modality (the same "
        "media bytes, under any file name, or the same normalized text).",
        "group:identical_sisters": "two sisters are identical in every modality they have (same normalized text, same "
        "media bytes), whatever their answers; `curate audit` lists them too.",
        "group:option_mismatch": 'sisters\' options differ (with `[review] group_options = "exact"`).',
        "group:duplicate_answers": "two sisters that differ in exactly one modality share an answer, or all "
        'sisters share one (the default `[review] group_answers = "perturbation"`); with `"all_distinct"` any two sisters sharing one, with '
        '`"not_all_same"` all sisters sharing one.',
        "group:too_small": "the group has fewer live items than `[review] min_group_size`.",
        "group:sister_pending": "a sister is not yet through its own stages; the group waits for it.",
        "group:reviewer_fail": "the group reviewer failed the group integration.",
    },
    "Gates (held items)": {
        "duplicate:<cluster>": "the item is in an unresolved near-duplicate cluster (`curate audit`, then "
        "`curate audit resolve`).",
        "leak:<kind>": "the audit found a leak: `shared_span` (an option's words in another item), "
        "`option_in_context` (warns by default), `option_modality` (option text naming modality evidence, warns); "
        "in an item's audio or image note: `note_option` (an option's whole text; `[gates] note_option`), "
        "`note_leaf` (one of the item's taxonomy leaves as a word), `note_sister` (a sister item's id).",
        "leak:shared_span:<field>": "a story transition shares a span with another in this field.",
        "leak:duplicate_condition": "a story transition's next-page conditions repeat another's.",
        "leak:reference_span": "a story transition's reference text leaks into its conditions.",
        "media:<problem>": "a medium does not meet `[media]`: `format`, `size`, `sample_rate`, `channels`, "
        "`loudness`, `clipping`, `silence`, `duration`, or `missing` (a release finds the file gone).",
        "probe:<verdict>": "the probe checker's verdict (`underdetermined`, `label_mismatch`, `reducible`) with "
        '`[gates] probe = "warn"` or `"block"`.',
        "empty_view:<view>": "a probe warning: the model found no option consistent with a view (more often a "
        "failed probe than a bad item).",
        "option_prior:<option>": "a probe warning: the model picks this option without any modality (a prior).",
    },
    "Audio production (gates; `curate audio`)": {
        "consent:missing": "a speaker the clip's provenance names has no standing consent record (`curate audio "
        'consent`; a withdrawal ends it); `[gates] consent`, `"block"` by default.',
        "takes:too_few": "a voice-acted clip (its provenance names a producer) has fewer takes than `[audio] "
        "min_takes` (TRIAD B.2: three); `[gates] takes`.",
        "takes:not_chosen": "the clip's producer has not chosen a take (`curate audio choose`).",
        "takes:choice_not_item_audio": "the item's audio is not the take its producer chose: revise the item's "
        "audio to the chosen take (only the item's audio is ever released).",
        "spot_check:pending": "the clip is in the spot-check sample (`[audio] spot_check_rate`, `spot_check_seed`) "
        "and no independent listener has checked it yet (`curate audio spot-check`); `[gates] spot_check`.",
        "spot_check:inconsistent": "a spot-check listener found the clip inconsistent with the other actors' clips: "
        "re-record it, or the listener changes their answer.",
        "group:recording_mismatch": "the clips of an audio-perturbed group differ in actor, session or equipment "
        '(TRIAD B.5); `[gates] recording`, `"warn"` by default.',
    },
    "Adjudication queue (agreement)": {
        "checklist_split:<share>": "this share of the checklist cells split the reviewers (at least "
        "`[agreement] adjudicate_checklist_split`).",
        "split_view:text+image+audio": "the reviewers split on the full view.",
        "audio_spread:<axis>": "the listeners' scores on an axis are at least `adjudicate_audio_spread` apart.",
    },
    "Story transitions (screening and review)": {
        "length:too_short": "a page's text is shorter than `[screen.rules]` allows.",
        "length:current_too_long": "the current page's text is too long.",
        "length:next_too_long": "the next page's text is too long.",
        "speech:multiple_lines": "the next page has more than one dialogue line (one speech target is wanted).",
        "language:<code>": "the text is not in the expected language (py3langid's code).",
        "image:unreadable": "a page image cannot be decoded.",
        "image:too_small": "a page image is below the minimum size.",
        "image:blurry": "a page image is below the sharpness threshold.",
        "image:aspect": "a page image's aspect ratio is out of bounds.",
        "score:invalid": "the model's score answer did not fit the schema.",
        "score:below_min": "the mean of the four criteria is below `[screen] min_score`.",
        "select:not_best_in_book": "another transition of the same book scored higher (`per_book`).",
        "select:below_top_n": "outside the `top` best overall.",
        "annotate:invalid_<task>": "the model's annotation for this task did not fit the schema.",
        "filter:drop": "a filter reviewer dropped the transition (with a reason).",
    },
    "Judge tasks": {
        "responses:none_usable": "every response of the task was reviewed unusable.",
    },
    JUDGE_QUERIES: {
        "duplicate:query": "the query repeats an earlier query's instruction (the same words after normalising "
        "case, width and spacing) with the same input media; the earlier one, by id, is kept. Leave it out, or "
        "reword it (a `query_refine` record) if it asks something else.",
        "duplicate:near_query": "the query's words are near an earlier query's (word-shingle Jaccard of at least "
        "0.8) with the same input media; the earlier one, by id, is kept. Leave it out, or reword it (a "
        "`query_refine` record) if it asks something else.",
        "duplicate:media": "an input medium (by content hash) is an earlier query's or an existing task's. Leave it "
        "out, or import the query with media of its own.",
        "screen:nsfw": "a screener dropped the query as NSFW (Judge Anything §2.1 filters NSFW content); it is never "
        "promoted. A screener who changes their mind records `keep`, which replaces the drop.",
        "screen:low_quality": "a screener dropped the query as low quality (it cannot be answered as asked); it is "
        "never promoted. Leave it out, or reword it (`query_refine`) and have the screener record `keep`.",
        "screen:out_of_scope": "a screener dropped the query as outside its task (another modality pair or purpose); "
        "it is never promoted. Leave it out; a screener's later `keep` replaces the drop.",
        "licence:closed:<licence>": "the query's licence is recognized (named by its SPDX id, e.g. `CC-BY-NC-4.0`) "
        "and is not among the workspace's open licences (§2.1 takes open-source queries only): the query is held, "
        "never drawn or promoted. Leave it out; a benchmark that may hold that licence adds it to `[licences] add` "
        "(curate.toml), which sends the query to screening.",
        "licence:unknown:<text>": "the query's licence text (any text, as given) is not recognized as a licence: "
        "the query is held, never drawn or promoted. Find the source's licence; if the text does name an open "
        "licence, add it as written to `[licences] add` (curate.toml), which sends the query to screening.",
    },
    "Refusals of a review record": {
        "separation:triad": "the record would give one person two roles on an item that TRIAD C.2 keeps apart.",
        "separation:recording": "the listener spoke in or produced the item's clip (its provenance's `speakers`, "
        "`producer`), so cannot sign it off or spot-check it (TRIAD B.4).",
        "exposed:author": "the person authored an item of the group, so has seen the label; no blind check.",
        "exposed:group_review": "the person reviewed the group's integration (saw the labels); no blind check.",
        "exposed:shown": "the label was shown to the person (a page, an export, `curate history --by`).",
        "no_longer_needed:<stage>": "a person's submission from a page arrived after the stage had its quorum of "
        "records from others (judged in the transaction that would store it); nothing was recorded.",
    },
    "Queues (what a person is not offered, `curate review queue --why`)": {
        "language_not_read:<language>": "the item is in a language the person does not read (`curate people edit "
        "--languages`).",
        "qualification:<stage>": "someone is qualified for the stage (`curate people edit --can`) and this person "
        "is not.",
        "staffing:<stage>": "if this person took the stage, nobody left could staff a later stage of the item "
        "under the separation rule; it is kept for someone else.",
    },
}
"""Family → code → meaning."""


def code_pattern(code: str) -> re.Pattern[str]:
    """What a listed code matches: ``<text>`` any text (a licence as written), another ``<...>`` one word."""
    filled = re.sub(r"<([a-z]+)>", lambda m: ".+" if m.group(1) == "text" else "[^ ]+", re.escape(code))
    return re.compile(f"^{filled}$", re.DOTALL)


_PATTERNS: Final = {family: [code_pattern(code) for code in codes] for family, codes in REASONS.items()}


def is_known_reason(code: str) -> bool:
    """Whether a reason a status carries is one of the codes above."""
    return bool(reason_families(code))


def reason_families(code: str) -> list[str]:
    """The families listing ``code`` (one code may read alike in two: ``duplicate:query``, a query's and an
    item's cluster)."""
    return [family for family, patterns in _PATTERNS.items() if any(p.match(code) for p in patterns)]
