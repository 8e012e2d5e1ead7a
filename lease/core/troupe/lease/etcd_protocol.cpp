#include "troupe/lease/etcd_protocol.hpp"

#include <array>
#include <charconv>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "troupe/lease/errc.hpp"

namespace troupe::lease::etcd {

namespace {

using json_value = rapidjson::Value;
using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view b64_alphabet
  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for alphabet characters, -1 otherwise.
constexpr std::array<int8_t, 256> make_b64_table() {
  std::array<int8_t, 256> t{};
  for (auto& x : t)
    x = -1;
  for (size_t i = 0; i < b64_alphabet.size(); ++i)
    t[static_cast<unsigned char>(b64_alphabet[i])] = static_cast<int8_t>(i);
  return t;
}

constexpr auto b64_table = make_b64_table();

runtime::error protocol_error(std::string message) {
  return runtime::make_error(errc::backend_unavailable, std::move(message));
}

std::string_view str(const json_value& v) {
  return {v.GetString(), v.GetStringLength()};
}

void put_string(json_writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void put_key(json_writer& w, std::string_view name) {
  w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
}

void put_int64(json_writer& w, int64_t x) {
  put_string(w, std::to_string(x));
}

void put_bytes(json_writer& w, std::string_view bytes) {
  put_string(w, base64_encode(bytes));
}

std::string finish(const rapidjson::StringBuffer& buf) {
  return {buf.GetString(), buf.GetSize()};
}

// A response being read: names the response in every error message.
class reader {
public:
  explicit reader(std::string_view what, bool quote = true)
    : what_(what), quote_(quote) {}

  // Parses `body` into `doc_` (an object); on failure returns the error.
  // With `first_only`, text after the first JSON value is ignored (a
  // keepalive answers one object per line).
  runtime::error parse(std::string_view body, bool first_only = false) {
    if (body.size() > max_body_bytes)
      return fail(fmt::format("body of {} bytes exceeds the limit of {}",
                              body.size(), max_body_bytes));
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos)
      return fail("empty body");
    // Iterative: no recursion, whatever the nesting.
    constexpr auto flags = rapidjson::kParseIterativeFlag;
    constexpr auto first_flags = flags | rapidjson::kParseStopWhenDoneFlag;
    if (first_only)
      doc_.Parse<first_flags>(body.data(), body.size());
    else
      doc_.Parse<flags>(body.data(), body.size());
    if (doc_.HasParseError())
      return fail(fmt::format("not JSON: {} at offset {}{}",
                              rapidjson::GetParseError_En(doc_.GetParseError()),
                              doc_.GetErrorOffset(), quoted(body)));
    if (!doc_.IsObject())
      return fail(fmt::format("not a JSON object{}", quoted(body)));
    return {};
  }

  const json_value& root() const {
    return doc_;
  }

  runtime::error fail(std::string_view problem) const {
    return protocol_error(fmt::format("etcd {}: {}", what_, problem));
  }

  runtime::error fail_field(std::string_view path,
                            std::string_view problem) const {
    return fail(fmt::format("field \"{}\": {}", path, problem));
  }

  // The member `name` of object `obj`, or nullptr.
  static const json_value* member(const json_value& obj,
                                  std::string_view name) {
    if (!obj.IsObject())
      return nullptr;
    auto i = obj.FindMember(
      json_value{name.data(), static_cast<rapidjson::SizeType>(name.size())});
    return i == obj.MemberEnd() ? nullptr : &i->value;
  }

  // Reads an int64 given as a string (etcd's encoding) or an integer.
  runtime::error int64_of(const json_value& v, std::string_view path,
                          int64_t& out) const {
    if (v.IsString()) {
      auto x = parse_int64(str(v));
      if (!x)
        return fail_field(path, x.error().message);
      out = *x;
      return {};
    }
    if (v.IsInt64()) {
      out = v.GetInt64();
      return {};
    }
    return fail_field(path, "not an int64 (string or integer)");
  }

  // An optional int64 member: absent means 0 (etcd leaves zeros out).
  runtime::error opt_int64(const json_value& obj, std::string_view name,
                           std::string_view path, int64_t& out) const {
    out = 0;
    if (auto* v = member(obj, name))
      return int64_of(*v, path, out);
    return {};
  }

  runtime::error opt_bytes(const json_value& obj, std::string_view name,
                           std::string_view path, std::string& out) const {
    out.clear();
    auto* v = member(obj, name);
    if (v == nullptr)
      return {};
    if (!v->IsString())
      return fail_field(path, "not a base64 string");
    auto bytes = base64_decode(str(*v));
    if (!bytes)
      return fail_field(path, bytes.error().message);
    out = std::move(*bytes);
    return {};
  }

private:
  std::string quoted(std::string_view body) const {
    if (!quote_)
      return {};
    return fmt::format(" (body \"{}\")", escape_for_message(body));
  }

  std::string_view what_;
  bool quote_;
  rapidjson::Document doc_;
};

runtime::error read_kv(const reader& r, const json_value& v,
                       const std::string& path, kv& out) {
  if (!v.IsObject())
    return r.fail_field(path, "not an object");
  if (auto err = r.opt_bytes(v, "key", path + ".key", out.key))
    return err;
  if (auto err = r.opt_bytes(v, "value", path + ".value", out.value))
    return err;
  if (auto err = r.opt_int64(v, "create_revision", path + ".create_revision",
                             out.create_revision))
    return err;
  if (auto err = r.opt_int64(v, "mod_revision", path + ".mod_revision",
                             out.mod_revision))
    return err;
  if (auto err = r.opt_int64(v, "version", path + ".version", out.version))
    return err;
  return r.opt_int64(v, "lease", path + ".lease", out.lease);
}

runtime::error read_range(const reader& r, const json_value& v,
                          const std::string& path, txn_response& out) {
  if (!v.IsObject())
    return r.fail_field(path, "not an object");
  auto* kvs = reader::member(v, "kvs");
  if (kvs == nullptr)
    return {};
  auto base = path.empty() ? std::string{"kvs"} : path + ".kvs";
  if (!kvs->IsArray())
    return r.fail_field(base, "not an array");
  for (rapidjson::SizeType i = 0; i < kvs->Size(); ++i) {
    kv x;
    if (auto err = read_kv(r, (*kvs)[i], fmt::format("{}[{}]", base, i), x))
      return err;
    out.range_kvs.push_back(std::move(x));
  }
  return {};
}

runtime::error read_txn_entry(const reader& r, const json_value& v,
                              const std::string& path, txn_response& out) {
  if (!v.IsObject())
    return r.fail_field(path, "not an object");
  if (auto* range = reader::member(v, "response_range"))
    return read_range(r, *range, path + ".response_range", out);
  if (auto* del = reader::member(v, "response_delete_range")) {
    if (!del->IsObject())
      return r.fail_field(path + ".response_delete_range", "not an object");
    int64_t n = 0;
    if (auto err = r.opt_int64(*del, "deleted",
                               path + ".response_delete_range.deleted", n))
      return err;
    out.deleted += n;
    return {};
  }
  if (auto* put = reader::member(v, "response_put")) {
    if (!put->IsObject())
      return r.fail_field(path + ".response_put", "not an object");
    return {};
  }
  return r.fail_field(path, "holds none of response_put, response_range, "
                            "response_delete_range");
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Maps a gRPC code to the HTTP status grpc-gateway uses for it.
uint16_t http_of_grpc(int code) {
  switch (code) {
    case 0:
      return 200;
    case 3:  // InvalidArgument
    case 11: // OutOfRange
      return 400;
    case 5: // NotFound
      return 404;
    case 7: // PermissionDenied
      return 403;
    case 9: // FailedPrecondition
      return 412;
    case 16: // Unauthenticated
      return 401;
    case 14: // Unavailable
      return 503;
    case 4: // DeadlineExceeded
      return 504;
    default:
      return 500;
  }
}

} // namespace

// -- encoding helpers ---------------------------------------------------------

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out += b64_alphabet[(n >> 18) & 63];
    out += b64_alphabet[(n >> 12) & 63];
    out += b64_alphabet[(n >> 6) & 63];
    out += b64_alphabet[n & 63];
  }
  auto rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t n = at(i) << 16;
    out += b64_alphabet[(n >> 18) & 63];
    out += b64_alphabet[(n >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    uint32_t n = (at(i) << 16) | (at(i + 1) << 8);
    out += b64_alphabet[(n >> 18) & 63];
    out += b64_alphabet[(n >> 12) & 63];
    out += b64_alphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

runtime::expected<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return protocol_error(fmt::format(
      "invalid base64: length {} is not a multiple of 4", text.size()));
  size_t pad = 0;
  if (!text.empty() && text.back() == '=')
    pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    uint32_t digit = 0;
    if (i >= text.size() - pad) {
      if (c != '=')
        return protocol_error(
          fmt::format("invalid base64: misplaced padding at offset {}", i));
    } else {
      auto d = b64_table[c];
      if (d < 0)
        return protocol_error(fmt::format(
          "invalid base64: {} at offset {}",
          c == '=' ? "misplaced padding" : "character outside the alphabet",
          i));
      digit = static_cast<uint32_t>(d);
    }
    acc = (acc << 6) | digit;
    if (i % 4 == 3) {
      out += static_cast<char>((acc >> 16) & 0xff);
      out += static_cast<char>((acc >> 8) & 0xff);
      out += static_cast<char>(acc & 0xff);
      acc = 0;
    }
  }
  out.resize(out.size() - pad);
  return out;
}

runtime::expected<int64_t> parse_int64(std::string_view text) {
  int64_t x = 0;
  auto* first = text.data();
  auto* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, x);
  if (text.empty() || ec != std::errc{} || ptr != last)
    return protocol_error(
      fmt::format("not an int64: \"{}\"", escape_for_message(text, 40)));
  return x;
}

