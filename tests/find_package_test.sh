#!/usr/bin/env bash
# find_package(stoker) as a C++ trainer uses it (ctest FindPackage): installs this build into a
# temporary prefix (cmake --install), configures and builds tests/find_package/ against it with
# -DCMAKE_PREFIX_PATH only (no path into the source or build tree), and runs it: it loads an epoch
# of a .npy it writes and, with PYTHON (the interpreter whose pyarrow the build used; empty in a
# build without Arrow), of a Parquet file, which must load the installed libstoker_arrow.so.
# Every installed public header is compiled too.
# Usage: find_package_test.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -euo pipefail
build=$1 source=$2 python=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

for component in Development Runtime; do
  cmake --install "$build" --prefix "$prefix" --component "$component" >/dev/null
done
if find "$prefix/include" -type f ! -path "$prefix/include/stoker/*" | grep .; then
  echo "find_package_test: installed headers outside include/stoker/ (above)" >&2
  exit 1
fi

# One translation unit that includes every installed public header.
for h in "$prefix"/include/stoker/*.h; do echo "#include \"stoker/$(basename "$h")\""; done \
  > "$tmp/all_headers.cc"

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$source/tests/find_package" -B "$tmp/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DSTOKER_ALL_HEADERS="$tmp/all_headers.cc" >/dev/null
cmake --build "$tmp/build" >/dev/null

mkdir "$tmp/data"
args=("$tmp/data")
if [ -n "$python" ]; then
  "$python" -c "import pyarrow as pa, pyarrow.parquet as pq, sys
pq.write_table(pa.table({'input_ids': pa.array(
    [[1000 + 10 * d + t for t in range(d % 5 + 3)] for d in range(20)], pa.list_(pa.int32()))}),
    sys.argv[1])" "$tmp/data/tokens.parquet"
  args+=("$tmp/data/tokens.parquet")
fi
# Nothing from the build tree: the module comes from the prefix or not at all.
out=$(env -u STOKER_ARROW_MODULE "$tmp/build/consumer" "${args[@]}")
echo "$out"
if [ -n "$python" ] && ! grep -qx "arrow module: $prefix/lib.*/libstoker_arrow.so" <<<"$out"; then
  echo "find_package_test: the consumer did not load the installed Arrow module" >&2
  exit 1
fi
echo "find_package_test: ok"
