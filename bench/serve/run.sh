#!/usr/bin/env bash
# Warm whole-process `arbor query` through `arbor serve` against the same
# command without a server (ARBOR_NO_SERVE=1), with farm-bench, on
# examples/notes and on a generated tree of about N files (examples/notes
# repeated as bench/index does: copy K of each domain in cK_domain/, each
# entry marked with its copy so that none is a duplicate).
#   bench/serve/run.sh [N]    (from the repository root, after ./build.sh)
set -euo pipefail
n=${1:-10000}
bin=$(pwd)/bin/arbor
work=$(mktemp -d)
trap 'for r in "$work"/*/; do "$bin" --root "$r" serve --stop >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT

cp -r examples/notes "$work/notes"
mkdir "$work/gen"
count=0
for ((k = 0; count < n; k++)); do
  for d in examples/notes/*/; do
    dom=$(basename "$d")
    dest=$(printf '%s/gen/c%03d_%s' "$work" "$k" "$dom")
    cp -r "$d" "$dest"
    while IFS= read -r f; do
      if [[ $(basename "$f") != context.md ]]; then printf '\nCopy %d of %s; marker m%dx%d.\n' "$k" "${f#"$dest"/}" "$k" "$count" >>"$f"; fi
      count=$((count + 1))
    done < <(find "$dest" -name '*.md' | sort)
  done
done
echo "generated tree: $count markdown files" >&2

for root in "$work/notes" "$work/gen"; do
  "$bin" --root "$root" init >/dev/null
  "$bin" --root "$root" query "invoice retry policy" >/dev/null # builds and persists the index
  "$bin" --root "$root" serve 2>>"$work/serve.log" &
  until [[ -S "$root/.arbor/serve.sock" ]]; do sleep 0.2; done
  echo "== $(basename "$root"): served (A) vs direct (B)" >&2
  farm-bench -n 10 --warmup 2 --timeout 300 --vs "env ARBOR_NO_SERVE=1 $bin --root $root query 'invoice retry policy'" \
    -- "$bin" --root "$root" query "invoice retry policy"
  "$bin" --root "$root" serve --stop >/dev/null
done
