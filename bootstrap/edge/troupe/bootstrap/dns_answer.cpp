#include "troupe/bootstrap/dns_answer.hpp"

#include <array>
#include <memory>
#include <optional>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <ares.h>
#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"

namespace troupe::bootstrap::dns {

namespace {

constexpr size_t header_size = 12;
constexpr uint16_t class_in = 1;

runtime::error malformed(std::string what) {
  return runtime::make_error(errc::bad_discovery_answer,
                             fmt::format("malformed answer: {}", what));
}

uint16_t read_u16(std::span<const unsigned char> msg, size_t at) {
  return static_cast<uint16_t>((msg[at] << 8) | msg[at + 1]);
}

// Reads a message section by section; every read is bounds-checked, and a
// failed read leaves `error` set.
class message_reader {
public:
  explicit message_reader(std::span<const unsigned char> msg) : msg_(msg) {}

  size_t pos = header_size;
  std::optional<std::string> error;

  // The (possibly compressed) name at `pos`, decoded by c-ares.
  std::optional<std::string> name(std::string_view where) {
    char* text = nullptr;
    long used = 0;
    if (pos >= msg_.size()
        || ares_expand_name(msg_.data() + pos, msg_.data(),
                            static_cast<int>(msg_.size()), &text, &used)
             != ARES_SUCCESS) {
      error = fmt::format("{}: bad name at byte {}", where, pos);
      return std::nullopt;
    }
    std::unique_ptr<char, void (*)(void*)> owned{text, ares_free_string};
    pos += static_cast<size_t>(used);
    return std::string{text};
  }

  // Type, class, TTL and length of a record whose name was read; the data
  // starts at `pos` afterwards.
  struct fixed {
    uint16_t type = 0;
    uint16_t klass = 0;
    uint16_t length = 0;
  };

  std::optional<fixed> record(std::string_view where) {
    if (pos + 10 > msg_.size()) {
      error = fmt::format("{}: record header runs past the end ({} bytes)",
                          where, msg_.size());
      return std::nullopt;
    }
    fixed f{read_u16(msg_, pos), read_u16(msg_, pos + 2),
            read_u16(msg_, pos + 8)};
    pos += 10;
    if (pos + f.length > msg_.size()) {
      error = fmt::format("{}: {} bytes of data run past the end ({} bytes)",
                          where, f.length, msg_.size());
      return std::nullopt;
    }
    return f;
  }

  bool skip_records(uint16_t count, std::string_view section) {
    for (uint16_t i = 0; i < count; ++i) {
      auto where = fmt::format("{} record {}", section, i + 1);
      if (!name(where))
        return false;
      auto f = record(where);
      if (!f)
        return false;
      pos += f->length;
    }
    return true;
  }

  std::span<const unsigned char> data(size_t length) const {
    return msg_.subspan(pos, length);
  }

private:
  std::span<const unsigned char> msg_;
};

std::string ntop(int family, const void* bytes) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (ares_inet_ntop(family, bytes, text.data(),
                     static_cast<ares_socklen_t>(text.size()))
      == nullptr)
    return {};
  return text.data();
}

// The A and AAAA records of the additional section, by owner name.
runtime::expected<std::map<std::string, address_set>>
read_additional(std::span<const unsigned char> msg) {
  if (msg.size() < header_size)
    return malformed(
      fmt::format("{} bytes, shorter than a DNS header", msg.size()));
  message_reader in{msg};
  for (uint16_t i = 0, n = read_u16(msg, 4); i < n; ++i) {
    if (!in.name(fmt::format("question {}", i + 1)))
      return malformed(*in.error);
    in.pos += 4;
    if (in.pos > msg.size())
      return malformed(fmt::format("question {} runs past the end ({} bytes)",
                                   i + 1, msg.size()));
  }
  if (!in.skip_records(read_u16(msg, 6), "answer")
      || !in.skip_records(read_u16(msg, 8), "authority"))
    return malformed(*in.error);
  std::map<std::string, address_set> out;
  for (uint16_t i = 0, n = read_u16(msg, 10); i < n; ++i) {
    auto where = fmt::format("additional record {}", i + 1);
    auto owner = in.name(where);
    auto f = owner ? in.record(where) : std::nullopt;
    if (!f)
      return malformed(*in.error);
    auto bytes = in.data(f->length);
    in.pos += f->length;
    if (f->klass != class_in)
      continue;
    if (f->type == static_cast<uint16_t>(query_type::a) && bytes.size() == 4)
      out[lower_case(*owner)].ipv4.push_back(ntop(AF_INET, bytes.data()));
    else if (f->type == static_cast<uint16_t>(query_type::aaaa)
             && bytes.size() == 16)
      out[lower_case(*owner)].ipv6.push_back(ntop(AF_INET6, bytes.data()));
    else if (f->type == static_cast<uint16_t>(query_type::a)
             || f->type == static_cast<uint16_t>(query_type::aaaa))
      return malformed(fmt::format("{} ({}) has {} bytes of address", where,
                                   *owner, f->length));
  }
  return out;
}

} // namespace