bool is_valid_utf8(std::string_view text) noexcept {
  size_t i = 0;
  auto n = text.size();
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < n) {
    auto c = at(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n)
      return false;
    for (size_t k = 1; k < len; ++k) {
      auto cc = at(i + k);
      if ((cc & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    constexpr uint32_t min_of_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_of_len[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

// -- request bodies -----------------------------------------------------------

std::string grant_request(int64_t ttl_seconds) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "TTL");
  put_int64(w, ttl_seconds);
  w.EndObject();
  return finish(buf);
}

std::string lease_id_request(int64_t lease_id) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "ID");
  put_int64(w, lease_id);
  w.EndObject();
  return finish(buf);
}

namespace {

template <class Operand>
void put_compare(json_writer& w, std::string_view key, std::string_view target,
                 std::string_view operand_name, Operand operand) {
  w.StartObject();
  put_key(w, "key");
  put_bytes(w, key);
  put_key(w, "result");
  put_string(w, "EQUAL");
  put_key(w, "target");
  put_string(w, target);
  put_key(w, operand_name);
  operand();
  w.EndObject();
}

void put_range_branch(json_writer& w, std::string_view key) {
  w.StartArray();
  w.StartObject();
  put_key(w, "request_range");
  w.StartObject();
  put_key(w, "key");
  put_bytes(w, key);
  w.EndObject();
  w.EndObject();
  w.EndArray();
}

} // namespace

std::string acquire_txn_request(std::string_view key, std::string_view value,
                                int64_t lease_id) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "compare");
  w.StartArray();
  put_compare(w, key, "CREATE", "create_revision", [&] { put_int64(w, 0); });
  w.EndArray();
  put_key(w, "success");
  w.StartArray();
  w.StartObject();
  put_key(w, "request_put");
  w.StartObject();
  put_key(w, "key");
  put_bytes(w, key);
  put_key(w, "value");
  put_bytes(w, value);
  put_key(w, "lease");
  put_int64(w, lease_id);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  put_key(w, "failure");
  put_range_branch(w, key);
  w.EndObject();
  return finish(buf);
}

