#!/usr/bin/env bash
# The one entry point (README.md):
#   ./build.sh         build dist/arbor.wasm and bin/arbor, then run the demo
#   ./build.sh test    build, then run every check and test (vet, gofmt, tsc,
#                      Go, Node, conformance, Chromium, the MCP conformance
#                      suite against arbor mcp --http)
#   ./build.sh wasm    build dist/arbor.wasm only
#   ./build.sh bench   build the wasm, then run bench/retrieval on the data sets in
#                      bench/data (or $ARBOR_BENCH_DATA; bench/data/fetch.sh downloads
#                      them) and rewrite bench/retrieval/REPORT.md; extra arguments go
#                      to the harness (never run in CI; see bench/README.md)
#   ./build.sh bench-scale  build the wasm and the CLI, then run bench/scale on
#                      trees of 1k and 10k entries made from the same data sets
#                      and merge the figures into bench/scale/results.json and
#                      REPORT.md; extra arguments go to the harness (-sizes
#                      1000,10000,100000,1000000 for more; never run in CI)
#   ./build.sh demo-web  build the wasm, then serve web-demo/ on http://127.0.0.1:8080
#                      (PORT overrides the port)
#   ./build.sh extension build the wasm, then assemble the example MV3 extension
#                      (examples/extension) in dist/extension, ready to load unpacked
#   ./build.sh release vX.Y.Z  build the wasm, then tag vX.Y.Z (annotated) on a new
#                      commit on top of HEAD that adds host/runtime/arbor.wasm, so
#                      that `go install …/host/cmd/arbor@latest` builds; the branch
#                      does not move and nothing is pushed (docs/release.md)
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)
export GOFLAGS=${GOFLAGS:--mod=mod}

# log prints a step with the seconds since the script started: a run's log
# then says where its time went.
log() { printf '\033[1m==> %s\033[0m (%ss)\n' "$*" "$SECONDS" >&2; }

