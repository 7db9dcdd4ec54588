"""Label Studio controls shared by the ``mcq`` stages (declarations only; the bridge renders them)."""

from __future__ import annotations

from .._parts import Control

NOTE = Control("textarea")
VERDICT = Control("choices", required=True, choices=("pass", "fail"))
NOTE_TAG = '<TextArea name="note" toName="{to}" placeholder="Note (optional)" maxSubmissions="1" editable="true"/>'
VERDICT_TAG = (
    '<Choices name="verdict" toName="{to}" choice="single-radio" required="true" showInline="true">'
    '<Choice value="pass"/><Choice value="fail"/></Choices>'
)
