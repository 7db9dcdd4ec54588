"""Text audits on Chinese items: the item's language decides tokens, the acceptance rules stay the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.audit import AuditSubject, run_audit
from curation.audit.leaks import modality_hits
from curation.audit.text import jaccard, shingles, words
from curation.audit.tokens import join_tokens, token_unit, tokens
from curation.audit.workspace import audit_workspace
from curation.items import import_items
from curation.screening.audits import AuditedTransition, foreign_span_leaks
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

OPTIONS = {"A": "感激", "B": "恼火", "C": "矛盾", "D": "惊讶"}
KETTLE = "老人说水壶今天早上又开始漏水了，我们得赶紧换一个新的。"
KETTLE_EDITED = "老人说水壶今天早上又开始滴水了！我们得赶紧换一个新的"
UNRELATED = [
    "会议推迟到预算数字最终确定之后再投票。",
    "我的奶奶每个星期天早上都会在去教堂之前烤面包。",
    "没有人注意到投影仪在讲座期间被拔掉了电源。",
    "我们错过了回家的末班车，只好冒雨走回去。",
]


def subject(item: str, group: str, context: str, language: str | None = "zh", **kw: object) -> AuditSubject:
    options = kw.pop("options", OPTIONS)
    return AuditSubject(item, group, context, options, "A", None, None, language)  # type: ignore[arg-type]


def audit(subjects: list[AuditSubject]) -> dict:
    return run_audit(subjects, {}, {}).to_dict()


@pytest.mark.parametrize(
    ("tag", "text", "unit"),
    [
        ("zh", "", "characters"),
        ("zh-Hant-TW", "", "characters"),
        ("ja", "", "characters"),
        ("th", "", "characters"),
        ("en-US", "", "words"),
        ("ko", "", "words"),
        ("zh-Latn", "lao ren shuo", "words"),  # pinyin: the script subtag decides
        ("und-Hans", "", "characters"),
        ("und", KETTLE, "characters"),
        (None, KETTLE, "characters"),
        (None, "The old man said", "words"),
        ("und", "我用 iPhone 拍了很多照片", "characters"),
    ],
)
def test_the_language_tag_decides_the_unit_and_the_script_decides_without_one(
    tag: str | None, text: str, unit: str
) -> None:
    assert token_unit(tag, text) == unit


def test_chinese_text_is_cut_into_characters_with_latin_words_kept_whole() -> None:
    assert tokens("我用iPhone 15拍照。", "zh") == ["我", "用", "iphone", "15", "拍", "照"]
    assert tokens("東京タワーは赤い", "ja") == ["東", "京", "タ", "ワ", "ー", "は", "赤", "い"]
    assert tokens("The old man, said!", "en") == ["the", "old", "man", "said"]
    assert join_tokens(tokens("我用iPhone 15拍照", "zh")) == "我用iphone 15拍照"
    # the same Chinese text tagged as a spaced language is one word: the tag is what decides
    assert words("老人说水壶", "en") == ["老人说水壶"]


def test_one_character_and_punctuation_apart_are_clustered_across_groups() -> None:
    a, b = shingles(words(KETTLE, "zh")), shingles(words(KETTLE_EDITED, "zh"))
    assert 0.5 <= jaccard(a, b) < 1.0
    report = audit([subject("zh-1", "g1", KETTLE), subject("zh-2", "g2", KETTLE_EDITED)])
    assert [c["items"] for c in report["clusters"]] == [["zh-1", "zh-2"]]
    assert report["clusters"][0]["edges"][0]["method"] == "minhash_jaccard"
    # without a tag the script decides, with the same result
    report = audit([subject("zh-1", "g1", KETTLE, "und"), subject("zh-2", "g2", KETTLE_EDITED, None)])
    assert [c["items"] for c in report["clusters"]] == [["zh-1", "zh-2"]]


def test_sisters_of_one_group_are_not_clustered() -> None:
    report = audit([subject("zh-1", "g1", KETTLE), subject("zh-2", "g1", KETTLE_EDITED)])
    assert report["clusters"] == []


def test_unrelated_chinese_texts_are_neither_clustered_nor_share_spans() -> None:
    subjects = [subject(f"zh-{n}", f"g{n}", text) for n, text in enumerate([KETTLE, *UNRELATED])]
    report = audit(subjects)
    assert report["clusters"] == []
    assert [leak for leak in report["leaks"] if leak["kind"] == "shared_span"] == []


def test_an_eight_character_span_is_found_across_groups() -> None:
    first = "昨天下午我在图书馆门口遇见了一位老朋友。"
    second = "他说昨天下午我在图书馆门口看到的那个人是他哥哥。"
    report = audit([subject("zh-a", "g1", first), subject("zh-b", "g2", second)])
    assert report["clusters"] == []
    spans = [leak for leak in report["leaks"] if leak["kind"] == "shared_span"]
    assert len(spans) == 1
    assert spans[0]["items"] == ["zh-a", "zh-b"]
    assert spans[0]["evidence"]["span"] == "昨天下午我在图书"
    assert spans[0]["evidence"]["tokens"] == "characters"
    # seven shared characters are not a span
    report = audit([subject("zh-a", "g1", "昨天下午我在图书馆"), subject("zh-b", "g2", "他昨天下午我在图看书")])
    assert [leak for leak in report["leaks"] if leak["kind"] == "shared_span"] == []


def test_option_leaks_are_found_in_chinese() -> None:
    options = {"A": "一位老朋友", "B": "站在左边的男人", "C": "她小声地说话", "D": "一把红色的伞"}
    report = audit([subject("zh-a", "g1", "昨天下午我在图书馆门口遇见了一位老朋友。", options=options)])
    in_context = [leak for leak in report["leaks"] if leak["kind"] == "option_in_context"]
    assert [(leak["evidence"]["option"], leak["evidence"]["is_answer"]) for leak in in_context] == [("A", True)]
    modality = {
        (leak["evidence"]["option"], leak["evidence"]["modality"]): leak["evidence"]["words"]
        for leak in report["leaks"]
        if leak["kind"] == "option_modality"
    }
    assert modality == {("B", "image"): ["左边"], ("C", "audio"): ["小声"], ("D", "image"): ["红色"]}


def test_modality_lists_are_chosen_by_language() -> None:
    assert modality_hits("the man on the left", "en") == {"image": ["left"]}
    assert modality_hits("左边的男人", "zh-Hans") == {"image": ["左边"]}
    assert modality_hits("左边的男人", None) == {"image": ["左边"]}
    assert modality_hits("穿red外套的人", "zh") == {"image": ["red"]}
    # a common character in another sense is no leak: 左右 means "about", 上 is not "above"
    assert modality_hits("大约十点左右上班", "zh") == {}
    assert modality_hits("一位老朋友", "zh") == {}


@pytest.mark.parametrize(
    ("first", "second"),
    [("", ""), ("……", "。。。"), ("!!!", "……"), ("...", "..."), ("", "。")],
)
def test_texts_without_tokens_are_never_paired(first: str, second: str) -> None:
    report = audit([subject("x-1", "g1", first, "en"), subject("x-2", "g2", second, "zh")])
    assert report["clusters"] == []
    report = audit([subject("x-1", "g1", first, "zh"), subject("x-2", "g2", second, "zh")])
    assert report["clusters"] == []


def test_a_chinese_and_an_english_item_are_not_paired_through_empty_tokens() -> None:
    report = audit(
        [subject("zh-1", "g1", KETTLE, "zh"), subject("en-1", "g2", "The old man said the kettle leaks.", "en")]
    )
    assert report["clusters"] == []
    assert report["leaks"] == []


def test_the_workspace_audit_reads_each_items_language(workspace: Workspace, tmp_path: Path) -> None:
    """Imported Chinese items: the near duplicate is found, the unrelated text is not (flat test images aside)."""
    workspace.add_person("ann1", ["author"])
    rows = [
        item_row("zh-1", "g1", language="zh-Hans", context=KETTLE, image="media/a.jpg"),
        item_row("zh-2", "g2", language="zh-Hans", context=KETTLE_EDITED, image="media/b.jpg"),
        item_row("zh-3", "g3", language="zh-Hans", context=UNRELATED[0], image="media/c.jpg"),
    ]
    import_items(workspace, write_items(tmp_path / "in", rows))
    report = audit_workspace(workspace)
    text_edges = {(e.a, e.b) for c in report.clusters for e in c.edges if e.modality == "text"}
    assert text_edges == {("zh-1", "zh-2")}


def test_the_story_span_audit_cuts_chinese_pages_into_characters() -> None:
    """Omni-StoryBench's foreign-span audit uses the same tokenizer: a scene copied from another book's page."""
    page = "小兔子在森林里迷了路，它害怕地躲在一棵大树后面。"
    leaked = AuditedTransition(
        "t1", "b1", 1, "天亮了，小熊醒来。", "小熊去河边喝水。", conditions={"scene": "小兔子在森林里迷了路"}
    )
    other = AuditedTransition("t2", "b2", 1, page, "妈妈找到了小兔子。")
    clean = AuditedTransition("t3", "b3", 1, "夜里下起了大雨。", "早上雨停了。", conditions={"scene": "雨后的清晨"})
    leaks = foreign_span_leaks([leaked, other, clean])
    assert [(leak.item, leak.field, leak.span, leak.page) for leak in leaks] == [
        ("t1", "scene", "小兔子在森林里迷", ("b2", 1))
    ]


def test_curate_audit_reports_chinese_findings(workspace: Workspace, tmp_path: Path) -> None:
    """The CLI's ``audit --json``: the near duplicate as a text edge, the 8-character span quoted as it stands."""
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    workspace.add_person("ann1", ["author"])
    span_a, span_b = "昨天下午我在图书馆门口遇见了一位老朋友。", "他说昨天下午我在图书馆门口看到的那个人是他哥哥。"
    rows = [
        item_row("zh-1", "g1", language="zh", context=KETTLE, image="media/a.jpg"),
        item_row("zh-2", "g2", language="zh", context=KETTLE_EDITED, image="media/b.jpg"),
        item_row("zh-3", "g3", language="zh", context=span_a, image="media/c.jpg"),
        item_row("zh-4", "g4", language="zh", context=span_b, image="media/d.jpg"),
    ]
    import_items(workspace, write_items(tmp_path / "in", rows))
    result = CliRunner().invoke(app, ["-w", str(workspace.root), "audit", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    text_edges = {(e["a"], e["b"]) for c in document["clusters"] for e in c["edges"] if e["modality"] == "text"}
    assert text_edges == {("zh-1", "zh-2")}
    spans = [leak for leak in document["leaks"] if leak["kind"] == "shared_span"]
    assert [(leak["items"], leak["evidence"]["span"]) for leak in spans] == [(["zh-3", "zh-4"], "昨天下午我在图书")]
