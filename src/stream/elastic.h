// Elastic resume of a stream (docs/streaming.md, "Elastic resume"): the rest of an epoch, taken
// from the states of every rank of one world and dealt to the ranks of another. This header has
// the encoding of a rank's ElasticEpoch inside its PlanState::stream ("E1 epoch shard_world steps
// units... |" before the RankSnapshot); StreamPlanner::ElasticState (elastic.cc) builds it.
// Plain functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stream/rank_stream.h"

namespace stoker::stream {

bool IsElasticState(std::string_view stream_state);
// The header, ending in "| " (its `shards` are not written: they are MakeShards of shard_world).
std::string EncodeElasticHeader(const ElasticEpoch& e);
// Reads the header off the front of *text, leaving the RankSnapshot.
Result<ElasticEpoch> DecodeElasticHeader(std::string_view* text);

}  // namespace stoker::stream
