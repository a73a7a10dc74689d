"""One answer's live reply: edited in place or natively streamed, the throttled editor, streaming support."""
