#include "format/shard_map_budget.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>

#include "common/env.h"

namespace stoker {
namespace {

// Linux's default vm.max_map_count, for systems where /proc does not say.
constexpr uint64_t kDefaultMaxMapCount = 65530;
// Maps left to everything in the process that is not a shard.
constexpr uint64_t kMapsForTheRest = 16384;

std::mutex& BudgetMutex() {
  static std::mutex mu;
  return mu;
}
// Shards reserved by open datasets; guarded by BudgetMutex().
uint64_t& ReservedShards() {
  static uint64_t reserved = 0;
  return reserved;
}

uint64_t MaxMapCount() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  uint64_t n = 0;
  if (in >> n && n > 0) return n;
  return kDefaultMaxMapCount;
}

}  // namespace

Result<uint64_t> MappedShardReservation::Budget() {
  STOKER_ASSIGN_OR_RETURN(std::optional<uint64_t> shards, EnvNumber("STOKER_MAX_MAPPED_SHARDS"));
  if (shards) {
    if (*shards == 0) return InvalidArgument("STOKER_MAX_MAPPED_SHARDS='0': must be at least 1");
    return *shards;
  }
  // Two maps per shard. torch, CUDA, NCCL, thread stacks and malloc keep the rest: a few thousand
  // maps in a training process, so 16,384 are left to them (or half the cap, if it is that low).
  const uint64_t cap = MaxMapCount();
  const uint64_t others = std::min<uint64_t>(kMapsForTheRest, cap / 2);
  return std::max<uint64_t>((cap - others) / 2, 1);
}

Result<MappedShardReservation> MappedShardReservation::Reserve(uint64_t wanted) {
  STOKER_ASSIGN_OR_RETURN(uint64_t budget, Budget());
  std::lock_guard<std::mutex> lock(BudgetMutex());
  uint64_t& reserved = ReservedShards();
  uint64_t left = budget > reserved ? budget - reserved : 0;
  uint64_t floor = std::max<uint64_t>(1, std::min(kMinimumGrant, budget / 8));
  uint64_t granted = std::min(wanted, std::max(left, floor));
  reserved += granted;
  return MappedShardReservation(granted);
}

MappedShardReservation::MappedShardReservation(MappedShardReservation&& other) noexcept
    : granted_(other.granted_) {
  other.granted_ = 0;
}

MappedShardReservation& MappedShardReservation::operator=(MappedShardReservation&& other) noexcept {
  if (this != &other) {
    Release();
    granted_ = other.granted_;
    other.granted_ = 0;
  }
  return *this;
}

MappedShardReservation::~MappedShardReservation() { Release(); }

void MappedShardReservation::Release() {
  if (granted_ == 0) return;
  std::lock_guard<std::mutex> lock(BudgetMutex());
  ReservedShards() -= granted_;
  granted_ = 0;
}

}  // namespace stoker
