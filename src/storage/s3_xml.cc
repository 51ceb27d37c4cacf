#include "storage/s3_xml.h"

#include <charconv>
#include <cstdint>

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

std::vector<std::string> XmlValues(std::string_view xml, std::string_view tag) {
  std::vector<std::string> out;
  for (std::string_view block : XmlBlocks(xml, tag)) out.push_back(XmlDecode(block));
  return out;
}

std::optional<std::string> XmlValue(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> blocks = XmlBlocks(xml, tag);
  if (blocks.empty()) return std::nullopt;
  return XmlDecode(blocks.front());
}

std::string XmlDecode(std::string_view text) {
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
    if (entity == "amp")
      out += '&';
    else if (entity == "lt")
      out += '<';
    else if (entity == "gt")
      out += '>';
    else if (entity == "quot")
      out += '"';
    else if (entity == "apos")
      out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      uint32_t cp = 0;
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      // UTF-8 encode the code point.
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    } else {
      out += text.substr(i, semi - i + 1);  // unknown: kept as written
    }
    i = semi;
  }
  return out;
}

std::string XmlEscape(std::string_view text) { return EscapeMarkup(text); }

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