std::string release_txn_request(std::string_view key, std::string_view value,
                                int64_t lease_id) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "compare");
  w.StartArray();
  put_compare(w, key, "VALUE", "value", [&] { put_bytes(w, value); });
  put_compare(w, key, "LEASE", "lease", [&] { put_int64(w, lease_id); });
  w.EndArray();
  put_key(w, "success");
  w.StartArray();
  w.StartObject();
  put_key(w, "request_delete_range");
  w.StartObject();
  put_key(w, "key");
  put_bytes(w, key);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  put_key(w, "failure");
  put_range_branch(w, key);
  w.EndObject();
  return finish(buf);
}

std::string range_request(std::string_view key) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "key");
  put_bytes(w, key);
  w.EndObject();
  return finish(buf);
}

std::string authenticate_request(std::string_view user,
                                 const runtime::secret& password) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put_key(w, "name");
  put_string(w, user);
  put_key(w, "password");
  put_string(w, password.reveal());
  w.EndObject();
  return finish(buf);
}

// -- responses ----------------------------------------------------------------

runtime::expected<grant_response> parse_grant_response(std::string_view body) {
  reader r{"grant response"};
  if (auto err = r.parse(body))
    return err;
  auto& root = r.root();
  grant_response out;
  auto* id = reader::member(root, "ID");
  if (id == nullptr)
    return r.fail_field("ID", "missing");
  if (auto err = r.int64_of(*id, "ID", out.id))
    return err;
  if (out.id == 0)
    return r.fail_field("ID", "is 0");
  auto* ttl = reader::member(root, "TTL");
  if (ttl == nullptr)
    return r.fail_field("TTL", "missing");
  if (auto err = r.int64_of(*ttl, "TTL", out.ttl))
    return err;
  if (out.ttl <= 0)
    return r.fail_field("TTL", fmt::format("{} is not positive", out.ttl));
  return out;
}

