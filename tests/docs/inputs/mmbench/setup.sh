# judge-queries.md's ./mmbench: a folder with one Parquet file whose columns are named otherwise (qid, question,
# img), images beside it (two of the mcq demo's drawings).
mkdir -p mmbench/images
cp "$REPO/omnicurate/demo/data/media/door_closing.jpg" "$REPO/omnicurate/demo/data/media/traffic_red.jpg" mmbench/images/
python - <<'PY'
import pyarrow as pa
import pyarrow.parquet as pq

table = pa.table({
    "qid": ["mm-1", "mm-2"],
    "question": ["Describe what the door is doing.", "What should a walker do at this light?"],
    "img": ["images/door_closing.jpg", "images/traffic_red.jpg"],
})
pq.write_table(table, "mmbench/test-00000.parquet")
PY
