#include "storage/s3_xml.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <utility>

#include "common/escape.h"
#include "storage/backend.h"

namespace stoker::storage {

std::vector<std::string_view> XmlBlocks(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    const size_t start = pos + open.size();
    const size_t end = xml.find(close, start);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(start, end - start));
    pos = end + close.size();
  }
  return out;
}

std::optional<std::string> XmlValue(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> blocks = XmlBlocks(xml, tag);
  if (blocks.empty()) return std::nullopt;
  return XmlDecode(blocks.front());
}

std::string XmlDecode(std::string_view text) {
  // The named entities and the characters they stand for.
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == std::string_view::npos) {
      out += text.substr(i);
      break;
    }
    const std::string_view entity = text.substr(i + 1, semi - i - 1);
    const auto* named = std::find_if(std::begin(kNamed), std::end(kNamed),
                                     [&](const auto& n) { return n.first == entity; });
    if (named != std::end(kNamed)) {
      out += named->second;
    } else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      uint32_t cp = 0;
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      AppendUtf8(cp, &out);
    } else {
      out += text.substr(i, semi - i + 1);  // unknown: kept as written
    }
    i = semi;
  }
  return out;
}

std::optional<S3ListPage> ParseListObjectsV2(std::string_view xml) {
  S3ListPage page;
  for (std::string_view block : XmlBlocks(xml, "Contents")) {
    S3ListPage::Entry entry;
    std::optional<std::string> key = XmlValue(block, "Key");
    if (!key) return std::nullopt;
    entry.key = *key;
    const std::string size = XmlValue(block, "Size").value_or("");
    auto [ptr, ec] = std::from_chars(size.data(), size.data() + size.size(), entry.size_bytes);
    if (ec != std::errc() || ptr != size.data() + size.size() || size.empty()) return std::nullopt;
    entry.etag = UnquoteEtag(XmlValue(block, "ETag").value_or(""));
    page.entries.push_back(std::move(entry));
  }
  page.truncated = XmlValue(xml, "IsTruncated").value_or("false") == "true";
  page.next_token = XmlValue(xml, "NextContinuationToken").value_or("");
  return page;
}

}  // namespace stoker::storage
