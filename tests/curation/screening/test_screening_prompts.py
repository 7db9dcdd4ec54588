"""The screening prompts: App. D's own text in package files, every placeholder filled, and a workspace's
replacements (``[screen] prompts``) used by name or refused with every problem named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from curation.errors import ValidationFailed
from curation.screening.model import (
    TASK_MODELS,
    book_meta_request,
    conditions_request,
    score_request,
    speech_request,
    task_schema,
)
from curation.screening.prompt_templates import PACKAGED, PLACEHOLDERS, REQUIRED, load_prompts

ROOT = Path(__file__).resolve().parents[3]

APPENDIX_D = {
    # sentences of Omni-StoryBench App. D, as printed (typographic apostrophes written as ASCII)
    "book_meta.system.txt": [
        "You are an expert metadata curator for children's and general storybooks.",
        "- Keep character list ordered: main characters first, then supporting/minor in order of "
        "prominence/first appearance.",
        '- sex: "male" | "female" | "non-binary" | "" (only if explicit/near-explicit; otherwise "").',
        "Be conservative: do not fabricate details. Use blanks for unknowns.",
    ],
    "book_meta.user.txt": [
        "Generate metadata for the following single book.\nBOOK_NAME: {book_name}\n"
        "BOOK_TEXT (concatenated pages, separated by blank lines):\n<<<BOOK_START\n{book_text}\nBOOK_END>>>",
        '"personality": [],',
    ],
    "conditions.system.txt": [
        "You are a storyboard + illustration planner. Given (Metadata, Previous Page, Gold Next Page), infer and "
        "WRITE ONLY the JSON 'Next Page Conditions' that would produce the Gold Next Page.",
    ],
    "conditions.user.txt": ["# Write ONLY the JSON object. No backticks, no commentary."],
    "speech.system.txt": ["You must ALWAYS respond with valid JSON only, without any extra explanations or comments."],
    "speech.user.txt": [
        "After reading the story and the lines, output the metadata for each speaker in JSON format.\n"
        "# Story -\n{story_text}\n# Lines -\n{lines_text}\n# Metadata -",
        "- emotion: one of ['angry', 'happy', 'neutral', 'sad']",
    ],
    "speech_no_lines.user.txt": [
        "Inside the given story, you must generate one line of dialogue that a character from that story might "
        "say, and also create the metadata needed to synthesize the voice for that line.",
        "Story -\n{story_text}\nMetadata -",
    ],
}


def test_the_packaged_prompts_are_the_appendixs_text_and_ship_as_package_data() -> None:
    for name, sentences in APPENDIX_D.items():
        for sentence in sentences:
            assert sentence in PACKAGED.texts[name], (name, sentence)
    assert set(PACKAGED.texts) == set(PLACEHOLDERS)
    assert all("’" not in text and not text.endswith("\n") for text in PACKAGED.texts.values())
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "screening/prompts/*.txt" in package_data["package-data"]["curation"], "installed without its prompts"


def test_every_request_fills_each_placeholder_and_keeps_the_jsons_braces() -> None:
    requests = [
        book_meta_request("bk1", "Kito", ["Kito ran.", "The zebra waited."]),
        conditions_request(
            "c1", {"genre": "Fable"}, ("a.png", "Kito ran."), ("b.png", "The zebra."), PACKAGED, ['"Hi!"']
        ),
        speech_request("c1", "Kito ran.\n\nThe zebra.", ['"Hi!" said Kito.']),
        speech_request("c2", "Kito ran.", []),
        score_request("c1", ("a.png", "Kito ran."), ("b.png", "The zebra.")),
    ]
    for request in requests:
        assert not re.search(r"\{[a-z][a-z_]*\}", request.user), (request.task, request.user)
    book, conditions, with_lines, without_lines, score = requests
    assert "BOOK_NAME: Kito\n" in book.user and "Kito ran.\n\nThe zebra waited.\nBOOK_END>>>" in book.user
    assert '"metadata": {' in book.user, "the appendix's JSON form is text, not a placeholder"
    assert '{"genre": "Fable"}' in conditions.user and 'Speech:\n["\\"Hi!\\""]' in conditions.user
    assert conditions.user.count("(image)") == 2 and conditions.images == ("a.png", "b.png")
    assert '"CharacterCondition"' in conditions.user, "the output format is the task's schema"
    assert '# Lines -\n"Hi!" said Kito.\n# Metadata -' in with_lines.user
    assert without_lines.user.startswith("I will provide you a story.\n") and "# Lines" not in without_lines.user
    assert score.user.startswith("Current page:\n(image)\nKito ran.") and score.images == ("a.png", "b.png")
    assert len({r.prompt_hash for r in requests}) == len(requests)


def test_a_book_meta_answer_in_the_appendixs_envelope_is_accepted() -> None:
    meta = {"genre": "Fable", "characters": [{"name": "Kito", "species": "human"}]}
    model = TASK_MODELS["book_meta"]
    assert model.model_validate({"metadata": meta}).model_dump() == model.model_validate(meta).model_dump()
    assert "metadata" not in task_schema("book_meta")["properties"], "constrained decoding keeps the flat schema"
    with pytest.raises(ValueError, match="metadata"):
        model.model_validate({"metadata": meta, "extra": 1})


def test_a_workspace_replaces_a_prompt_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "score.user.txt").write_text("Page A: {current_text}\nPage B: {next_text}\n", encoding="utf-8")
    prompts = load_prompts(tmp_path, "prompts")
    assert prompts.replaced == ("score.user.txt",)
    assert prompts.texts["book_meta.system.txt"] == PACKAGED.texts["book_meta.system.txt"]
    mine = score_request("c1", ("a.png", "one"), ("b.png", "two"), prompts)
    packaged = score_request("c1", ("a.png", "one"), ("b.png", "two"))
    assert mine.user == "Page A: one\nPage B: two" and mine.system == packaged.system
    assert mine.prompt_hash != packaged.prompt_hash, "the provenance names the prompt used"
    assert prompts.digest("score") != PACKAGED.digest("score")
    assert prompts.digest("book_meta", "conditions", "speech") == PACKAGED.digest("book_meta", "conditions", "speech")
    assert load_prompts(tmp_path, "") is PACKAGED


def test_a_bad_prompt_folder_is_refused_with_every_problem_named(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "score.user.txt").write_text("Rate {current_txt}.", encoding="utf-8")
    (folder / "speech.txt").write_text("?", encoding="utf-8")
    (folder / "book_meta.user.txt").write_bytes(b"\xff{book_text}")
    with pytest.raises(ValidationFailed) as refused:
        load_prompts(tmp_path, "prompts")
    found = [str(p) for p in refused.value.problems]
    assert any(f"{folder / 'score.user.txt'}" in p and "unknown placeholder {current_txt}" in p for p in found)
    assert any("score.user.txt" in p and "{current_text} is missing" in p for p in found)
    assert any("score.user.txt" in p and "{next_text} is missing" in p for p in found)
    assert any("speech.txt" in p and "not a screening prompt; the prompts are book_meta.system.txt" in p for p in found)
    assert any("book_meta.user.txt" in p for p in found), "not UTF-8"
    assert "nothing was screened" in refused.value.summary
    with pytest.raises(ValidationFailed, match="curate.toml: screen.prompts: elsewhere: does not exist"):
        load_prompts(tmp_path, "elsewhere")


def test_every_required_placeholder_is_one_the_prompt_may_use() -> None:
    for name, required in REQUIRED.items():
        assert set(required) <= set(PLACEHOLDERS[name])
        for placeholder in PLACEHOLDERS[name]:
            assert f"{{{placeholder}}}" in PACKAGED.texts[name], (name, placeholder)
