// WindowSource: a ByteSource decorator for readers that go forward through a remote object (a
// tar, TFRecord or MDS shard read record by record), whose many small reads must not each become
// a request. It reads its inner source in whole aligned parts (8 MiB by default), one ranged GET
// each, keeps at most `window_parts` of them (the parts behind the newest read go first), and from
// the first read on one thread fetches the part after the newest one read, so that the next part
// is usually there when the reader reaches it. Memory is bounded by (window_parts + 1) parts,
// whatever the object's size; a backward read of an evicted part fetches it again. A failed fetch
// is the error of the reads that need it and is not kept. Destroying the source aborts the
// fetcher's request in flight (storage/cancel.h) and joins it. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "storage/byte_source.h"

namespace stoker::storage {

std::unique_ptr<ByteSource> NewWindowSource(std::unique_ptr<ByteSource> inner, size_t part_bytes,
                                            size_t window_parts = 2);

}  // namespace stoker::storage
