// Helpers for the stream tests: a temporary directory of JSONL corpora. Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace stoker::stream::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("stoker_stream_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(File(name), std::ios::binary) << bytes;
    return File(name);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A document text that names itself: "doc F-I " repeated to a length that varies with I.
inline std::string DocText(int file, int i) {
  std::string t;
  const int reps = 1 + (i * 7 + file * 3) % 9;
  for (int r = 0; r < reps; ++r) t += "doc " + std::to_string(file) + "-" + std::to_string(i) + " ";
  return t;
}

// Writes JSONL files of the given document counts; returns their paths.
inline std::vector<std::string> WriteCorpus(const TempDir& dir, const std::vector<int>& counts) {
  std::vector<std::string> paths;
  for (size_t f = 0; f < counts.size(); ++f) {
    std::string body;
    for (int i = 0; i < counts[f]; ++i) {
      body += "{\"text\": \"" + DocText(static_cast<int>(f), i) + "\"}\n";
    }
    paths.push_back(dir.Write("part-" + std::to_string(f) + ".jsonl", body));
  }
  return paths;
}

}  // namespace stoker::stream::testing