# build_wasm compiles the engine once for wasip1. bluge lacks two platform
# files for wasip1 (file locking, segment removal), so the modules are
# vendored into an ignored copy of the module and the project's shims from
# wasm/_shim are added there; the working tree itself is never vendored.
# The patches in wasm/_patch (each says why in its header) then cut what the
# module would link or run at start and never use; one that no longer
# applies to the vendored version stops the build. internal/ holds what
# core shares with the benchmarks only (the ablation switches). Last,
# internal/wasmpack rewrites the module's data as a few segments instead of
# the linker's 100,000, which every runtime decodes and copies at each start.
build_wasm() {
  log "wasm: dist/arbor.wasm"
  local src=.build/wasm p
  rm -rf "$src"
  mkdir -p "$src" dist
  cp go.mod go.sum "$src/"
  cp -r core wasm internal "$src/"
  (cd "$src" && go mod vendor)
  cp -r wasm/_shim/bluge/. "$src/vendor/github.com/blugelabs/bluge/"
  for p in wasm/_patch/*.patch; do
    (cd "$src/vendor" && git apply "$root/$p") || { echo "wasm: $p does not apply to the vendored modules" >&2; exit 1; }
  done
  goroot_overlay
  (cd "$src" && GOOS=wasip1 GOARCH=wasm GOFLAGS=-mod=vendor \
    go build -overlay "$root/.build/goroot/overlay.json" -trimpath -buildmode=c-shared -ldflags='-s -w' -o "$root/dist/arbor.wasm" ./wasm)
  go run ./internal/wasmpack dist/arbor.wasm
  cp dist/arbor.wasm host/runtime/arbor.wasm
  log "wasm: $(du -h dist/arbor.wasm | cut -f1)"
}

# goroot_overlay writes .build/goroot/overlay.json, for go build -overlay:
# the files of Go's own source the module is built with patched, copied
# from the Go in use and patched by wasm/_goroot (each patch says why in its
# header); one that no longer applies stops the build.
goroot_overlay() {
  local dir=.build/goroot gsrc f p sep='' json=''
  gsrc=$(go env GOROOT)/src
  rm -rf "$dir"
  mkdir -p "$dir/internal/bytealg"
  for f in equal_wasm.s compare_wasm.s; do
    cp "$gsrc/internal/bytealg/$f" "$dir/internal/bytealg/$f"
    json="$json$sep\"$gsrc/internal/bytealg/$f\":\"$root/$dir/internal/bytealg/$f\""
    sep=,
  done
  chmod -R u+w "$dir"
  for p in wasm/_goroot/*.patch; do
    (cd "$dir" && git apply "$root/$p") || { echo "wasm: $p does not apply to $(go version)" >&2; exit 1; }
  done
  printf '{"Replace":{%s}}\n' "$json" >"$dir/overlay.json"
}

# build_cli builds bin/arbor from a vendored copy of the module, like
# build_wasm, with the patches in host/_patch applied (each says why in its
# header: wazero skipping the validation of a module its compilation cache
# holds, mapping its cached code, decoding without copying). `go install` and
# `go test` use the modules as published; one patch
# that no longer applies to the vendored version stops the build.
build_cli() {
  log "cli: bin/arbor"
  local src=.build/cli p
  rm -rf "$src"
  mkdir -p "$src"
  cp go.mod go.sum "$src/"
  cp -r core host internal "$src/"
  (cd "$src" && go mod vendor)
  for p in host/_patch/*.patch; do
    (cd "$src/vendor" && git apply "$root/$p") || { echo "cli: $p does not apply to the vendored modules" >&2; exit 1; }
  done
  # The embedded module's SHA-256 and size, which the patched wazero keys
  # its cache with instead of hashing the module at every start
  # (host/runtime/modulesum.go, built with the tag arborwazero).
  (cd "$src/host/runtime" && printf '%s %s\n' "$( (sha256sum arbor.wasm 2>/dev/null || shasum -a 256 arbor.wasm) | cut -d' ' -f1)" \
    "$(wc -c <arbor.wasm | tr -d ' ')" >arbor.wasm.sha256)
  (cd "$src" && GOFLAGS=-mod=vendor go build -trimpath -tags arborwazero -o "$root/bin/arbor" ./host/cmd/arbor)
}

demo() {
  log "demo on a temporary copy of examples/notes"
  local dir
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  cp -r examples/notes/. "$dir/"
  ./bin/arbor --root "$dir" init >/dev/null
  bash examples/demo.sh "$dir"
}

run_tests() {
  log "go vet"
  go vet ./...
  log "gofmt"
  local unformatted
  unformatted=$(gofmt -l core host wasm tests bench 2>/dev/null || true)
  if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
  log "tsc: bindings/js against its declarations"
  npm run --silent typecheck
  cross_builds
  log "go test"
  go test -count=1 ./...
  wasip1_tests
  wazero_tests
  ice_tests
  log "node tests"
  npm test --silent
  mcp_conformance
}

# cross_builds builds the Go host and core for other platforms than this
# machine's: code behind build tags (the walk, the linear memory's mapping,
# file times) broke FreeBSD's and 32-bit Linux's builds unseen.
cross_builds() {
  local t
  for t in darwin/arm64 windows/amd64 freebsd/amd64 linux/arm; do
    log "go build ./core/... ./host/... for $t"
    GOOS=${t%/*} GOARCH=${t#*/} go build ./core/... ./host/...
  done
}

# wasip1_tests runs, as WebAssembly modules under wazero, the tests of the
# packages that behave differently in one (the collector's pacing), and Go's
# own tests of what compares and orders memory, on Go patched as the module
# is (goroot_overlay; build_wasm wrote it). Go's examples and fuzz corpora
# need files, which the runner does not give: only its Test functions run.
wasip1_tests() {
  log "go test, as WebAssembly modules: core/internal/gcpause; Go's bytes, strings, sort, slices, maps"
  local dir
  dir=$(mktemp -d)
  go build -o "$dir/wasiexec" ./internal/wasiexec
  GOOS=wasip1 GOARCH=wasm go test -count=1 -overlay "$root/.build/goroot/overlay.json" -exec "$dir/wasiexec" ./core/internal/gcpause
  GOOS=wasip1 GOARCH=wasm go test -count=1 -overlay "$root/.build/goroot/overlay.json" -exec "$dir/wasiexec" -run '^Test' bytes strings sort slices maps
  rm -rf "$dir"
}

