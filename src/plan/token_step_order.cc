// The displacement of a token step's pieces (token_step_order.h).
#include "plan/token_step_order.h"

#include <algorithm>

namespace stoker::plan {

void AddOrderDisplacement(const TokenStep& step, OrderDisplacement* out) {
  const uint64_t n = step.pieces.size();
  if (n == 0) return;
  const SlotAssignment& a = step.slots;
  uint64_t served = 0;
  for (uint32_t m = 0; m < a.microbatches; ++m) {
    for (uint32_t r = 0; r < a.ranks; ++r) {
      for (uint32_t i : a.slots[static_cast<size_t>(r) * a.microbatches + m]) {
        const uint64_t d = served > i ? served - i : i - served;
        out->max = std::max(out->max, d);
        out->sum += static_cast<double>(d);
        ++served;
      }
    }
  }
  out->pieces += n;
  out->bound = std::max(out->bound, n - 1);
  const double nn = static_cast<double>(n);
  out->uniform_sum += (nn * nn - 1) / 3;
}

}  // namespace stoker::plan
