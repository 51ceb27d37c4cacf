# Every dependency is a Debian package installed by scripts/setup (see README.md).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(CURL 7.68 REQUIRED)
find_package(OpenSSL 1.1 REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# libcrypto: the hashlib digests (md5, sha*, blake2) that MDS index files list.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)      # BPE pre-tokenizer regexes
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)  # NFC for tokenizer.json
find_package(simdjson 3.0 REQUIRED)  # tokenizer.json's vocab and merges (text/tokenizer_json_scan)
if(STOKER_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(STOKER_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
