"""The human study of a story release (Omni-StoryBench App. F.5).

A fixed window of transitions is drawn from a release (seeded, or named); every system's generated next page
for those transitions is rated by people on the judges' four rubric categories (1–10), per track (text,
image, speech, integrated); the report correlates per-system human means with judge means across systems,
with leave-one-transition-out ranges. Serving the ratings (Label Studio) is the shell's business.
"""