# module_copy copies the module named (as the module cache holds the
# version this module builds with) into a new temporary folder, at its
# path there, writable, for a patch and its tests; it prints the folder.
module_copy() {
  local src dir
  src=$(go list -m -f '{{.Dir}}' "$1")
  dir=$(mktemp -d)
  mkdir -p "$dir/$(dirname "$1")"
  cp -r "$src" "$dir/$1"
  chmod -R u+w "$dir"
  echo "$dir"
}

# wazero_tests runs wazero's own tests on a copy of the module patched as
# build_cli patches it (with the tests of host/_patch/test): the engine and
# its cache, the file cache across processes, the platform's mappings, the
# binary decoder, and the specification's suites, whose invalid modules must
# still be refused.
wazero_tests() {
  log "wazero's tests, patched as bin/arbor is"
  local dir p
  dir=$(module_copy github.com/tetratelabs/wazero)
  for p in host/_patch/*.patch host/_patch/test/*.patch; do
    (cd "$dir" && git apply "$root/$p") || { echo "wazero: $p does not apply" >&2; exit 1; }
  done
  (cd "$dir/github.com/tetratelabs/wazero" && go test -count=1 . ./internal/engine/wazevo/ ./internal/platform/ ./internal/wasm/ ./internal/wasm/binary/ \
    ./internal/integration_test/filecache/ ./internal/integration_test/spectest/...) >"$dir/test.log" 2>&1 ||
    { cat "$dir/test.log" >&2; echo "wazero: its tests fail on the patched copy" >&2; exit 1; }
  chmod -R u+w "$dir"
  rm -rf "$dir"
}

# ice_tests runs ice's own tests on a copy of ice patched as the wasm build
# patches it (wasm/_patch/ice.patch), with wasm/_patch/test's test of its
# own: the patched copy must write, byte for byte, the segment ice as
# published writes for the same documents. The copy is used through a
# workspace beside this module, so that ice's dependencies are the versions
# the module builds with, already downloaded (GOFLAGS cleared: a workspace
# takes no -mod=mod).
ice_tests() {
  log "ice's tests, patched as the wasm build is"
  local dir sum
  dir=$(module_copy github.com/blugelabs/ice)
  cp wasm/_patch/test/ice_segment_test.go "$dir/github.com/blugelabs/ice/"
  printf 'go %s\n\nuse (\n\t%s\n\t./github.com/blugelabs/ice\n)\n' "$(go list -m -f '{{.GoVersion}}')" "$root" >"$dir/go.work"
  (cd "$dir" && GOFLAGS= ICE_SEGMENT_SUM_OUT="$dir/sum" go test -count=1 -run TestPatchedSegmentBytes github.com/blugelabs/ice) >"$dir/test.log" 2>&1 ||
    { cat "$dir/test.log" >&2; echo "ice: the segment test fails on ice as published" >&2; exit 1; }
  sum=$(cat "$dir/sum")
  (cd "$dir" && git apply "$root/wasm/_patch/ice.patch") || { echo "ice: wasm/_patch/ice.patch does not apply" >&2; exit 1; }
  (cd "$dir" && GOFLAGS= ICE_SEGMENT_SUM="$sum" go test -count=1 github.com/blugelabs/ice) >"$dir/test.log" 2>&1 ||
    { cat "$dir/test.log" >&2; echo "ice: its tests fail on the patched copy" >&2; exit 1; }
  chmod -R u+w "$dir"
  rm -rf "$dir"
}

# mcp_scenarios are the scenarios of @modelcontextprotocol/conformance that
# apply to Arbor's server; docs/mcp.md says why each of the others cannot
# (most call the SDKs' own fixture tools, prompts and resources, such as
# test_simple_text or test://static-text).
mcp_scenarios=(
  server-initialize server-session-lifecycle ping logging-set-level
  completion-complete tools-list resources-list prompts-list
  server-sse-multiple-streams dns-rebinding-protection
)

# mcp_conformance runs the official MCP conformance suite against
# `arbor mcp --http` on a free loopback port, with the Node 22 the suite
# needs (the npm package node@22, a dev dependency) and no token (the
# suite sends none; --no-token is allowed on loopback only).
mcp_conformance() {
  log "mcp conformance: @modelcontextprotocol/conformance against arbor mcp --http"
  local node=node_modules/.bin/node suite=node_modules/@modelcontextprotocol/conformance/dist/index.js
  if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
    echo "mcp conformance: $node or $suite is missing: run npm ci" >&2
    exit 1
  fi
  local dir pid url="" s i
  dir=$(mktemp -d)
  mkdir -p "$dir/root"
  cp -r examples/notes/. "$dir/root/"
  ./bin/arbor --root "$dir/root" init >/dev/null
  ./bin/arbor --root "$dir/root" mcp --http 127.0.0.1:0 --no-token 2>"$dir/server.log" &
  pid=$!
  for i in $(seq 600); do
    url=$(grep -o 'http://[^ ]*' "$dir/server.log" || true)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "mcp conformance: the server did not start:" >&2
    cat "$dir/server.log" >&2
    kill "$pid" 2>/dev/null || true
    rm -rf "$dir"
    exit 1
  fi
  local failed=""
  for s in "${mcp_scenarios[@]}"; do
    if ! "$node" "$suite" server --url "$url" --scenario "$s" -o "$dir/results" >"$dir/$s.out" 2>&1; then
      cat "$dir/$s.out" >&2
      failed="$failed $s"
    fi
  done
  kill -TERM "$pid"
  wait "$pid" || failed="$failed (the server's exit: $?)"
  if [ -n "$failed" ]; then
    echo "mcp conformance: failed:$failed; the server said:" >&2
    cat "$dir/server.log" >&2
    rm -rf "$dir"
    exit 1
  fi
  rm -rf "$dir"
  log "mcp conformance: ${#mcp_scenarios[@]} scenarios passed"
}

# bench_data finds the data sets of run_bench in bench/data (or
# $ARBOR_BENCH_DATA), where bench/data/fetch.sh puts them, before anything is
# built. A longmemeval_s_dev.json.gz there (the project's development split,
# which is not published) is used in place of the public longmemeval_s.json.gz.
bench_data() {
  local data=${ARBOR_BENCH_DATA:-bench/data}
  bench_locomo=$data/locomo10.json.gz bench_lme=$data/longmemeval_s.json.gz
  [ -f "$data/longmemeval_s_dev.json.gz" ] && bench_lme=$data/longmemeval_s_dev.json.gz
  local f missing=
  for f in "$bench_locomo" "$bench_lme"; do
    [ -f "$f" ] || { echo "bench: $f not found" >&2; missing=1; }
  done
  if [ -n "$missing" ]; then
    echo "bench: download the data sets with bench/data/fetch.sh (it honours ARBOR_BENCH_DATA);" >&2
    echo "bench: bench/README.md says what they are and where they come from" >&2
    exit 1
  fi
}

# run_bench regenerates bench/retrieval/REPORT.md: Arbor native, plain BM25,
# MiniSearch (Node) and Arbor wasm-in-Node on LoCoMo and LongMemEval-S.
run_bench() {
  log "bench: data $bench_locomo, $bench_lme"
  if [ ! -d node_modules/minisearch ] && command -v npm >/dev/null; then
    log "npm ci (MiniSearch)"
    npm ci --no-audit --no-fund
  fi
  log "bench: bench/retrieval/REPORT.md"
  go run ./bench/retrieval -locomo "$bench_locomo" -longmemeval "$bench_lme" -out bench/retrieval/REPORT.md "$@"
}

# run_bench_scale measures build, open and query cost against tree size on
# every host (bench/scale) and rewrites bench/scale/REPORT.md and its plots.
run_bench_scale() {
  if { [ ! -d node_modules/minisearch ] || [ ! -d node_modules/playwright-core ]; } && command -v npm >/dev/null; then
    log "npm ci (MiniSearch, playwright-core)"
    npm ci --no-audit --no-fund
  fi
  log "bench-scale: data $bench_locomo, $bench_lme"
  go run ./bench/scale -locomo "$bench_locomo" -longmemeval "$bench_lme" "$@"
}

# release makes the commit and tag a Go module download builds from: a module
# holds only what git keeps, and the CLI embeds the engine module, which main
# does not keep (it changes with every core commit, megabytes each time). So
# the release commit is HEAD plus host/runtime/arbor.wasm and nothing else,
# written through a temporary index (plumbing ignores .gitignore, and the
# checkout's index and branch stay as they were) and tagged; the branch does
# not move, and the tag's commit sits beside it. The version must be
# package.json's (which core/api.Version follows), optionally as a
# pre-release of it: a release bumps both in an ordinary commit first.
release() {
  local tag=${1:-} id='(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)'
  if [ $# -ne 1 ] || [[ ! $tag =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-$id(\.$id)*)?$ ]]; then
    echo "release: give one version, vMAJOR.MINOR.PATCH with an optional pre-release (v0.2.0, v0.2.0-rc.1), not \"$*\"" >&2
    exit 2
  fi
  local major=${BASH_REMATCH[1]} base=${tag#v}
  base=${base%%-*}
  local module want
  module=$(go list -m)
  want=$(node -p 'require("./package.json").version')
  if [ "$major" -ge 2 ] && [ "${module##*/}" != "v$major" ]; then
    echo "release: $tag needs the module path $module/v$major in go.mod (Go's major version rule)" >&2
    exit 1
  fi
  if [ "$base" != "$want" ]; then
    echo "release: $tag is not version $want, which package.json and core/api.Version say: bump both in a commit first, or tag v$want (or a pre-release of it, v$want-rc.1)" >&2
    exit 1
  fi
  if [ -n "$(git status --porcelain)" ]; then
    echo "release: the working tree has changes; commit or stash them first:" >&2
    git status --short >&2
    exit 1
  fi
  if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
    echo "release: tag $tag exists already" >&2
    exit 1
  fi
  local head branch
  head=$(git rev-parse --verify HEAD)
  branch=$(git symbolic-ref -q --short HEAD || echo "detached HEAD")
  build_wasm
  log "release: $tag"
  local index blob tree commit
  index=$(mktemp -d)
  trap "rm -rf '$index'" EXIT
  GIT_INDEX_FILE=$index/index git read-tree "$head"
  blob=$(git hash-object -w host/runtime/arbor.wasm)
  GIT_INDEX_FILE=$index/index git update-index --add --cacheinfo "100644,$blob,host/runtime/arbor.wasm"
  tree=$(GIT_INDEX_FILE=$index/index git write-tree)
  commit=$(git commit-tree "$tree" -p "$head" -m "release $tag: $(git log -1 --format=%h "$head") plus the engine module

The engine module host/runtime/arbor.wasm, built by ./build.sh wasm
from $head, added so that
\`go install $module/host/cmd/arbor@$tag\`
builds from the module download. Branches keep no build outputs
(docs/release.md).")
  git tag -a "$tag" -m "Arbor $tag" "$commit"
  log "release: tag $tag on $(git log -1 --format=%h "$commit"), $(git log -1 --format=%h "$head") plus host/runtime/arbor.wasm ($branch did not move)"
  echo "publish it:"
  echo "  git push origin $tag     # then: go install $module/host/cmd/arbor@latest"
  if [ "$base" = "${tag#v}" ]; then
    echo "  npm publish              # arbor-memory $want; prepack builds the same engine module into it"
  else
    echo "  (npm: $tag is a pre-release; the package is published at v$want, as $want)"
  fi
}

case "${1:-all}" in
  all) build_wasm; build_cli; demo ;;
  wasm) build_wasm ;;
  cli) build_wasm; build_cli ;;
  test) build_wasm; build_cli; run_tests ;;
  bench) shift; bench_data; build_wasm; run_bench "$@" ;;
  bench-scale) shift; bench_data; build_wasm; build_cli; run_bench_scale "$@" ;;
  demo-web) build_wasm; exec node web-demo/serve.mjs "${PORT:-8080}" ;;
  extension) build_wasm; node examples/extension/build.mjs dist/extension ;;
  release) shift; release "$@" ;;
  *) echo "usage: ./build.sh [test|wasm|cli|bench|bench-scale|demo-web|extension|release vX.Y.Z]" >&2; exit 2 ;;
esac
