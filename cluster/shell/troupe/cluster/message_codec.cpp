#include "troupe/cluster/message_codec.hpp"

#include <array>
#include <cstdlib>
#include <memory>
#include <string>

#include <cxxabi.h>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/detail/dynamic_message_data.hpp>
#include <caf/type_erased_value.hpp>
#include <caf/type_nr.hpp>
#include <caf/uniform_type_info_map.hpp>
#include <fmt/format.h>

#include "troupe/cluster/remoting_errc.hpp"

namespace troupe::cluster {

namespace {

// CAF's built-in types that must not travel: actor handles and system
// messages mean nothing on another node over this transport, and loading
// them would make the deserializer look up actors and proxies.
constexpr std::array refused_type_nrs{
  caf::type_nr<caf::actor>::value,
  caf::type_nr<std::vector<caf::actor>>::value,
  caf::type_nr<caf::actor_addr>::value,
  caf::type_nr<std::vector<caf::actor_addr>>::value,
  caf::type_nr<caf::down_msg>::value,
  caf::type_nr<caf::downstream_msg>::value,
  caf::type_nr<caf::exit_msg>::value,
  caf::type_nr<caf::group>::value,
  caf::type_nr<caf::group_down_msg>::value,
  caf::type_nr<caf::message>::value,
  caf::type_nr<caf::open_stream_msg>::value,
  caf::type_nr<caf::strong_actor_ptr>::value,
  caf::type_nr<caf::upstream_msg>::value,
  caf::type_nr<caf::weak_actor_ptr>::value,
};

bool is_refused(uint16_t nr) {
  for (auto x : refused_type_nrs)
    if (x == nr)
      return true;
  return false;
}

std::string demangle(const std::type_info* ti) {
  if (ti == nullptr)
    return "?";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name{
    abi::__cxa_demangle(ti->name(), nullptr, nullptr, &status), &std::free};
  return status == 0 && name ? std::string{name.get()} : ti->name();
}

// Appends what caf::binary_serializer writes for `x`: its bytes in network
// order (big-endian).
template <class T>
void put_network_order(std::vector<char>& out, T x) {
  for (int shift = (sizeof(T) - 1) * 8; shift >= 0; shift -= 8)
    out.push_back(
      static_cast<char>((static_cast<uint64_t>(x) >> shift) & 0xff));
}

// Appends element `i` of `msg` as caf::binary_serializer would if it is of
// a common built-in type (strings, atoms, 32- and 64-bit integers); false
// for any other type. The hot path of every remote send: CAF's serializer
// goes through a virtual call and a caf::error per field. The format
// (checked against CAF's serializer by message_codec_test): integers and
// atoms in network order, a string as its length in CAF's varbyte
// encoding (7 bits per byte, low first, high bit: more follows) and its
// bytes.
bool put_builtin(const caf::message& msg, size_t i, std::vector<char>& out) {
  switch (msg.type(i).first) {
    case caf::type_nr<std::string>::value: {
      auto& x = msg.get_as<std::string>(i);
      auto n = static_cast<uint32_t>(x.size());
      while (n > 0x7f) {
        out.push_back(static_cast<char>((n & 0x7f) | 0x80));
        n >>= 7;
      }
      out.push_back(static_cast<char>(n));
      out.insert(out.end(), x.begin(), x.end());
      return true;
    }
    case caf::type_nr<caf::atom_value>::value:
      put_network_order(out,
                        static_cast<uint64_t>(msg.get_as<caf::atom_value>(i)));
      return true;
    case caf::type_nr<uint64_t>::value:
      put_network_order(out, msg.get_as<uint64_t>(i));
      return true;
    case caf::type_nr<int64_t>::value:
      put_network_order(out, static_cast<uint64_t>(msg.get_as<int64_t>(i)));
      return true;
    case caf::type_nr<uint32_t>::value:
      put_network_order(out, msg.get_as<uint32_t>(i));
      return true;
    case caf::type_nr<int32_t>::value:
      put_network_order(out, static_cast<uint32_t>(msg.get_as<int32_t>(i)));
      return true;
    default:
      return false;
  }
}

runtime::error fail(remoting_errc code, std::string message) {
  return runtime::make_error(code, std::move(message));
}

// Checks element `i` of `msg`; sets `name` to its registered name.
runtime::error check_element(caf::actor_system& sys, const caf::message& msg,
                             size_t i, const std::string*& name) {
  auto rtti = msg.type(i);
  auto& types = sys.types();
  name = &types.portable_name(rtti);
  if (name == &types.default_type_name())
    return fail(remoting_errc::unregistered_type,
                fmt::format("element {} of the message has type {}, which "
                            "is not registered with add_message_type, so it "
                            "cannot travel; nothing was sent",
                            i, demangle(rtti.second)));
  if (rtti.first != 0 && is_refused(rtti.first))
    return fail(remoting_errc::serialization_failed,
                fmt::format("element {} of the message is a {} ({}); actor "
                            "handles and CAF system messages do not travel "
                            "over the cluster transport (send a remote_ref); "
                            "nothing was sent",
                            i, *name, demangle(rtti.second)));
  return {};
}

// A binary_deserializer that refuses sequence lengths the remaining bytes
// cannot hold (at most 8 elements per byte, for vector<bool>), so a
// malicious length never makes CAF resize a container to gigabytes.
class bounded_deserializer final : public caf::deserializer {
public:
  bounded_deserializer(caf::actor_system& sys, std::span<const std::byte> in)
    : caf::deserializer(sys),
      inner_(sys, reinterpret_cast<const char*>(in.data()), in.size()) {}