runtime::expected<txn_response> parse_txn_response(std::string_view body) {
  reader r{"txn response"};
  if (auto err = r.parse(body))
    return err;
  auto& root = r.root();
  txn_response out;
  if (auto* s = reader::member(root, "succeeded")) {
    if (!s->IsBool())
      return r.fail_field("succeeded", "not a boolean");
    out.succeeded = s->GetBool();
  }
  auto* header = reader::member(root, "header");
  if (header == nullptr)
    return r.fail_field("header", "missing");
  if (!header->IsObject())
    return r.fail_field("header", "not an object");
  auto* rev = reader::member(*header, "revision");
  if (rev == nullptr)
    return r.fail_field("header.revision", "missing");
  if (auto err = r.int64_of(*rev, "header.revision", out.revision))
    return err;
  auto* responses = reader::member(root, "responses");
  if (responses == nullptr)
    return out;
  if (!responses->IsArray())
    return r.fail_field("responses", "not an array");
  for (rapidjson::SizeType i = 0; i < responses->Size(); ++i)
    if (auto err = read_txn_entry(r, (*responses)[i],
                                  fmt::format("responses[{}]", i), out))
      return err;
  return out;
}

runtime::expected<std::vector<kv>> parse_range_response(std::string_view body) {
  reader r{"range response"};
  if (auto err = r.parse(body))
    return err;
  txn_response out;
  if (auto err = read_range(r, r.root(), "", out))
    return err;
  return std::move(out.range_kvs);
}

runtime::expected<keepalive_response>
parse_keepalive_response(std::string_view body) {
  reader r{"keepalive response"};
  if (auto err = r.parse(body, true))
    return err;
  auto& root = r.root();
  auto* result = reader::member(root, "result");
  if (result == nullptr) {
    if (auto e = parse_error_body(body))
      return r.fail(fmt::format("stream error (HTTP {}): {}", e->http_code,
                                escape_for_message(e->message, 200)));
    return r.fail_field("result", "missing");
  }
  if (!result->IsObject())
    return r.fail_field("result", "not an object");
  keepalive_response out;
  auto* id = reader::member(*result, "ID");
  if (id == nullptr)
    return r.fail_field("result.ID", "missing");
  if (auto err = r.int64_of(*id, "result.ID", out.id))
    return err;
  if (auto err = r.opt_int64(*result, "TTL", "result.TTL", out.ttl))
    return err;
  return out;
}

