#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "troupe/cluster/protocol_version.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// The transport's frame format: an 8-byte header and a payload.
///
/// ```
/// byte 0    version   the sender's protocol major (protocol_major, 1)
/// byte 1    kind      1 = handshake, 2 = message
/// byte 2    lane      0 = control, 1 = ordinary (handshake frames: control)
/// byte 3    flags     0 (reserved; anything else is a violation)
/// byte 4-7  length    payload length in bytes, unsigned big-endian
/// ```
/// A zero-length payload is a valid frame. The length never counts the
/// header. Any deviation is a protocol violation that closes the
/// connection (docs/design/transport.md §2).
///
/// The version byte is a major-only check (the minor travels in the
/// handshake only, protocol_version.hpp): a message frame must carry the
/// receiver's major, since it only follows a handshake that proved both
/// majors equal. A handshake frame may carry any major but 0: the
/// handshake compares the versions itself and refuses another major with a
/// message that names both, instead of a bare "bad frame".
///
/// Pure functions over bytes: no I/O, no allocation beyond the decoder's own
/// buffer, and no input makes them crash (a libFuzzer target feeds them
/// arbitrary bytes).

namespace troupe::cluster {

/// Size of a frame header in bytes.
inline constexpr size_t frame_header_size = 8;

/// Smallest accepted `max_frame_size` (handshake frames must fit).
inline constexpr uint32_t min_max_frame_size = 1024;

/// The largest frame accepted before the handshake completes: a handshake
/// message is at most ~600 bytes, so an unauthenticated peer can never make
/// a connection buffer more than this.
inline constexpr uint32_t handshake_max_frame_size = 1024;

/// What a frame carries.
enum class frame_kind : uint8_t {
  /// A handshake message (handshake.hpp); only before the connection is
  /// established.
  handshake = 1,
  /// A payload for the listener; only after the handshake.
  message = 2,
};

/// "handshake" or "message".
const char* to_string(frame_kind x) noexcept;

/// A decoded frame header.
struct frame_header {
  /// The sender's protocol major.
  uint8_t version = protocol_major;
  frame_kind kind = frame_kind::message;
  cluster::lane lane = lane::ordinary;
  uint32_t length = 0;

  friend bool operator==(const frame_header&, const frame_header&) = default;
};

/// What was wrong with a frame.
enum class frame_error : uint8_t {
  none = 0,
  /// Byte 0 is 0, or a message frame's byte 0 is not the receiver's
  /// protocol major.
  bad_version,
  /// Byte 1 is not a `frame_kind`.
  bad_kind,
  /// Byte 2 is not a `lane`.
  bad_lane,
  /// Byte 3 is not 0.
  bad_flags,
  /// The length exceeds the decoder's maximum frame size.
  oversized,
};

/// "bad_version", "oversized", ...
const char* to_string(frame_error x) noexcept;

/// A protocol violation: what was wrong and a message naming the values,
/// e.g. `frame length 2000000 exceeds max_frame_size 1048576`.
struct frame_violation {
  frame_error code = frame_error::none;
  std::string message;
};

/// Writes the header of a frame into `out[0..8)`.
void encode_header(std::byte* out, const frame_header& header) noexcept;

/// Appends a whole frame (header and `payload`) to `out`, with `major` in
/// the version byte (a test may play a node of another release).
/// `payload` must be smaller than 4 GiB (asserts).
void append_frame(std::vector<std::byte>& out, frame_kind kind,
                  cluster::lane lane, std::span<const std::byte> payload,
                  uint8_t major = protocol_major);

/// Reads and validates a header from `in[0..8)` against `max_frame_size`,
/// for a receiver of protocol major `major`. Returns the violation (code
/// `none` when valid).
frame_violation decode_header(const std::byte* in, uint32_t max_frame_size,
                              frame_header& out,
                              uint8_t major = protocol_major);

/// A complete frame as the decoder yields it. `payload` points into the
/// chunk given to `feed` or into the decoder's own buffer; valid until the
/// next `feed`.
struct frame_view {
  frame_kind kind = frame_kind::message;
  cluster::lane lane = lane::ordinary;
  std::span<const std::byte> payload;
};

/// The outcome of `frame_decoder::next`.
enum class decode_status : uint8_t {
  /// A complete frame (in `decode_result::frame`).
  frame,
  /// The chunk is used up; feed more bytes.
  need_more,
  /// A protocol violation (in `decode_result::violation`); the decoder
  /// stays failed.
  failed,
};

/// The outcome of `frame_decoder::next`.
struct decode_result {
  decode_status status = decode_status::need_more;
  frame_view frame;
  /// Set when `status == failed`.
  const frame_violation* violation = nullptr;
};

/// Splits a byte stream into frames: an incremental decoder fed with
/// arbitrary chunks (one per socket read).
///
/// Frames that lie wholly inside a chunk are returned as views into it (no
/// copy); only a frame that straddles chunks is assembled in the decoder's
/// buffer, which then holds at most one frame (max_frame_size + 8 bytes).
/// The header is validated as soon as its 8 bytes are present, so an
/// oversized length fails before any of its payload is buffered. After a
/// violation the decoder stays failed: the connection must be closed.
///
/// Usage: `feed(chunk)`, then call `next()` until it returns `need_more`
/// (or `failed`). The chunk must stay valid, and unchanged, until the next
/// `feed`; every frame view returned since the last `feed` is valid until
/// the next `feed`.
///
/// Not thread-safe (one per connection).
class frame_decoder {
public:
  /// A decoder accepting payloads up to `max_frame_size` bytes.
  explicit frame_decoder(uint32_t max_frame_size) noexcept
    : max_frame_size_(max_frame_size) {}

  /// Changes the maximum for headers not yet decoded (a connection raises
  /// it from `handshake_max_frame_size` once the peer is authenticated).
  void set_max_frame_size(uint32_t n) noexcept {
    max_frame_size_ = n;
  }

  uint32_t max_frame_size() const noexcept {
    return max_frame_size_;
  }

  /// Hands the decoder the next chunk of the stream. Bytes of an earlier
  /// chunk that `next` has not yet consumed are dropped (call `next` until
  /// `need_more` first).
  void feed(std::span<const std::byte> chunk) noexcept;

  /// The next frame, `need_more`, or the violation.
  decode_result next();

  /// True after a violation.
  bool failed() const noexcept {
    return violation_.code != frame_error::none;
  }

  /// The violation, if `failed()`.
  const frame_violation& violation() const noexcept {
    return violation_;
  }

  /// Bytes of an incomplete frame held from earlier chunks.
  size_t buffered() const noexcept {
    return partial_.size();
  }

private:
  decode_result fail(frame_violation v);
  decode_result continue_partial();

  uint32_t max_frame_size_;
  std::span<const std::byte> chunk_;
  size_t pos_ = 0;
  // An incomplete frame carried over from earlier chunks (header first).
  std::vector<std::byte> partial_;
  frame_header partial_header_;
  // The last frame completed from `partial_`; returned views point here.
  std::vector<std::byte> completed_;
  frame_violation violation_;
};

} // namespace troupe::cluster
