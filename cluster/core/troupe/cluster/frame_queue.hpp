#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "troupe/cluster/transport.hpp"

/// @file
/// A bounded queue of encoded frames for one peer and lane.

namespace troupe::cluster {

/// Message frames waiting to be written to one peer on one lane, encoded
/// back to back in one buffer so that a whole batch goes out in one write
/// (no per-frame buffer, no allocation once the buffer has grown).
///
/// Bounded by a number of frames: `push` beyond the bound drops the oldest
/// frame (Akka Artery's outbound queues drop too, but the newest; troupe
/// drops the oldest so that fresh state, e.g. the latest gossip, wins).
/// Each frame carries the uid it is addressed to (0: any incarnation), so
/// frames for an incarnation that turned out to be gone can be removed.
///
/// A plain value; not thread-safe.
class frame_queue {
public:
  /// A queue of at most `max_frames` frames (at least 1).
  explicit frame_queue(size_t max_frames = 1)
    : max_frames_(max_frames == 0 ? 1 : max_frames) {}

  /// Appends a message frame with `payload` for `uid` on `lane`. Returns
  /// the number of frames dropped to make room (0 or 1).
  size_t push(lane lane, uint64_t uid, std::span<const std::byte> payload);

  /// Frames in the queue.
  size_t size() const noexcept {
    return metas_.size() - meta_head_;
  }

  bool empty() const noexcept {
    return size() == 0;
  }

  /// Encoded bytes in the queue not yet written.
  size_t bytes() const noexcept {
    return bytes_.size() - head_ - written_;
  }

  /// The unwritten bytes of the first frames, contiguous: as many whole
  /// frames as fit into `max_bytes`, but at least one (a frame larger than
  /// `max_bytes` goes alone); when the first frame was partly written
  /// (`consume`), the span starts behind that part. `frames` receives the
  /// number of frames the span touches. Valid until the next mutation.
  std::span<const std::byte> front(size_t max_bytes, size_t& frames) const;

  /// Marks `n` more bytes from the front as written (a short write, e.g.
  /// a non-blocking send that filled the socket buffer) and removes the
  /// frames that are now written whole; returns how many. `n` beyond
  /// `bytes()` counts as `bytes()`.
  size_t consume(size_t n);

  /// Bytes of the first frame already written (0: none).
  size_t written_prefix() const noexcept {
    return written_;
  }

  /// Removes the first frame if it was partly written: the rest can never
  /// follow its beginning on a new connection. Returns 1 if it removed it.
  size_t drop_partial();

  /// Removes the first `n` frames (at most `size()`), the partly written
  /// one included.
  void pop(size_t n);

  /// Removes every frame whose uid satisfies `pred`, except a partly
  /// written first frame; returns how many.
  size_t remove_if(const std::function<bool(uint64_t)>& pred);

  /// Removes every frame; returns how many.
  size_t clear() noexcept;

  /// Exchanges contents and bounds with `other` (buffers keep their
  /// capacity, so a pair of queues swapped back and forth stops
  /// allocating).
  void swap(frame_queue& other) noexcept;

private:
  struct meta {
    uint32_t size; // encoded size, header included
    uint64_t uid;
  };

  void compact();

  size_t max_frames_;
  std::vector<std::byte> bytes_;
  size_t head_ = 0;
  std::vector<meta> metas_;
  size_t meta_head_ = 0;
  // Bytes of the first frame already written.
  size_t written_ = 0;
};

} // namespace troupe::cluster
