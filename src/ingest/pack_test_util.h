// Helpers for the pack and merge tests: write inputs, read a dataset back as token lists.
// Header-only; thread-safe (no shared state).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ingest/pack.h"
#include "stoker/token_source.h"

namespace stoker::testing {

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every document of the dataset at `dir`, as int32 token lists (via OpenTokenSource).
inline std::vector<std::vector<int32_t>> ReadDocuments(const std::string& dir) {
  std::vector<std::vector<int32_t>> docs;
  auto source = OpenTokenSource(dir);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  if (!source.ok()) return docs;
  for (uint64_t d = 0; d < (*source)->num_documents(); ++d) {
    std::vector<int32_t> tokens((*source)->document_length(d));
    EXPECT_TRUE((*source)->Read(d, 0, tokens.size(), tokens.data()).ok());
    docs.push_back(std::move(tokens));
  }
  return docs;
}

inline std::string JsonlLine(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return "{\"text\": \"" + escaped + "\", \"id\": 1}\n";
}

}  // namespace stoker::testing
