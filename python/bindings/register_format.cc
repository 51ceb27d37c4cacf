// stoker.inspect / stoker.verify: the library behind `stoker inspect` and `stoker verify`.
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "format/inspect.h"
#include "format/loss_mask.h"
#include "format/stoker_dataset.h"
#include "format/verify.h"
#include "register.h"
#include "stoker/token_source.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

std::unique_ptr<TokenSource> Open(const std::string& path) {
  return Released([&] { return OpenTokenSource(path); });
}

std::string InspectJson(const std::string& path) {
  std::unique_ptr<TokenSource> source = Open(path);
  nb::gil_scoped_release release;
  return Inspect(*source).ToJson();
}

std::string DocumentJson(const std::string& path, uint64_t doc) {
  std::unique_ptr<TokenSource> source = Open(path);
  return Released([&]() -> Result<std::string> {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<StokerDataset> mask, OpenLossMask(*source));
    return DocumentToJson(*source, doc, mask.get());
  });
}

nb::dict VerifyDict(const std::string& path) {
  VerifyReport r = Released([&] { return Verify(path, nullptr); });
  nb::dict d;
  d["ok"] = r.ok();
  d["path"] = r.path;
  d["format"] = r.format;
  d["files"] = r.files;
  d["bytes"] = r.bytes;
  d["documents"] = r.documents;
  d["tokens"] = r.tokens;
  nb::list problems;
  for (const std::string& p : r.problems) problems.append(p);
  d["problems"] = problems;
  return d;
}

}  // namespace

void RegisterFormat(nb::module_& m) {
  m.def("inspect_json", &InspectJson, nb::arg("path"),
        "The summary of `stoker inspect --json` for any supported token data.");
  m.def("document_json", &DocumentJson, nb::arg("path"), nb::arg("document"),
        "The token ids of one document as a JSON array (`stoker inspect --show-document`).");
  m.def("verify", &VerifyDict, nb::arg("path"),
        "Checks token data end to end (`stoker verify`); problems are listed, not raised.");
}

}  // namespace stoker::python