const char* to_string(query_type x) noexcept {
  switch (x) {
    case query_type::a:
      return "A";
    case query_type::aaaa:
      return "AAAA";
    case query_type::srv:
      return "SRV";
  }
  return "?";
}

query_outcome classify(int status) noexcept {
  switch (status) {
    case ARES_SUCCESS:
      return query_outcome::answered;
    case ARES_ENODATA:
    case ARES_ENOTFOUND:
      return query_outcome::nothing_found;
    case ARES_EREFUSED:
    case ARES_ENOTIMP:
    case ARES_EFORMERR:
    case ARES_EBADNAME:
    case ARES_EBADQUERY:
      return query_outcome::refused;
    case ARES_EBADRESP:
      return query_outcome::bad_answer;
    default:
      return query_outcome::unavailable;
  }
}

std::string describe_status(int status) {
  switch (status) {
    case ARES_ENODATA:
      return "no records of the type (NODATA)";
    case ARES_ENOTFOUND:
      return "no such name (NXDOMAIN)";
    case ARES_ESERVFAIL:
      return "the server failed to answer (SERVFAIL)";
    case ARES_ETIMEOUT:
      return "no answer (timeout)";
    case ARES_ECONNREFUSED:
      return "could not contact the server (connection refused)";
    case ARES_EREFUSED:
      return "the server refused the query (REFUSED: it does not serve the "
             "name and does not recurse for this client)";
    case ARES_ENOTIMP:
      return "the server does not implement the query (NOTIMP)";
    case ARES_EFORMERR:
      return "the server found the query malformed (FORMERR)";
    case ARES_EBADNAME:
    case ARES_EBADQUERY:
      return "the name is not a valid DNS name";
    case ARES_EBADRESP:
      return "malformed answer";
    default:
      return fmt::format("{} (c-ares status {})", ares_strerror(status),
                         status);
  }
}

runtime::expected<std::vector<std::string>>
parse_addresses(std::span<const unsigned char> answer, query_type type) {
  hostent* host = nullptr;
  auto len = static_cast<int>(answer.size());
  auto rc
    = type == query_type::a
        ? ares_parse_a_reply(answer.data(), len, &host, nullptr, nullptr)
        : ares_parse_aaaa_reply(answer.data(), len, &host, nullptr, nullptr);
  std::unique_ptr<hostent, void (*)(hostent*)> owned{host, ares_free_hostent};
  if (rc == ARES_ENODATA)
    return std::vector<std::string>{};
  if (rc != ARES_SUCCESS || host == nullptr)
    return malformed(
      fmt::format("{} records: {}", to_string(type), ares_strerror(rc)));
  std::vector<std::string> out;
  for (char** addr = host->h_addr_list; addr != nullptr && *addr != nullptr;
       ++addr)
    out.push_back(ntop(host->h_addrtype, *addr));
  return out;
}

runtime::expected<srv_answer> parse_srv(std::span<const unsigned char> answer) {
  ares_srv_reply* head = nullptr;
  auto rc = ares_parse_srv_reply(answer.data(), static_cast<int>(answer.size()),
                                 &head);
  std::unique_ptr<ares_srv_reply, void (*)(void*)> owned{head, ares_free_data};
  if (rc != ARES_SUCCESS && rc != ARES_ENODATA)
    return malformed(fmt::format("SRV records: {}", ares_strerror(rc)));
  srv_answer out;
  for (auto* r = head; r != nullptr; r = r->next) {
    std::string target = r->host != nullptr ? r->host : "";
    if (target == ".")
      target.clear();
    out.records.push_back(srv_record{lower_case(std::move(target)), r->port,
                                     r->priority, r->weight});
  }
  auto additional = read_additional(answer);
  if (!additional)
    return additional.error();
  out.additional = std::move(*additional);
  return out;
}

std::string lower_case(std::string name) {
  for (auto& c : name)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return name;
}

} // namespace troupe::bootstrap::dns