  caf::error begin_object(uint16_t& nr, std::string& name) override {
    return inner_.begin_object(nr, name);
  }

  caf::error end_object() override {
    return inner_.end_object();
  }

  caf::error begin_sequence(size_t& num) override {
    if (auto err = inner_.begin_sequence(num))
      return err;
    if (num / 8 > inner_.remaining())
      return caf::make_error(caf::sec::end_of_stream);
    return caf::none;
  }

  caf::error end_sequence() override {
    return inner_.end_sequence();
  }

  caf::error apply_raw(size_t num_bytes, void* data) override {
    return inner_.apply_raw(num_bytes, data);
  }

  size_t remaining() const noexcept {
    return inner_.remaining();
  }

protected:
  // clang-format off
  caf::error apply_impl(int8_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(uint8_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(int16_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(uint16_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(int32_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(uint32_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(int64_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(uint64_t& x) override { return inner_.apply(x); }
  caf::error apply_impl(float& x) override { return inner_.apply(x); }
  caf::error apply_impl(double& x) override { return inner_.apply(x); }
  caf::error apply_impl(long double& x) override { return inner_.apply(x); }
  caf::error apply_impl(std::string& x) override { return inner_.apply(x); }
  caf::error apply_impl(std::u16string& x) override { return inner_.apply(x); }
  caf::error apply_impl(std::u32string& x) override { return inner_.apply(x); }
  // clang-format on

private:
  caf::binary_deserializer inner_;
};

// Reads the type section of a body (big-endian, every read checked).
class type_reader {
public:
  explicit type_reader(std::span<const std::byte> in) : in_(in) {}

  bool u8(uint8_t& x) {
    if (pos_ + 1 > in_.size())
      return false;
    x = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }

  bool u16(uint16_t& x) {
    uint8_t hi = 0, lo = 0;
    if (!u8(hi) || !u8(lo))
      return false;
    x = static_cast<uint16_t>((hi << 8) | lo);
    return true;
  }

  bool name(std::string_view& x) {
    uint8_t n = 0;
    if (!u8(n) || pos_ + n > in_.size())
      return false;
    x = std::string_view{reinterpret_cast<const char*>(in_.data() + pos_), n};
    pos_ += n;
    return true;
  }

  std::span<const std::byte> rest() const {
    return in_.subspan(pos_);
  }

private:
  std::span<const std::byte> in_;
  size_t pos_ = 0;
};

void put_u16(std::vector<char>& out, uint16_t x) {
  out.push_back(static_cast<char>(x >> 8));
  out.push_back(static_cast<char>(x & 0xFF));
}

// Makes an empty value for element `i` of a body, or an error.
runtime::expected<caf::type_erased_value_ptr>
make_element(caf::actor_system& sys, type_reader& in, size_t i,
             decode_cache* cache) {
  auto bad = [&](const std::string& why) {
    return fail(remoting_errc::undecodable,
                fmt::format("message element {}: {}", i, why));
  };
  uint16_t nr = 0;
  if (!in.u16(nr))
    return bad("truncated type number");
  if (nr != 0) {
    if (nr >= caf::type_nrs || is_refused(nr))
      return bad(fmt::format("type number {} is unknown or refused", nr));
    return sys.types().make_value(nr);
  }
  std::string_view name;
  if (!in.name(name))
    return bad("truncated type name");
  auto value = cache != nullptr ? cache->make(sys, name)
                                : sys.types().make_value(std::string{name});
  if (!value)
    return bad(fmt::format("type \"{}\" is not registered on this node",
                           name.substr(0, 64)));
  return value;
}

} // namespace

caf::type_erased_value_ptr decode_cache::make(caf::actor_system& sys,
                                              std::string_view name) {
  if (&sys != sys_) {
    protos_.clear();
    sys_ = &sys;
  }
  for (auto& [n, proto] : protos_)
    if (n == name)
      return proto->copy();
  auto value = sys.types().make_value(std::string{name});
  if (value && protos_.size() < max_entries)
    protos_.emplace_back(std::string{name}, value->copy());
  return value;
}

runtime::error check_message(caf::actor_system& sys, const caf::message& msg) {
  const std::string* name = nullptr;
  for (size_t i = 0; i < msg.size(); ++i)
    if (auto err = check_element(sys, msg, i, name))
      return err;
  return {};
}

runtime::error encode_message(caf::actor_system& sys, const caf::message& msg,
                              std::vector<char>& out) {
  static const caf::message none;
  return encode_message(sys, none, msg, out);
}

runtime::error encode_message(caf::actor_system& sys, const caf::message& head,
                              const caf::message& body,
                              std::vector<char>& out) {
  auto start = out.size();
  auto failed = [&](runtime::error err) {
    out.resize(start);
    return err;
  };
  auto size = head.size() + body.size();
  if (size > UINT16_MAX)
    return failed(
      fail(remoting_errc::serialization_failed,
           fmt::format("a message of {} elements is too long", size)));
  // Element `i` of the whole message: its part and its index there.
  auto part = [&](size_t i) -> std::pair<const caf::message*, size_t> {
    return i < head.size() ? std::pair{&head, i}
                           : std::pair{&body, i - head.size()};
  };
  // The type section, written by hand (the hot path: CAF's serializer
  // returns a caf::error per field), then the values.
  put_u16(out, static_cast<uint16_t>(size));
  for (size_t i = 0; i < size; ++i) {
    auto [msg, j] = part(i);
    const std::string* name = nullptr;
    if (auto err = check_element(sys, *msg, j, name)) {
      if (msg == &body && !head.empty())
        err.message += fmt::format(" (element {} of the whole message)", i);
      return failed(std::move(err));
    }
    auto nr = msg->type(j).first;
    put_u16(out, nr);
    if (nr == 0) {
      if (name->size() > 255)
        return failed(fail(remoting_errc::serialization_failed,
                           fmt::format("element {}: the registered type name "
                                       "\"{}\" is longer than 255 bytes",
                                       i, name->substr(0, 64))));
      out.push_back(static_cast<char>(name->size()));
      out.insert(out.end(), name->begin(), name->end());
    }
  }
  for (size_t i = 0; i < size; ++i) {
    auto [msg, j] = part(i);
    if (put_builtin(*msg, j, out))
      continue;
    // CAF's serializer appends at the end of `out` as it is now.
    caf::binary_serializer sink{sys, out};
    if (auto err = msg->save(j, sink))
      return failed(
        fail(remoting_errc::serialization_failed,
             fmt::format("element {} ({}): {}", i,
                         demangle(msg->type(j).second), sys.render(err))));
  }
  return {};
}

namespace {

// `decode_message` with `from` (nullptr: without the sender element).
runtime::expected<caf::message> decode_body(caf::actor_system& sys,
                                            std::span<const std::byte> body,
                                            const remote_ref* from,
                                            decode_cache* cache) {
  try {
    type_reader types{body};
    uint16_t count = 0;
    if (!types.u16(count))
      return fail(remoting_errc::undecodable, "truncated element count");
    caf::detail::dynamic_message_data::elements elements;
    size_t first = from != nullptr ? 1 : 0;
    elements.reserve(count + first);
    if (from != nullptr)
      elements.push_back(caf::make_type_erased_value<remote_ref>(*from));
    for (size_t i = 0; i < count; ++i) {
      auto value = make_element(sys, types, i, cache);
      if (!value)
        return value.error();
      elements.push_back(std::move(*value));
    }
    bounded_deserializer in{sys, types.rest()};
    for (size_t i = first; i < elements.size(); ++i)
      if (auto err = elements[i]->load(in))
        return fail(remoting_errc::undecodable,
                    fmt::format("message element {} ({}): {}", i - first,
                                demangle(elements[i]->type().second),
                                sys.render(err)));
    if (in.remaining() != 0)
      return fail(remoting_errc::undecodable,
                  fmt::format("{} trailing bytes after {} elements",
                              in.remaining(), count));
    if (elements.empty())
      return caf::message{};
    // A new message_data starts with one reference, which the message
    // adopts.
    auto* data = new caf::detail::dynamic_message_data(std::move(elements));
    return caf::message{caf::message::data_ptr{data, false}};
  } catch (const std::exception& e) {
    return fail(remoting_errc::undecodable,
                fmt::format("deserializer threw: {}", e.what()));
  }
}

} // namespace

runtime::expected<caf::message> decode_message(caf::actor_system& sys,
                                               std::span<const std::byte> body,
                                               const remote_ref& from,
                                               decode_cache* cache) {
  return decode_body(sys, body, &from, cache);
}

runtime::expected<caf::message>
decode_message_elements(caf::actor_system& sys, std::span<const std::byte> body,
                        decode_cache* cache) {
  return decode_body(sys, body, nullptr, cache);
}

} // namespace troupe::cluster
