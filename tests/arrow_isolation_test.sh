#!/usr/bin/env bash
# Arrow stays out of the process until a Parquet/Arrow file is read, and no symbol of pyarrow's
# libraries (libparquet carries its own simdjson) binds to Debian's libsimdjson or back
# (cmake/arrow.cmake). Run by ctest as ArrowIsolation: arrow_isolation_test.sh STOKER SOURCE_DIR.
set -euo pipefail
stoker=$1
src=$2
tok=$src/fuzz/seeds/tokenizer_json/gpt2_small.json
parquet=$src/fuzz/seeds/parquet/snappy.parquet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "ArrowIsolation: $*" >&2; exit 1; }

# 1. A command that reads no Parquet: libarrow and libparquet are never mapped.
echo "hello world" | LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$tmp/tok" \
  "$stoker" tokenize --tokenizer "$tok" >"$tmp/tok.out"
cat "$tmp"/tok.* >"$tmp/tok.log"
grep -q "to [^ ]*libsimdjson" "$tmp/tok.log" || fail "tokenize: no binding into libsimdjson seen"
if grep -q -E "lib(arrow|parquet)\.so" "$tmp/tok.log"; then
  grep -m 3 -E "lib(arrow|parquet)\.so" "$tmp/tok.log" >&2
  fail "tokenize loaded Arrow"
fi

# 2. A command that reads Parquet (libsimdjson is mapped from the start): Arrow is loaded, and no
# binding crosses between libparquet/libarrow and libsimdjson in either direction.
LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$tmp/pq" \
  "$stoker" records "$parquet" --dump >"$tmp/pq.out" 2>&1 ||
  { cat "$tmp/pq.out" >&2; fail "reading a Parquet file failed"; }
# The column input_ids (the dump names fields in hex).
grep -q '696e7075745f696473' "$tmp/pq.out" || { cat "$tmp/pq.out" >&2; fail "no records read"; }
cat "$tmp"/pq.* >"$tmp/pq.log"
grep -q "binding file [^ ]*libparquet\.so" "$tmp/pq.log" || fail "records: libparquet not seen"
across='binding file [^ ]*lib(parquet|arrow)\.so[^ ]* .* to [^ ]*libsimdjson|binding file [^ ]*libsimdjson[^ ]* .* to [^ ]*lib(parquet|arrow)\.so'
if grep -q -E "$across" "$tmp/pq.log"; then
  grep -m 5 -E "$across" "$tmp/pq.log" >&2
  fail "a symbol bound across pyarrow's libraries and Debian's libsimdjson"
fi
echo "ArrowIsolation: ok"
