#!/usr/bin/env bash
# Downloads the public data sets that bench/retrieval and bench/wasm read
# (bench/README.md: what they are, where they come from, their licenses):
#
#   locomo10.json.gz       LoCoMo: snap-research/locomo, data/locomo10.json
#   longmemeval_s.json.gz  LongMemEval-S: Hugging Face xiaowu0162/longmemeval
#
# into bench/data/, or into $ARBOR_BENCH_DATA when it is set. A file already
# there is kept when it passes the checks below and downloaded again when it
# does not. Each download goes to a temporary file, is gzip-compressed and
# checked, and only then renamed into place: a failed run leaves no partial
# file behind.
#
#   bench/data/fetch.sh [locomo] [longmemeval]     (no argument: both)
#
# Checks: the file gunzips, parses as JSON and has the shape the harness
# reads (LoCoMo: a list of conversations with sample_id, conversation, qa;
# LongMemEval-S: a list of questions whose haystack ids, dates and sessions
# line up); for LoCoMo also the SHA-256 of the uncompressed file.
#
# Environment:
#   ARBOR_BENCH_DATA          the folder (default: bench/data; a relative
#                             path is taken from the repository root)
#   ARBOR_LOCOMO_URL          where to get locomo10.json (a mirror)
#   ARBOR_LONGMEMEVAL_URL     where to get LongMemEval-S (a mirror, or the
#                             cleaned release: see bench/README.md)
#   ARBOR_LOCOMO_SHA256       SHA-256 of the uncompressed LoCoMo file
#   ARBOR_LONGMEMEVAL_SHA256  the same for LongMemEval-S (default: none)
#                             (set to "" to skip the hash check; the shape
#                             is always checked)
# A URL may serve JSON or gzip-compressed JSON.
#
# Needs curl or wget, gzip, and node or python3.
set -euo pipefail

# Relative paths are taken from the repository root, as ./build.sh does.
cd "$(dirname "$0")/../.."
dir=${ARBOR_BENCH_DATA:-bench/data}

locomo_url=${ARBOR_LOCOMO_URL:-https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json}
# The published locomo10.json: 2,805,274 bytes.
locomo_sha=${ARBOR_LOCOMO_SHA256-79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4}
lme_url=${ARBOR_LONGMEMEVAL_URL:-https://huggingface.co/datasets/xiaowu0162/longmemeval/resolve/main/longmemeval_s}
lme_sha=${ARBOR_LONGMEMEVAL_SHA256-}

say() { printf 'fetch.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

usage() {
  echo "usage: bench/data/fetch.sh [locomo] [longmemeval]   (no argument: both)" >&2
  exit 2
}

want_locomo=0 want_lme=0
[ $# -eq 0 ] && want_locomo=1 want_lme=1
for a in "$@"; do
  case $a in
    locomo) want_locomo=1 ;;
    longmemeval) want_lme=1 ;;
    *) usage ;;
  esac
done

if command -v curl >/dev/null 2>&1; then
  fetcher=curl
elif command -v wget >/dev/null 2>&1; then
  fetcher=wget
else
  die "needs curl or wget"
fi
command -v gzip >/dev/null 2>&1 || die "needs gzip"
if command -v node >/dev/null 2>&1; then
  checker=node
elif command -v python3 >/dev/null 2>&1; then
  checker=python3
else
  die "needs node or python3 to check the files"
fi

