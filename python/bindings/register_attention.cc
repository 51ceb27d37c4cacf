// Attention-kernel metadata from the CPU: FlexAttention's block tables (loader/flex_block_mask.h).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <vector>

#include "loader/flex_block_mask.h"
#include "register.h"

namespace nb = nanobind;

namespace stoker::python {

void RegisterAttention(nb::module_& m) {
  m.def(
      "flex_block_tables",
      [](nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> cu_seqlens,
         int rows, int seq_len, int block_size, const std::string& kind, int window) {
        loader::FlexMaskSpec spec;
        spec.block_size = block_size;
        spec.kind = Unwrap(loader::ParseFlexMaskKind(kind));
        spec.window = window;
        loader::FlexTableShape shape = Unwrap(loader::FlexTableShapeFor(spec, rows, seq_len));
        auto* buffer = new std::vector<int32_t>(shape.total_elements());
        nb::capsule owner(buffer,
                          [](void* p) noexcept { delete static_cast<std::vector<int32_t>*>(p); });
        std::span<const int32_t> cu(cu_seqlens.data(), cu_seqlens.shape(0));
        Released([&] {
          return loader::BuildFlexBlockTables(
              spec, rows, seq_len, cu, loader::FlexBlockTables::Slice(shape, buffer->data()));
        });
        size_t dims[1] = {buffer->size()};
        return nb::make_tuple(nb::ndarray<nb::numpy, int32_t>(buffer->data(), 1, dims, owner),
                              shape.blocks);
      },
      nb::arg("cu_seqlens"), nb::arg("rows"), nb::arg("seq_len"), nb::arg("block_size"),
      nb::arg("kind"), nb::arg("window"),
      "FlexAttention block tables of a packed batch's document mask: (one int32 buffer holding "
      "the eight tables, blocks per side). See stoker.flex.");
}

}  // namespace stoker::python
