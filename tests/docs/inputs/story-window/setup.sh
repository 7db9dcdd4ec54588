# story_transition.md's study: outputs.jsonl and judges.jsonl (those of inputs/story-study) over ws/releases/0.1.0.
RELEASE=ws/releases/0.1.0 bash "$REPO/tests/docs/inputs/story-study/setup.sh"