runtime::expected<runtime::secret>
parse_authenticate_response(std::string_view body) {
  reader r{"authenticate response", false};
  if (auto err = r.parse(body))
    return err;
  auto* token = reader::member(r.root(), "token");
  if (token == nullptr)
    return r.fail_field("token", "missing");
  if (!token->IsString())
    return r.fail_field("token", "not a string");
  if (token->GetStringLength() == 0)
    return r.fail_field("token", "empty");
  return runtime::secret{std::string{str(*token)}};
}

runtime::expected<error_body> parse_error_body(std::string_view body) {
  reader r{"error body"};
  if (auto err = r.parse(body, true))
    return err;
  auto& root = r.root();
  auto* e = reader::member(root, "error");
  if (e == nullptr)
    return r.fail_field("error", "missing");
  error_body out;
  const json_value* obj = &root;
  if (e->IsObject()) {
    // Streaming shape: {"error":{"grpc_code":..,"http_code":..,...}}.
    obj = e;
    if (auto* code = reader::member(*e, "grpc_code"); code && code->IsInt())
      out.grpc_code = code->GetInt();
    if (auto* http = reader::member(*e, "http_code"); http && http->IsInt())
      out.http_code = http->GetInt();
  } else {
    if (auto* code = reader::member(root, "code"); code && code->IsInt())
      out.grpc_code = code->GetInt();
  }
  if (auto* m = reader::member(*obj, "message"); m && m->IsString())
    out.message = std::string{str(*m)};
  else if (e->IsString())
    out.message = std::string{str(*e)};
  return out;
}

// -- classification -----------------------------------------------------------

std::string_view to_string(answer_kind x) noexcept {
  switch (x) {
    case answer_kind::ok:
      return "ok";
    case answer_kind::unauthenticated:
      return "unauthenticated";
    case answer_kind::user_name_empty:
      return "user_name_empty";
    case answer_kind::auth_not_enabled:
      return "auth_not_enabled";
    case answer_kind::lease_not_found:
      return "lease_not_found";
    case answer_kind::permission_denied:
      return "permission_denied";
    case answer_kind::unavailable:
      return "unavailable";
    case answer_kind::rejected:
      return "rejected";
  }
  return "unknown";
}

answer classify_answer(uint16_t http_status, std::string_view body) {
  answer out;
  out.status = http_status;
  bool success = http_status >= 200 && http_status < 300;
  // Fast path: a success body without an "error" member needs no parse.
  if (success && body.find("\"error\"") == std::string_view::npos) {
    out.kind = answer_kind::ok;
    return out;
  }
  if (auto e = parse_error_body(body))
    out.error = std::move(*e);
  if (success) {
    if (!out.error) {
      out.kind = answer_kind::ok;
      return out;
    }
    // The streaming error shape inside a 2xx: its own code decides.
    auto code = out.error->http_code;
    out.status = code >= 100 && code <= 599
                   ? static_cast<uint16_t>(code)
                   : http_of_grpc(out.error->grpc_code);
    if (out.status >= 200 && out.status < 300) {
      out.kind = answer_kind::unavailable; // an error claiming success
      return out;
    }
  }
  std::string_view msg = out.error ? std::string_view{out.error->message} : "";
  int grpc = out.error ? out.error->grpc_code : -1;
  auto s = out.status;
  if (s == 401 || grpc == 16)
    out.kind = answer_kind::unauthenticated;
  else if (s == 403 || grpc == 7)
    out.kind = answer_kind::permission_denied;
  else if (s == 400 && contains(msg, "user name is empty"))
    out.kind = answer_kind::user_name_empty;
  else if (s == 412 && contains(msg, "authentication is not enabled"))
    out.kind = answer_kind::auth_not_enabled;
  else if (s == 404 && contains(msg, "requested lease not found"))
    out.kind = answer_kind::lease_not_found;
  else if (s >= 500 || s == 408 || s == 429 || grpc == 14)
    out.kind = answer_kind::unavailable;
  else if (s >= 400)
    out.kind = answer_kind::rejected;
  else
    out.kind = answer_kind::unavailable;
  return out;
}

} // namespace troupe::lease::etcd
