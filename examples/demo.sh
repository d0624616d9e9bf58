#!/usr/bin/env bash
# The demo ./build.sh runs: a few curate operations on a copy of
# examples/notes, then a handful of queries, each answered with its tier
# and latency. Usage: examples/demo.sh ROOT (a throwaway copy).
set -euo pipefail
root=${1:?usage: examples/demo.sh ROOT}
arbor() { "$(dirname "$0")/../bin/arbor" --root "$root" "$@"; }
say() { printf '\n\033[1m$ arbor %s\033[0m\n' "$*"; }

say stats
arbor stats

say 'curate (3 operations from stdin)'
arbor curate - <<'JSON' || true
[
 {"type":"ADD","path":"engineering/billing","title":"Refund approval limits",
  "summary":"Support may refund up to 200 EUR without approval; above that a billing lead signs off.",
  "content":{"narrative":{"rules":"Refunds up to 200 EUR are approved by support directly. Larger refunds need a billing lead's approval in the #billing channel within one business day."},
             "tags":["billing","refunds"],"keywords":["refund","approval","limit"],
             "relations":["engineering/billing/invoice_retry_policy.md"]},
  "reason":"record the refund policy agreed in the support sync"},
 {"type":"UPSERT","path":"personal/preferences","title":"Standing desk routine",
  "content":{"narrative":"Stand for the first two hours of the day, sit after lunch; the desk presets are 74 cm and 112 cm.",
             "tags":["health","desk"]},
  "reason":"remember the desk presets"},
 {"type":"ADD","path":"engineering/billing","title":"Refund approval limits",
  "content":{"narrative":"duplicate"},"reason":"shows that ADD refuses an existing entry"}
]
JSON

say 'query - (five questions in one session; the last repeats the first)'
arbor query - <<'QUESTIONS'
how many times are failed invoices retried
refund approval limit
which tokenizer did we pick for Korean
what is the capital of Peru
How many times are failed invoices retried?
QUESTIONS
