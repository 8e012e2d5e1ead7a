#include "troupe/cluster/remoting_wire.hpp"

#include <fmt/format.h>

#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

const char* to_string(envelope_kind x) noexcept {
  switch (x) {
    case envelope_kind::message:
      return "message";
    case envelope_kind::watch:
      return "watch";
    case envelope_kind::unwatch:
      return "unwatch";
    case envelope_kind::down:
      return "down";
    case envelope_kind::tagged:
      return "tagged";
  }
  return "unknown";
}

const char* to_string(down_cause x) noexcept {
  switch (x) {
    case down_cause::actor_stopped:
      return "actor_stopped";
    case down_cause::unpublished:
      return "unpublished";
    case down_cause::not_published:
      return "not_published";
    case down_cause::node_removed:
      return "node_removed";
    case down_cause::node_quarantined:
      return "node_quarantined";
  }
  return "unknown";
}

const char* to_string(remoting_errc x) noexcept {
  switch (x) {
    case remoting_errc::none:
      return "none";
    case remoting_errc::unregistered_type:
      return "unregistered_type";
    case remoting_errc::serialization_failed:
      return "serialization_failed";
    case remoting_errc::undecodable:
      return "undecodable";
    case remoting_errc::invalid_name:
      return "invalid_name";
    case remoting_errc::name_taken:
      return "name_taken";
    case remoting_errc::invalid_ref:
      return "invalid_ref";
    case remoting_errc::invalid_actor:
      return "invalid_actor";
    case remoting_errc::not_running:
      return "not_running";
  }
  return "unknown";
}

namespace {

void put_u8(std::vector<char>& out, uint8_t x) {
  out.push_back(static_cast<char>(x));
}

void put_name(std::vector<char>& out, std::string_view name) {
  TROUPE_ASSERT(name.size() <= max_name_size);
  put_u8(out, static_cast<uint8_t>(name.size()));
  out.insert(out.end(), name.begin(), name.end());
}

// Reads a payload front to back; every read checks the bytes left.
class reader {
public:
  explicit reader(std::span<const std::byte> in) : in_(in) {}

  bool u8(uint8_t& x) {
    if (left() < 1)
      return fail("missing byte");
    x = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }

  bool u16(uint16_t& x) {
    uint64_t v = 0;
    if (!big_endian(2, v))
      return false;
    x = static_cast<uint16_t>(v);
    return true;
  }

  bool u64(uint64_t& x) {
    return big_endian(8, x);
  }

  bool bytes(size_t n, std::string_view& out, const char* what) {
    if (n > left())
      return fail(
        fmt::format("{} length {} exceeds the {} bytes left", what, n, left()));
    out = std::string_view{reinterpret_cast<const char*>(in_.data() + pos_), n};
    pos_ += n;
    return true;
  }

  bool name(std::string_view& out, const char* what) {
    uint8_t n = 0;
    return u8(n) && bytes(n, out, what);
  }

  std::span<const std::byte> rest() {
    auto result = in_.subspan(pos_);
    pos_ = in_.size();
    return result;
  }

  size_t left() const noexcept {
    return in_.size() - pos_;
  }

  bool fail(std::string why) {
    if (error_.empty())
      error_ = std::move(why);
    return false;
  }

  const std::string& error() const noexcept {
    return error_;
  }

private:
  bool big_endian(size_t n, uint64_t& x) {
    if (left() < n)
      return fail(fmt::format("missing {}-byte number", n));
    x = 0;
    for (size_t i = 0; i < n; ++i)
      x = (x << 8) | static_cast<uint8_t>(in_[pos_++]);
    return true;
  }

