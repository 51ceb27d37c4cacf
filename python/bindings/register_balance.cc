// stoker.balance, stoker.CostModel, stoker.assign_slots: the plan's cost model and balancers
// (src/plan/cost_model.h, balance.h, slot_assignment.h) for data that does not come from a plan.
// Pure functions: each releases the GIL while it computes.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/balance.h"
#include "plan/best_fit.h"
#include "plan/cost_model.h"
#include "plan/slot_assignment.h"
#include "register.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

using CostArray = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using LengthArray = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::list GroupsToList(const std::vector<std::vector<uint32_t>>& groups) {
  nb::list out;
  for (const auto& g : groups) {
    nb::list items;
    for (uint32_t i : g) items.append(i);
    out.append(items);
  }
  return out;
}

}  // namespace

void RegisterBalance(nb::module_& m) {
  m.def(
      "cost_model_from_config",
      [](const std::string& config_json, const std::string& name) {
        plan::CostModel c = Unwrap(plan::CostModelFromConfig(config_json, name));
        return std::make_tuple(c.a, c.b, c.c);
      },
      nb::arg("config_json"), nb::arg("name"),
      "(a, b, c) of a config.json's text: training FLOPs per token and per token² "
      "(docs/plan.md, \"Balanced steps\"). ValueError for a config it cannot count.");
  m.def(
      "fit_cost_model",
      [](const std::vector<std::pair<std::vector<uint64_t>, double>>& samples) {
        std::vector<plan::CostSample> s;
        s.reserve(samples.size());
        for (const auto& [lengths, seconds] : samples) s.push_back({lengths, seconds});
        double r2 = 0;
        plan::CostModel c = Released([&] { return plan::FitCostModel(s, &r2); });
        return std::make_tuple(c.a, c.b, c.c, r2);
      },
      nb::arg("samples"),
      "(a, b, c, r_squared): the non-negative least-squares fit of seconds = Σ a·L + b·L² + c "
      "over samples of (document lengths, seconds).");
  m.def(
      "validate_cost_model",
      [](double a, double b, double c) {
        ThrowIfError(plan::ValidateCostModel({a, b, c}));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"));
  m.def(
      "balance_groups",
      [](CostArray costs, uint32_t k) {
        std::span<const double> view(costs.data(), costs.shape(0));
        return GroupsToList(Released([&] { return plan::BalanceGroups(view, k); }));
      },
      nb::arg("costs"), nb::arg("k"),
      "k equal-count groups of item indices minimizing the largest group's cost "
      "(src/plan/balance.h).");
  m.def(
      "assign_slots",
      [](LengthArray lengths, uint32_t ranks, uint64_t max_tokens_per_microbatch, double a,
         double b, double c, uint32_t min_microbatches) {
        std::span<const uint64_t> view(lengths.data(), lengths.shape(0));
        plan::SlotAssignment s = Released([&] {
          return plan::AssignSlots(view, ranks, max_tokens_per_microbatch, {a, b, c},
                                   min_microbatches);
        });
        nb::dict d;
        d["ranks"] = s.ranks;
        d["microbatches"] = s.microbatches;
        d["slots"] = GroupsToList(s.slots);
        d["slot_tokens"] = s.slot_tokens;
        d["slot_cost"] = s.slot_cost;
        return d;
      },
      nb::arg("lengths"), nb::arg("ranks"), nb::arg("max_tokens_per_microbatch"), nb::arg("a"),
      nb::arg("b"), nb::arg("c"), nb::arg("min_microbatches"),
      "Balanced (rank, microbatch) slots of one window's documents (src/plan/slot_assignment.h).");
  m.def(
      "best_fit_decreasing",
      [](LengthArray lengths, uint64_t capacity) {
        std::vector<uint64_t> v(lengths.data(), lengths.data() + lengths.shape(0));
        for (size_t i = 0; i < v.size(); ++i) {
          if (v[i] == 0 || v[i] > capacity) {
            ThrowIfError(InvalidArgument("best_fit_decreasing: length " + std::to_string(i) +
                                         " must be 1.." + std::to_string(capacity)));
          }
        }
        std::vector<uint32_t> bins;
        {
          nb::gil_scoped_release release;
          plan::BestFitDecreasing(v, capacity, &bins);
        }
        return bins;
      },
      nb::arg("lengths"), nb::arg("capacity"),
      "The row of each length under the plan's best-fit packing (pack=bestfit), for benchmarks.");
}

}  // namespace stoker::python
