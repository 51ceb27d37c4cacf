// LoaderBatch: the RAII handle of one delivered batch (include/stoker/loader.h).
#include <utility>

#include "loader/batch_layout.h"
#include "loader/batch_owner.h"
#include "stoker/loader.h"
#include "stoker/planner.h"

namespace stoker {

LoaderBatch::LoaderBatch(LoaderBatch&& other) noexcept { *this = std::move(other); }

LoaderBatch& LoaderBatch::operator=(LoaderBatch&& other) noexcept {
  if (this == &other) return *this;
  Release();
  owner_ = std::move(other.owner_);
  slot_ = std::exchange(other.slot_, -1);
  device_buffer_ = std::exchange(other.device_buffer_, -1);
  consumer_stream_ = other.consumer_stream_;
  stream_set_ = other.stream_set_;
  host_base_ = std::exchange(other.host_base_, nullptr);
  device_base_ = std::exchange(other.device_base_, nullptr);
  device_ = other.device_;
  layout_ = std::exchange(other.layout_, nullptr);
  epoch_ = other.epoch_;
  step_ = other.step_;
  batch_size_ = other.batch_size_;
  seq_len_ = other.seq_len_;
  max_seqlen_ = other.max_seqlen_;
  num_cu_seqlens_ = other.num_cu_seqlens_;
  real_tokens_ = other.real_tokens_;
  trained_tokens_ = other.trained_tokens_;
  skipped_documents_ = other.skipped_documents_;
  source_counts_ = std::move(other.source_counts_);
  step_figures_ = other.step_figures_;
  dtype_ = other.dtype_;
  position_after_ = other.position_after_;
  planner_ = std::move(other.planner_);
  state_after_ = std::move(other.state_after_);
  return *this;
}

const PlanState& LoaderBatch::state_after() const {
  if (!state_after_) state_after_ = planner_ ? planner_->MakeState(position_after_) : PlanState{};
  return *state_after_;
}

LoaderBatch::~LoaderBatch() { Release(); }

void LoaderBatch::Release() {
  if (owner_ == nullptr) return;
  owner_->Release(slot_, device_buffer_, consumer_stream_, stream_set_);
  owner_.reset();
  host_base_ = device_base_ = nullptr;
  layout_ = nullptr;
}

Status LoaderBatch::WaitOnStream(void* cuda_stream) {
  if (owner_ == nullptr || device_base_ == nullptr) return Status::OK();
  consumer_stream_ = cuda_stream;
  stream_set_ = true;
  return owner_->StreamWaitCopied(device_buffer_, cuda_stream);
}

Status LoaderBatch::Synchronize() {
  if (owner_ == nullptr || device_base_ == nullptr) return Status::OK();
  return owner_->WaitCopied(device_buffer_);
}

TensorView LoaderBatch::View(int which, bool device) const {
  TensorView v;
  uint8_t* base = device ? device_base_ : host_base_;
  if (base == nullptr || layout_ == nullptr) return v;
  const loader::BatchLayout& l = *layout_;
  v.device = device ? device_ : -1;
  const int64_t B = static_cast<int64_t>(batch_size_), S = static_cast<int64_t>(seq_len_);
  switch (which) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 6: {
      if ((which == 2 && !l.has_position_ids) || (which == 3 && !l.has_segment_ids) ||
          (which == 6 && !l.has_loss_mask)) {
        return TensorView{};
      }
      const size_t offsets[] = {l.input_ids,  l.labels, l.position_ids, l.segment_ids,
                                l.cu_seqlens, 0,        l.loss_mask};
      v.data = base + offsets[which];
      v.dtype = dtype_;
      v.ndim = 2;
      v.shape[0] = B;
      v.shape[1] = S;
      return v;
    }
    case 7:
      if (!l.has_seq_idx) return TensorView{};
      v.data = base + l.seq_idx;
      v.dtype = TokenDType::kInt32;
      v.ndim = 2;
      v.shape[0] = B;
      v.shape[1] = S;
      return v;
    case 9:
      if (l.flex_elements == 0) return TensorView{};
      v.data = base + l.flex_tables;
      v.dtype = TokenDType::kInt32;
      v.ndim = 1;
      v.shape[0] = l.flex_elements;
      return v;
    case 4:
    case 8:
      if (which == 8 && !l.has_cu_seqlens_padded) return TensorView{};
      v.data = base + (which == 8 ? l.cu_seqlens_padded : l.cu_seqlens);
      v.dtype = TokenDType::kInt32;
      v.ndim = 1;
      v.shape[0] = num_cu_seqlens_;
      return v;
    default:
      if (!l.has_mask) return TensorView{};
      v.data = base + l.attention_mask;
      v.dtype = TokenDType::kUint8;
      v.ndim = 3;
      v.shape[0] = B;
      v.shape[1] = S;
      v.shape[2] = S;
      return v;
  }
}

}  // namespace stoker
