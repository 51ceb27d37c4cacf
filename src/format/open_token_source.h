// OpenTokenSource with the options of a remote dataset (the public one in
// include/stoker/token_source.h uses the defaults): local paths and file:// URIs as there;
// s3:// and http(s):// URIs name a stoker dataset, opened with StokerDataset::OpenRemote.
// Free function; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "format/stoker_dataset.h"
#include "stoker/token_source.h"

namespace stoker {

Result<std::unique_ptr<TokenSource>> OpenTokenSource(const std::string& uri,
                                                     const RemoteDatasetOptions& remote);

}  // namespace stoker
