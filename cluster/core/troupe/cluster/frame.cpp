#include "troupe/cluster/frame.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

const char* to_string(frame_kind x) noexcept {
  return x == frame_kind::handshake ? "handshake" : "message";
}

const char* to_string(frame_error x) noexcept {
  switch (x) {
    case frame_error::none:
      return "none";
    case frame_error::bad_version:
      return "bad_version";
    case frame_error::bad_kind:
      return "bad_kind";
    case frame_error::bad_lane:
      return "bad_lane";
    case frame_error::bad_flags:
      return "bad_flags";
    case frame_error::oversized:
      return "oversized";
  }
  return "unknown";
}

void encode_header(std::byte* out, const frame_header& header) noexcept {
  out[0] = std::byte{header.version};
  out[1] = static_cast<std::byte>(header.kind);
  out[2] = static_cast<std::byte>(header.lane);
  out[3] = std::byte{0};
  out[4] = static_cast<std::byte>(header.length >> 24);
  out[5] = static_cast<std::byte>(header.length >> 16);
  out[6] = static_cast<std::byte>(header.length >> 8);
  out[7] = static_cast<std::byte>(header.length);
}

void append_frame(std::vector<std::byte>& out, frame_kind kind,
                  cluster::lane lane, std::span<const std::byte> payload,
                  uint8_t major) {
  TROUPE_ASSERT(payload.size() <= std::numeric_limits<uint32_t>::max());
  auto at = out.size();
  out.resize(at + frame_header_size + payload.size());
  encode_header(
    out.data() + at,
    frame_header{major, kind, lane, static_cast<uint32_t>(payload.size())});
  if (!payload.empty())
    std::memcpy(out.data() + at + frame_header_size, payload.data(),
                payload.size());
}

frame_violation decode_header(const std::byte* in, uint32_t max_frame_size,
                              frame_header& out, uint8_t major) {
  auto byte = [&](size_t i) { return std::to_integer<uint32_t>(in[i]); };
  // A handshake frame of another major is the handshake's to refuse, with
  // a message naming both versions (protocol_version.hpp).
  bool handshake = byte(1) == static_cast<uint32_t>(frame_kind::handshake);
  if (byte(0) == 0 || (!handshake && byte(0) != major))
    return {frame_error::bad_version,
            fmt::format("frame version {} (expected {})", byte(0), major)};
  if (byte(1) != static_cast<uint32_t>(frame_kind::handshake)
      && byte(1) != static_cast<uint32_t>(frame_kind::message))
    return {frame_error::bad_kind, fmt::format("frame kind {}", byte(1))};
  if (byte(2) > static_cast<uint32_t>(lane::ordinary))
    return {frame_error::bad_lane, fmt::format("frame lane {}", byte(2))};
  if (byte(3) != 0)
    return {frame_error::bad_flags,
            fmt::format("frame flags {:#04x} (reserved, must be 0)", byte(3))};
  auto length = (byte(4) << 24) | (byte(5) << 16) | (byte(6) << 8) | byte(7);
  if (length > max_frame_size)
    return {frame_error::oversized,
            fmt::format("frame length {} exceeds max_frame_size {}", length,
                        max_frame_size)};
  out.version = static_cast<uint8_t>(byte(0));
  out.kind = static_cast<frame_kind>(byte(1));
  out.lane = static_cast<cluster::lane>(byte(2));
  out.length = length;
  return {};
}

void frame_decoder::feed(std::span<const std::byte> chunk) noexcept {
  chunk_ = chunk;
  pos_ = 0;
}

decode_result frame_decoder::fail(frame_violation v) {
  violation_ = std::move(v);
  partial_.clear();
  chunk_ = {};
  pos_ = 0;
  return {decode_status::failed, {}, &violation_};
}

decode_result frame_decoder::continue_partial() {
  auto take = [&](size_t wanted) {
    auto n = std::min(wanted, chunk_.size() - pos_);
    partial_.insert(partial_.end(), chunk_.begin() + pos_,
                    chunk_.begin() + pos_ + n);
    pos_ += n;
  };
  if (partial_.size() < frame_header_size) {
    take(frame_header_size - partial_.size());
    if (partial_.size() < frame_header_size)
      return {};
    auto v = decode_header(partial_.data(), max_frame_size_, partial_header_);
    if (v.code != frame_error::none)
      return fail(std::move(v));
  }
  take(frame_header_size + partial_header_.length - partial_.size());
  if (partial_.size() < frame_header_size + partial_header_.length)
    return {};
  // Earlier views into `completed_` are allowed to die only at `feed`, and
  // a straddling frame completes at most once per chunk (at its start).
  std::swap(partial_, completed_);
  partial_.clear();
  return {decode_status::frame,
          frame_view{
            partial_header_.kind, partial_header_.lane,
            std::span<const std::byte>{completed_}.subspan(frame_header_size)},
          nullptr};
}

decode_result frame_decoder::next() {
  if (failed())
    return {decode_status::failed, {}, &violation_};
  if (!partial_.empty())
    return continue_partial();
  auto rest = chunk_.size() - pos_;
  if (rest == 0)
    return {};
  if (rest < frame_header_size)
    return continue_partial();
  frame_header header;
  auto v = decode_header(chunk_.data() + pos_, max_frame_size_, header);
  if (v.code != frame_error::none)
    return fail(std::move(v));
  if (rest < frame_header_size + header.length)
    return continue_partial();
  auto payload = chunk_.subspan(pos_ + frame_header_size, header.length);
  pos_ += frame_header_size + header.length;
  return {decode_status::frame, frame_view{header.kind, header.lane, payload},
          nullptr};
}

} // namespace troupe::cluster
