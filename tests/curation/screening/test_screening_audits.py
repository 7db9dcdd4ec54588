"""The App. C audits on planted cases, with figures computed by hand."""

from __future__ import annotations

import pytest

from curation.screening import audits
from curation.screening.audits import AuditedTransition as T

PAGE = {
    ("A", 0): "Amara and the fox walked to the river in the cool morning light.",
    ("A", 1): "The fox found a red basket of mangoes hidden under the old bridge.",
    ("B", 0): "Femi counted the stars above the quiet village until he fell asleep.",
    ("B", 1): "In the morning Femi painted a kite with his grandmother by the well.",
}


def item(id: str, book: str, page: int, **conditions: object) -> T:
    return T(id, book, page, PAGE[(book, page)], PAGE.get((book, page + 1), ""), "", conditions)


def test_duplicate_conditions_are_found_after_normalization() -> None:
    a = item("a", "A", 0, scene="By the River", text_goal="show the basket")
    b = item("b", "B", 0, scene="by the  river", text_goal="Show the BASKET")
    c = item("c", "B", 0, scene="by the river", text_goal="show the kite")
    assert audits.duplicate_conditions([a, b, c]) == [["a", "b"]]


def test_foreign_span_leak_per_field_excludes_the_items_own_pages() -> None:
    pages = dict(PAGE)
    own = item("own", "A", 0, scene="the fox found a red basket of mangoes hidden under")  # copies own next page
    foreign = item("foreign", "B", 0, text_goal="the fox found a red basket of mangoes hidden away")
    short = item("short", "B", 0, scene="the fox found a red basket")  # 6 words: no 8-word span
    split = T(
        "split",
        "B",
        0,
        PAGE[("B", 0)],
        PAGE[("B", 1)],
        "",
        {
            "characters": [
                {"name": "x", "action": "the fox found a red"},
                {"name": "y", "action": "basket of mangoes hidden under"},
            ]
        },
    )  # spans never cross two values
    leaks = audits.foreign_span_leaks([own, foreign, short, split], pages)
    assert [(leak.item, leak.field, leak.page) for leak in leaks] == [("foreign", "text_goal", ("A", 1))]
    assert leaks[0].span == "the fox found a red basket of mangoes"
    topic = T("t", "B", 0, PAGE[("B", 0)], PAGE[("B", 1)], "amara and the fox walked to the river in", {})
    assert [(x.field, x.page) for x in audits.foreign_span_leaks([topic], pages)] == [("topic", ("A", 0))]


def test_default_page_universe_is_the_audited_items_pages() -> None:
    a = item("a", "A", 0, scene="calm")
    b = item("b", "B", 0, scene="femi counted the stars above the quiet village until")
    assert audits.foreign_span_leaks([b]) == []  # its own page
    assert (
        audits.foreign_span_leaks([a, item("c", "B", 1, scene="amara and the fox walked to the river in")])[0].item
        == "c"
    )


def test_longest_shared_span_and_reference_overlap_median_and_flags() -> None:
    assert audits.longest_shared_span(["a", "b", "c", "d", "e"], ["x", "b", "c", "d", "y"]) == 3
    assert audits.longest_shared_span([], ["a"]) == 0
    quoting = item("q", "A", 0, text_goal="the fox found a red basket of mangoes hidden")
    two = item("two", "A", 0, scene="red basket")
    none = item("none", "A", 0, scene="dusk")
    found = audits.reference_overlap([quoting, two, none])
    assert found.longest == {"q": 9, "two": 2, "none": 0}
    assert found.flagged == ["q"] and found.median == 2.0


def test_absent_content_share_uses_the_fixed_stopwords_and_drops_numbers() -> None:
    t = T("x", "A", 0, "", "The fox found 3 red mangoes.", "", {"scene": "a fox with mangoes"})
    # content words of the reference: fox, found, red, mangoes ("the" a stopword, "3" numeric)
    assert audits.absent_content_share(t) == pytest.approx(2 / 4)
    assert audits.absent_content_share(T("y", "A", 0, "", "The 12.", "", {})) is None
    assert audits.mean_absent_content_share([t, T("z", "A", 0, "", "fox", "", {"scene": "fox"})]) == pytest.approx(0.25)


def test_annotation_word_share_per_instance_and_pooled() -> None:
    a = T(
        "a",
        "A",
        0,
        "one two three",
        "",
        "four five",
        {"scene": "six", "characters": [{"name": "n", "action": "seven"}]},
    )
    b = T("b", "B", 0, "one two three four five six", "", "", {"text_goal": "seven eight"})
    share = audits.annotation_word_share([a, b])
    assert share is not None
    # a: 4 annotation words of 7 (the character's name is not counted); b: 2 of 8
    assert share.mean == pytest.approx((4 / 7 + 2 / 8) / 2)
    assert share.pooled == pytest.approx(6 / 15)
    assert audits.annotation_word_share([]) is None


def test_duplicate_clusters_across_books_by_text_and_by_phash_never_within_a_book() -> None:
    base = dict(current_text=PAGE[("A", 0)], next_text=PAGE[("A", 1)])
    same_book = [T("a0", "A", 0, **base), T("a1", "A", 1, **base)]
    assert audits.duplicate_clusters(same_book) == []
    republished = T("r0", "R", 0, **base)
    picture = T(
        "p0", "P", 0, "completely different words here", "and more of them", image_hashes=(0xFFFF0000FFFF0000, None)
    )
    twin = T("p1", "Q", 3, "nothing alike at all in text", "truly unrelated", image_hashes=(None, 0xFFFF0000FFFF0003))
    far = T("p2", "S", 0, "still other words", "yet other words", image_hashes=(0x0000FFFF0000FFFF, None))
    clusters = audits.duplicate_clusters([*same_book, republished, picture, twin, far])
    assert [c.items for c in clusters] == [["a0", "a1", "r0"], ["p0", "p1"]]
    assert {e.method for e in clusters[0].edges} == {"word3_minhash"}
    assert [(e.method, e.distance) for e in clusters[1].edges] == [("phash", 2.0)]


def test_story_audit_gathers_reasons_and_warnings() -> None:
    a = item("a", "A", 0, scene="calm", text_goal="the fox found a red basket of mangoes hidden")
    b = item("b", "B", 0, scene="calm", text_goal="the fox found a red basket of mangoes hidden")
    report = audits.audit_transitions([a, b])
    assert report.item_reasons() == {
        "a": ["leak:duplicate_condition"],
        "b": ["leak:duplicate_condition", "leak:shared_span:text_goal"],
    }
    assert report.item_warnings() == {"a": ["leak:reference_span"]}
    document = report.to_json()
    assert document["reference_span"]["flagged"] == ["a"] and document["items"] == 2
