# items.jsonl for getting-started.md's first workspace: the demo's first two items (by ann1) and their media.
mkdir -p media
head -n 2 "$REPO/omnicurate/demo/data/items.jsonl" > items.jsonl
cp "$REPO/omnicurate/demo/data/media/kitchen_neutral.jpg" "$REPO/omnicurate/demo/data/media/kitchen_sincere.wav" \
  "$REPO/omnicurate/demo/data/media/kitchen_sarcastic.wav" media/