mkdir -p "$dir" || die "cannot create $dir"
tmp=$(mktemp -d "$dir/.fetch.XXXXXX") || die "cannot write in $dir"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# check_node and check_py take KIND FILE SHA256 and do the same thing: on
# success print a one-line summary, on failure print why to stderr and exit 1.
check_node='
const [kind, file, want] = process.argv.slice(1);
const fail = (msg) => { process.stderr.write(msg + "\n"); process.exit(1); };
let buf = require("fs").readFileSync(file);
if (!(buf[0] === 0x1f && buf[1] === 0x8b)) fail("not gzip-compressed");
try { buf = require("zlib").gunzipSync(buf); } catch (e) { fail("does not gunzip: " + e.message); }
if (want) {
  const got = require("crypto").createHash("sha256").update(buf).digest("hex");
  if (got !== want) fail("SHA-256 of the JSON is " + got + ", expected " + want);
}
let data;
try { data = JSON.parse(buf.toString("utf8")); } catch (e) { fail("not valid JSON: " + e.message); }
const isStr = (v) => typeof v === "string";
const isList = Array.isArray;
if (!isList(data) || data.length === 0) fail("not a non-empty JSON list");
if (kind === "locomo") {
  let qs = 0;
  data.forEach((c, i) => {
    const where = "conversation " + i;
    if (!c || !isStr(c.sample_id)) fail(where + ": no sample_id");
    const conv = c.conversation;
    if (!conv || !isStr(conv.speaker_a) || !isStr(conv.speaker_b)) fail(where + ": no conversation.speaker_a/speaker_b");
    if (!Object.keys(conv).some((k) => /^session_\d+$/.test(k) && isList(conv[k]))) fail(where + ": no session_<N> list");
    if (!isList(c.qa)) fail(where + ": no qa list");
    c.qa.forEach((q, j) => {
      if (!q || !isStr(q.question) || !isList(q.evidence) || !Number.isInteger(q.category)) fail(where + ", qa " + j + ": no question, evidence list or category");
    });
    qs += c.qa.length;
  });
  console.log(data.length + " conversations, " + qs + " questions");
} else {
  data.forEach((q, i) => {
    const where = "question " + i + (q && isStr(q.question_id) ? " (" + q.question_id + ")" : "");
    if (!q || !isStr(q.question_id) || !isStr(q.question_type) || !isStr(q.question) || !isStr(q.question_date)) fail(where + ": no question_id, question_type, question or question_date");
    for (const k of ["haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"]) if (!isList(q[k])) fail(where + ": no " + k + " list");
    const n = q.haystack_sessions.length;
    if (q.haystack_session_ids.length !== n || q.haystack_dates.length !== n) fail(where + ": " + n + " sessions, " + q.haystack_dates.length + " dates, " + q.haystack_session_ids.length + " ids");
    q.haystack_sessions.forEach((s, j) => {
      if (!isList(s) || !s.every((m) => m && isStr(m.role) && isStr(m.content))) fail(where + ", session " + (j + 1) + ": not a list of {role, content}");
    });
  });
  console.log(data.length + " questions");
}
'
check_py='
import gzip, hashlib, json, re, sys, zlib
kind, file, want = sys.argv[1:4]
def fail(msg):
    sys.stderr.write(msg + "\n"); sys.exit(1)
with open(file, "rb") as f:
    buf = f.read()
if buf[:2] != b"\x1f\x8b": fail("not gzip-compressed")
try: buf = gzip.decompress(buf)
except (OSError, EOFError, zlib.error) as e: fail("does not gunzip: %s" % e)
if want:
    got = hashlib.sha256(buf).hexdigest()
    if got != want: fail("SHA-256 of the JSON is %s, expected %s" % (got, want))
try: data = json.loads(buf.decode("utf-8"))
except ValueError as e: fail("not valid JSON: %s" % e)
isstr = lambda v: isinstance(v, str)
islist = lambda v: isinstance(v, list)
if not islist(data) or not data: fail("not a non-empty JSON list")
if kind == "locomo":
    qs = 0
    for i, c in enumerate(data):
        where = "conversation %d" % i
        if not isinstance(c, dict) or not isstr(c.get("sample_id")): fail(where + ": no sample_id")
        conv = c.get("conversation")
        if not isinstance(conv, dict) or not isstr(conv.get("speaker_a")) or not isstr(conv.get("speaker_b")): fail(where + ": no conversation.speaker_a/speaker_b")
        if not any(re.fullmatch(r"session_\d+", k) and islist(v) for k, v in conv.items()): fail(where + ": no session_<N> list")
        if not islist(c.get("qa")): fail(where + ": no qa list")
        for j, q in enumerate(c["qa"]):
            if not isinstance(q, dict) or not isstr(q.get("question")) or not islist(q.get("evidence")) or type(q.get("category")) is not int: fail("%s, qa %d: no question, evidence list or category" % (where, j))
        qs += len(c["qa"])
    print("%d conversations, %d questions" % (len(data), qs))
