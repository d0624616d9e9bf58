#!/usr/bin/env bash
# Warm whole-process `arbor query` through `arbor serve` against the same
# command without a server (ARBOR_NO_SERVE=1), in alternating pairs, on
# examples/notes and on a generated tree of about N files (examples/notes
# repeated as bench/index does: copy K of each domain in cK_domain/, each
# entry marked with its copy so that none is a duplicate).
#   bench/serve/run.sh [N]    (from the repository root, after ./build.sh)
set -euo pipefail
n=${1:-10000}
bin=$(pwd)/bin/arbor
work=$(mktemp -d)
trap 'for r in "$work"/*/; do "$bin" --root "$r" serve --stop >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT

# pairs times the query served (A) and direct (B), alternately, 10 times
# each after 2 warm-up runs of each, with bash's time (wall, user + system
# CPU), and prints the medians and the median of the pairs' CPU ratios.
pairs() {
  local root=$1 i a b
  TIMEFORMAT='%R %U %S'
  for ((i = -2; i < 10; i++)); do
    a=$({ time "$bin" --root "$root" query "invoice retry policy" >/dev/null 2>&1; } 2>&1)
    b=$({ time env ARBOR_NO_SERVE=1 "$bin" --root "$root" query "invoice retry policy" >/dev/null 2>&1; } 2>&1)
    if ((i >= 0)); then echo "$a $b"; fi
  done | awk '
    function median(v, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { n++; aw[n] = $1; ac[n] = $2 + $3; bw[n] = $4; bc[n] = $5 + $6; r[n] = ($5 + $6 > 0) ? ($2 + $3) / ($5 + $6) : 0 }
    END {
      printf "served: wall %.0f ms, CPU %.0f ms; direct: wall %.0f ms, CPU %.0f ms; served / direct CPU (median of %d pairs) %.3f\n",
        1000 * median(aw, n), 1000 * median(ac, n), 1000 * median(bw, n), 1000 * median(bc, n), n, median(r, n)
    }'
}

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
  pairs "$root"
  "$bin" --root "$root" serve --stop >/dev/null
done
