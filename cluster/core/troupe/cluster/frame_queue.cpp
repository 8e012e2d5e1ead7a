#include "troupe/cluster/frame_queue.hpp"

#include <algorithm>
#include <cstring>

#include "troupe/cluster/frame.hpp"
#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

size_t frame_queue::push(lane lane, uint64_t uid,
                         std::span<const std::byte> payload) {
  size_t dropped = 0;
  if (size() >= max_frames_) {
    pop(1);
    dropped = 1;
  }
  compact();
  auto before = bytes_.size();
  append_frame(bytes_, frame_kind::message, lane, payload);
  metas_.push_back(meta{static_cast<uint32_t>(bytes_.size() - before), uid});
  return dropped;
}

std::span<const std::byte> frame_queue::front(size_t max_bytes,
                                              size_t& frames) const {
  size_t total = 0;
  frames = 0;
  for (auto i = meta_head_; i < metas_.size(); ++i) {
    if (frames > 0 && total + metas_[i].size > max_bytes)
      break;
    total += metas_[i].size;
    ++frames;
  }
  return std::span<const std::byte>{bytes_}.subspan(head_ + written_,
                                                    total - written_);
}

size_t frame_queue::consume(size_t n) {
  size_t done = 0;
  n += written_;
  written_ = 0;
  while (meta_head_ < metas_.size() && n >= metas_[meta_head_].size) {
    n -= metas_[meta_head_].size;
    head_ += metas_[meta_head_++].size;
    ++done;
  }
  if (meta_head_ < metas_.size())
    written_ = n;
  pop(0); // rewinds when empty
  return done;
}

size_t frame_queue::drop_partial() {
  if (written_ == 0)
    return 0;
  pop(1);
  return 1;
}

void frame_queue::pop(size_t n) {
  n = std::min(n, size());
  if (n > 0)
    written_ = 0;
  for (size_t i = 0; i < n; ++i)
    head_ += metas_[meta_head_++].size;
  if (meta_head_ == metas_.size()) {
    // Empty: rewind instead of moving anything.
    bytes_.clear();
    metas_.clear();
    head_ = 0;
    meta_head_ = 0;
  }
}

void frame_queue::compact() {
  // Dropping from the front (overflow while no connection drains the
  // queue) leaves a dead prefix; move the live part down once the prefix
  // is at least half the buffer, which keeps appends amortized O(1).
  if (head_ == 0 || head_ < bytes_.size() / 2)
    return;
  bytes_.erase(bytes_.begin(), bytes_.begin() + static_cast<ptrdiff_t>(head_));
  metas_.erase(metas_.begin(),
               metas_.begin() + static_cast<ptrdiff_t>(meta_head_));
  head_ = 0;
  meta_head_ = 0;
}

size_t frame_queue::remove_if(const std::function<bool(uint64_t)>& pred) {
  size_t removed = 0;
  size_t out = head_; // write position for kept bytes
  size_t out_meta = meta_head_;
  size_t in = head_;
  for (auto i = meta_head_; i < metas_.size(); ++i) {
    auto m = metas_[i];
    if (pred(m.uid) && !(i == meta_head_ && written_ > 0)) {
      ++removed;
    } else {
      if (out != in)
        std::memmove(bytes_.data() + out, bytes_.data() + in, m.size);
      metas_[out_meta++] = m;
      out += m.size;
    }
    in += m.size;
  }
  bytes_.resize(out);
  metas_.resize(out_meta);
  if (meta_head_ == metas_.size())
    clear();
  return removed;
}

size_t frame_queue::clear() noexcept {
  auto n = size();
  bytes_.clear();
  metas_.clear();
  head_ = 0;
  meta_head_ = 0;
  written_ = 0;
  return n;
}

void frame_queue::swap(frame_queue& other) noexcept {
  std::swap(max_frames_, other.max_frames_);
  bytes_.swap(other.bytes_);
  std::swap(head_, other.head_);
  metas_.swap(other.metas_);
  std::swap(meta_head_, other.meta_head_);
  std::swap(written_, other.written_);
}

} // namespace troupe::cluster