  std::span<const std::byte> in_;
  size_t pos_ = 0;
  std::string error_;
};

runtime::error undecodable(const std::string& why) {
  return runtime::make_error(remoting_errc::undecodable,
                             "remoting payload: " + why);
}

bool decode_body(reader& in, envelope_view& v) {
  switch (v.kind) {
    case envelope_kind::message:
      if (!in.name(v.name, "target name")
          || !in.name(v.reply_to, "reply-to name"))
        return false;
      if (v.name.empty())
        return in.fail("empty target name");
      v.body = in.rest();
      return true;
    case envelope_kind::tagged: {
      uint16_t tag_size = 0;
      if (!in.name(v.name, "target name") || !in.u16(tag_size)
          || !in.bytes(tag_size, v.tag, "tag"))
        return false;
      if (v.name.empty())
        return in.fail("empty target name");
      v.body = in.rest();
      return true;
    }
    case envelope_kind::watch:
    case envelope_kind::unwatch:
      if (!in.name(v.name, "name"))
        return false;
      return v.name.empty() ? in.fail("empty name") : true;
    case envelope_kind::down: {
      uint8_t cause = 0;
      uint16_t reason_size = 0;
      if (!in.name(v.name, "name") || !in.u8(cause) || !in.u64(v.seq)
          || !in.u16(reason_size) || !in.bytes(reason_size, v.reason, "reason"))
        return false;
      if (cause >= down_cause_count)
        return in.fail(fmt::format("unknown down cause {}", cause));
      v.cause = static_cast<down_cause>(cause);
      return v.name.empty() ? in.fail("empty name") : true;
    }
  }
  return in.fail("unknown kind");
}

} // namespace

void append_message_header(std::vector<char>& out, std::string_view target,
                           std::string_view reply_to) {
  put_u8(out, static_cast<uint8_t>(envelope_kind::message));
  put_name(out, target);
  put_name(out, reply_to);
}

void append_tagged_header(std::vector<char>& out, std::string_view target,
                          std::string_view tag) {
  TROUPE_ASSERT(tag.size() <= max_tag_size);
  put_u8(out, static_cast<uint8_t>(envelope_kind::tagged));
  put_name(out, target);
  put_u8(out, static_cast<uint8_t>(tag.size() >> 8));
  put_u8(out, static_cast<uint8_t>(tag.size()));
  out.insert(out.end(), tag.begin(), tag.end());
}

void append_watch(std::vector<char>& out, envelope_kind kind,
                  std::string_view name) {
  TROUPE_ASSERT(kind == envelope_kind::watch || kind == envelope_kind::unwatch);
  put_u8(out, static_cast<uint8_t>(kind));
  put_name(out, name);
}

void append_down(std::vector<char>& out, std::string_view name,
                 down_cause cause, uint64_t seq, std::string_view reason) {
  put_u8(out, static_cast<uint8_t>(envelope_kind::down));
  put_name(out, name);
  put_u8(out, static_cast<uint8_t>(cause));
  for (int shift = 56; shift >= 0; shift -= 8)
    put_u8(out, static_cast<uint8_t>(seq >> shift));
  reason = reason.substr(0, max_reason_size);
  put_u8(out, static_cast<uint8_t>(reason.size() >> 8));
  put_u8(out, static_cast<uint8_t>(reason.size()));
  out.insert(out.end(), reason.begin(), reason.end());
}

runtime::expected<envelope_view>
decode_envelope(std::span<const std::byte> payload) {
  reader in{payload};
  uint8_t kind = 0;
  if (!in.u8(kind))
    return undecodable("empty payload");
  if (kind < 1 || kind > 5)
    return undecodable(fmt::format("unknown kind {}", kind));
  envelope_view v;
  v.kind = static_cast<envelope_kind>(kind);
  if (!decode_body(in, v))
    return undecodable(fmt::format("{}: {}", to_string(v.kind), in.error()));
  if (in.left() != 0)
    return undecodable(
      fmt::format("{}: {} trailing bytes", to_string(v.kind), in.left()));
  return v;
}

runtime::error validate_published_name(std::string_view name) {
  auto bad = [&](const char* why) {
    return runtime::make_error(
      remoting_errc::invalid_name,
      fmt::format("cannot publish \"{}\": {}", name.substr(0, 64), why));
  };
  if (name.empty())
    return bad("the name is empty");
  if (name.size() > max_name_size)
    return bad("the name is longer than 255 bytes");
  if (name.front() == '$')
    return bad("names starting with '$' are reserved for reply references");
  return {};
}

} // namespace troupe::cluster
