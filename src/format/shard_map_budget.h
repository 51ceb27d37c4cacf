// MappedShardReservation: a share of the process-wide budget of memory-mapped shards.
//
// Linux caps the number of memory maps a process may hold (vm.max_map_count, 65530 by default),
// and a mapped Megatron shard holds two (.bin and .idx). A dataset of 40,000 shards mapped whole
// would take every map the process has, and torch, CUDA, thread stacks and malloc need thousands of
// their own. So all open datasets share one budget: the cap less 16,384 maps left to the rest of
// the process, two maps per shard (24,573 shards at the default cap: a 1 T-token uint16 corpus in
// 128 MiB shards is 16,000), or STOKER_MAX_MAPPED_SHARDS shards when that is set. A dataset
// reserves what it needs at open; one that gets less maps its shards on demand (ShardPool).
// Thread-safe: reservations may be made and released from any thread.
#pragma once

#include <cstdint>

#include "stoker/status.h"

namespace stoker {

class MappedShardReservation {
 public:
  // The smallest share granted, however much of the budget other datasets hold: enough for a
  // loader's workers to each read their own shard. Capped at an eighth of the budget, and at
  // least 1.
  static constexpr uint64_t kMinimumGrant = 64;

  // Reserves up to `wanted` shards: all of them if the budget has room, else what is left, or the
  // minimum grant if more. kInvalidArgument if STOKER_MAX_MAPPED_SHARDS is set but not a positive
  // integer.
  static Result<MappedShardReservation> Reserve(uint64_t wanted);

  // The whole budget, in shards (from STOKER_MAX_MAPPED_SHARDS or vm.max_map_count).
  static Result<uint64_t> Budget();

  MappedShardReservation() = default;
  MappedShardReservation(MappedShardReservation&& other) noexcept;
  MappedShardReservation& operator=(MappedShardReservation&& other) noexcept;
  MappedShardReservation(const MappedShardReservation&) = delete;
  MappedShardReservation& operator=(const MappedShardReservation&) = delete;
  ~MappedShardReservation();

  uint64_t granted() const { return granted_; }

 private:
  explicit MappedShardReservation(uint64_t granted) : granted_(granted) {}
  // Gives the share back to the budget.
  void Release();
  uint64_t granted_ = 0;
};

}  // namespace stoker