else:
    for i, q in enumerate(data):
        where = "question %d" % i + (" (%s)" % q["question_id"] if isinstance(q, dict) and isstr(q.get("question_id")) else "")
        if not isinstance(q, dict) or not all(isstr(q.get(k)) for k in ("question_id", "question_type", "question", "question_date")): fail(where + ": no question_id, question_type, question or question_date")
        for k in ("haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"):
            if not islist(q.get(k)): fail(where + ": no " + k + " list")
        n = len(q["haystack_sessions"])
        if len(q["haystack_session_ids"]) != n or len(q["haystack_dates"]) != n: fail("%s: %d sessions, %d dates, %d ids" % (where, n, len(q["haystack_dates"]), len(q["haystack_session_ids"])))
        for j, s in enumerate(q["haystack_sessions"]):
            if not islist(s) or not all(isinstance(m, dict) and isstr(m.get("role")) and isstr(m.get("content")) for m in s): fail("%s, session %d: not a list of {role, content}" % (where, j + 1))
    print("%d questions" % len(data))
'

# check KIND FILE SHA256
check() {
  if [ "$checker" = node ]; then
    node -e "$check_node" "$@"
  else
    python3 -c "$check_py" "$@"
  fi
}

# why is the reason the last check gave.
why() {
  if [ -s "$tmp/why" ]; then
    head -c 300 "$tmp/why" | tr '\n' ' ' | sed 's/ *$//'
  else
    echo "$checker failed without saying why"
  fi
}

# download URL FILE
download() {
  if [ "$fetcher" = curl ]; then
    local progress=-sS
    [ -t 2 ] && progress=-#
    curl -fL --retry 3 --retry-delay 2 --connect-timeout 30 "$progress" -o "$2" "$1"
  else
    local progress=-nv
    [ -t 2 ] && progress=
    wget $progress -O "$2" "$1"
  fi
}

# fetch NAME KIND URL SHA256 NOTE
fetch() {
  local name=$1 kind=$2 url=$3 sha=$4 note=$5
  local target=$dir/$name raw=$tmp/$name.download gz=$tmp/$name summary
  if [ -e "$target" ]; then
    if summary=$(check "$kind" "$target" "$sha" 2>"$tmp/why"); then
      say "$target: present and valid ($summary), kept"
      return 0
    fi
    say "$target: present but invalid ($(why)); downloading it again"
  fi
  say "$name: downloading $url ($note)"
  local kept=
  [ -e "$target" ] && kept=" (the invalid $target is left as it was)"
  download "$url" "$raw" || die "$name: download from $url failed; nothing was written$kept"
  if [ "$(head -c 2 "$raw" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; then
    mv "$raw" "$gz"
  else
    gzip -n -c "$raw" >"$gz" || die "$name: gzip failed"
    rm -f "$raw"
  fi
  summary=$(check "$kind" "$gz" "$sha" 2>"$tmp/why") ||
    die "$name: what $url served is not the expected data: $(why); nothing was written$kept"
  mv -f "$gz" "$target"
  say "$target: $summary, written"
}

if [ "$want_locomo" = 1 ]; then
  fetch locomo10.json.gz locomo "$locomo_url" "$locomo_sha" \
    "LoCoMo, Maharana et al. 2024; CC BY-NC 4.0: non-commercial use only"
fi
if [ "$want_lme" = 1 ]; then
  fetch longmemeval_s.json.gz longmemeval "$lme_url" "$lme_sha" \
    "LongMemEval-S, Wu et al. ICLR 2025; MIT license; about 280 MB"
fi
