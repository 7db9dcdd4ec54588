"""The six principle rubrics and the overall criterion of Judge Anything (App. C, Fig. 12–13).

Scores are integers 1–5 (1 worst); pair choices are ``first``, ``second`` or ``tie``.
"""

from __future__ import annotations

OVERALL = "overall"
RUBRICS: tuple[str, ...] = ("relevance", "trustworthiness", "creativity", "clarity", "coherence", "completeness")
CRITERIA: tuple[str, ...] = (OVERALL, *RUBRICS)
"""What a score or a choice is given for: the overall quality, then each rubric."""

SCORE_MIN, SCORE_MAX = 1, 5
CHOICES: tuple[str, ...] = ("first", "second", "tie")

DEFINITIONS: dict[str, str] = {
    OVERALL: "A holistic assessment of the output's general effectiveness, excellence and suitability for the "
    "intended purpose, without delving into specific aspects.",
    "relevance": "How closely and directly the output addresses the given prompt or input: it responds to the "
    "instructions, stays on topic and provides content pertinent to the requested task.",
    "trustworthiness": "The output's reliability, accuracy and safety: factually correct, well sourced, compliant "
    "with guidelines, free from harmful or misleading information.",
    "creativity": "The originality or freshness of the content and the imagination behind it, blending "
    "originality with purpose, style, insight or aesthetic appeal.",
    "clarity": "How easily the content can be understood: clear expression, well-organized ideas, no ambiguity "
    "or confusion.",
    "coherence": "The logical flow and consistency of the content: ideas connect logically and progress "
    "smoothly, without abrupt jumps or disjointed sections.",
    "completeness": "Whether the output fully addresses every aspect of the prompt or task, with all necessary "
    "components, details and depth.",
}

SCALE: dict[str, dict[int, str]] = {
    OVERALL: {
        1: "Fails to meet basic expectations; largely ineffective and significantly flawed.",
        2: "Meets minimal standards but has considerable deficiencies.",
        3: "Adequately meets the basic requirements; lacks distinction.",
        4: "Effectively meets the expectations with minor areas for improvement.",
        5: "Surpasses expectations; exemplary in fulfilling its purpose.",
    },
    "relevance": {
        1: "Largely off-topic or irrelevant.",
        2: "Minimally relevant; superficial, with significant deviations.",
        3: "Moderately relevant; some unrelated content.",
        4: "Highly relevant; minor deviations.",
        5: "Perfectly relevant; no deviations.",
    },
    "trustworthiness": {
        1: "Highly unreliable; numerous factual errors or harmful content.",
        2: "Minimally trustworthy; several inaccuracies or potential issues.",
        3: "Moderately trustworthy; generally accurate with some minor errors.",
        4: "Highly trustworthy; negligible errors.",
        5: "Completely trustworthy; flawless, compliant, nothing misleading or harmful.",
    },
    "creativity": {
        1: "Minimal creativity; generic or repetitive.",
        2: "Slightly creative; largely conventional.",
        3: "Moderately creative; original and standard elements balanced.",
        4: "Highly creative; original ideas and inventive approaches.",
        5: "Exceptionally creative; highly original and imaginative.",
    },
    "clarity": {
        1: "Incomprehensible.",
        2: "Poor clarity; frequent ambiguities.",
        3: "Adequate clarity; some minor ambiguities.",
        4: "Clear; minor issues do not impede comprehension.",
        5: "Crystal-clear; no ambiguities.",
    },
    "coherence": {
        1: "Disjointed; lacks logical flow.",
        2: "Poor coherence; frequent logical gaps.",
        3: "Moderate coherence; occasional inconsistencies.",
        4: "Highly coherent; minor inconsistencies.",
        5: "Perfectly cohesive; ideas flow seamlessly.",
    },
    "completeness": {
        1: "Severely incomplete; key components missing.",
        2: "Minimally complete; several important elements missing.",
        3: "Moderately complete; some omissions.",
        4: "Highly complete; minor omissions.",
        5: "Completely complete; every aspect addressed in detail.",
    },
}
