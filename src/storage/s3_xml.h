// The few pieces of S3's XML answers that stoker needs (ListObjectsV2, CreateMultipartUpload,
// errors), read by a small hand-written extractor rather than a full XML library: S3 answers are
// flat, machine-written and never use CDATA or attributes on these elements. Entities (&amp;
// &lt; &gt; &quot; &apos; &#N; &#xN;) are decoded. Free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::storage {

// The decoded text of the first <tag>...</tag> in `xml`, or nullopt.
std::optional<std::string> XmlValue(std::string_view xml, std::string_view tag);
// The raw inner text of every <tag>...</tag> (for blocks such as <Contents>).
std::vector<std::string_view> XmlBlocks(std::string_view xml, std::string_view tag);
std::string XmlDecode(std::string_view text);

struct S3ListPage {
  struct Entry {
    std::string key;
    uint64_t size_bytes = 0;
    std::string etag;  // without quotes
  };
  std::vector<Entry> entries;
  bool truncated = false;
  std::string next_token;
};

// Parses a ListObjectsV2 result; nullopt if a <Size> is not a number or <Key> is missing.
std::optional<S3ListPage> ParseListObjectsV2(std::string_view xml);

}  // namespace stoker::storage
