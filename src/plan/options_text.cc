// Options in clear ("k=v k=v") and the ones two such texts disagree on: what a refused resume
// names.
#include "plan/options_text.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace stoker::plan {
namespace {

// "k=v k=v" -> {k: v}, in order.
std::vector<std::pair<std::string, std::string>> SplitOptions(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    at = end + 1;
  }
  return out;
}

}  // namespace

std::string OptionsThatDiffer(const std::string& checkpoint, const std::string& here) {
  if (checkpoint.empty()) return "";
  const auto then = SplitOptions(checkpoint), now = SplitOptions(here);
  auto find = [](const auto& list, const std::string& key) -> std::string {
    for (const auto& [k, v] : list) {
      if (k == key) return v;
    }
    return "none";
  };
  std::vector<std::string> keys;
  for (const auto& list : {then, now}) {
    for (const auto& [k, v] : list) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  std::string out;
  for (const std::string& k : keys) {
    const std::string a = find(then, k), b = find(now, k);
    if (a == b) continue;
    out += (out.empty() ? "" : ", ") + k + " (" + a + " in the checkpoint, " + b + " here)";
  }
  return out;
}

}  // namespace stoker::plan
