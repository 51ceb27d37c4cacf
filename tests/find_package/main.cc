// The smallest C++ trainer on an installed stoker, built by tests/find_package_test.sh through
// find_package(stoker): writes a .npy of 16 documents of 8 tokens into DIR, loads one epoch of it,
// and checks that every token delivered is one of the file's. With PARQUET (a list<int32> column
// of tokens from 1000, written by the test with pyarrow), loads that too, which needs the
// installed Arrow module, and prints the path of the module the process mapped.
// Usage: consumer DIR [PARQUET]
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "stoker/loader.h"

namespace {

// A NumPy .npy v1.0 of uint16 [documents, length], token (d * length + t + first).
bool WriteNpy(const std::string& path, int documents, int length, int first) {
  std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (" +
                       std::to_string(documents) + ", " + std::to_string(length) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&header_len), 2);
  out << header;
  for (int i = 0; i < documents * length; ++i) {
    const uint16_t token = static_cast<uint16_t>(first + i);
    out.write(reinterpret_cast<const char*>(&token), 2);
  }
  return static_cast<bool>(out);
}

// Loads one epoch of `path`; every delivered token must lie in [lo, hi). Returns the tokens seen,
// or -1 on an error (printed).
int64_t LoadEpoch(const std::string& path, int64_t lo, int64_t hi) {
  stoker::LoaderOptions options;
  options.seq_len = 8;
  options.batch_size = 2;
  options.num_workers = 1;
  options.pin_memory = false;
  options.pad_token_id = -1;
  options.monitor_warnings = false;
  auto loader = stoker::Loader::Open({{path, nullptr}}, options);
  if (!loader.ok()) {
    std::fprintf(stderr, "consumer: %s\n", loader.status().ToString().c_str());
    return -1;
  }
  int64_t seen = 0;
  for (;;) {
    auto next = (*loader)->Next();
    if (!next.ok()) {
      std::fprintf(stderr, "consumer: %s\n", next.status().ToString().c_str());
      return -1;
    }
    if (!next->has_value()) return seen;  // the end of the epoch
    const stoker::TensorView ids = (*next)->input_ids();
    const auto* tokens = static_cast<const int64_t*>(ids.data);
    for (int64_t i = 0; i < ids.shape[0] * ids.shape[1]; ++i) {
      if (tokens[i] == -1) continue;  // padding
      if (tokens[i] < lo || tokens[i] >= hi) {
        std::fprintf(stderr, "consumer: %s: token %lld is not the file's\n", path.c_str(),
                     static_cast<long long>(tokens[i]));
        return -1;
      }
      ++seen;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [PARQUET]\n", argv[0]);
    return 2;
  }
  const std::string npy = std::string(argv[1]) + "/tokens.npy";
  if (!WriteNpy(npy, 16, 8, 1)) return 1;
  const int64_t seen = LoadEpoch(npy, 1, 1 + 16 * 8);
  if (seen <= 0) return 1;
  std::printf("npy: %lld tokens\n", static_cast<long long>(seen));
  if (argc > 2) {
    const int64_t parquet = LoadEpoch(argv[2], 1000, 2000);
    if (parquet <= 0) return 1;
    std::printf("parquet: %lld tokens\n", static_cast<long long>(parquet));
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      const size_t at = line.find('/');
      if (at != std::string::npos && line.find("libstoker_arrow.so") != std::string::npos) {
        std::printf("arrow module: %s\n", line.substr(at).c_str());
        break;
      }
    }
  }
  return 0;
}
