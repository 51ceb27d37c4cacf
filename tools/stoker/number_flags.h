// Number flags: one check for every numeric option of every subcommand, so that a bad value reads
// "--seq-len: must be a whole number ≥ 1, got 'abc'" instead of CLI11's own text (which prints
// the whole range of a double). The walk in cli_test.cc refuses any number flag without one.
// Not thread-safe: used while one command line is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

namespace stoker::cli {

// A whole number (digits only, no sign, no exponent) in [min, max].
CLI::Validator WholeNumber(uint64_t min, uint64_t max);

// A whole number from `min` up to the largest value the flag's type T holds.
template <typename T>
CLI::Validator WholeNumber(uint64_t min = 0) {
  return WholeNumber(min, static_cast<uint64_t>(std::numeric_limits<T>::max()));
}

enum class Bound { kInclusive, kExclusive };

// A finite number above `min` (at least `min` for kInclusive) and at most `max`.
CLI::Validator RealNumber(double min, Bound min_bound,
                          double max = std::numeric_limits<double>::infinity());

}  // namespace stoker::cli
