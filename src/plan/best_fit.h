// Best-fit decreasing bin packing: the core of pack=bestfit.
#pragma once

#include <cstdint>
#include <vector>

namespace stoker::plan {

// Packs items of the given lengths (each 1..capacity; capacity < 2^32; fewer than 2^32 items) into
// bins of `capacity`: items in decreasing length (ties by index), each into the open bin with the
// least room that still fits it (ties: the bin that reached that room last), else a new bin.
// Writes each item's bin into *bin_of_item (bins numbered in order of opening) and returns the bin
// count. Deterministic. `max_items` > 0: a bin that holds that many items is closed (takes no
// more, whatever its room: PlanOptions::max_documents_per_row).
uint64_t BestFitDecreasing(const std::vector<uint64_t>& lengths, uint64_t capacity,
                           std::vector<uint32_t>* bin_of_item, uint64_t max_items = 0);

}  // namespace stoker::plan
