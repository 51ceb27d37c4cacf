// Options in clear, as PlanState::options holds them ("seq_len=2048 seed=0 pack=bestfit": keys
// and values without spaces), and the ones two such texts disagree on. Pure functions.
#pragma once

#include <string>

namespace stoker::plan {

// "seq_len (64 in the checkpoint, 128 here), pack (...)": the options of two texts that differ
// (a key missing on one side reads "none"); "" when none does or `checkpoint` is empty (a state
// written before its options were kept).
std::string OptionsThatDiffer(const std::string& checkpoint, const std::string& here);

}  // namespace stoker::plan
