#include "troupe/management/router.hpp"

#include <cctype>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "troupe/management/errc.hpp"

namespace troupe::management {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put(json_writer& w, std::string_view x) {
  w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
}

void put_opt(json_writer& w, const std::optional<std::string>& x) {
  if (x)
    put(w, *x);
  else
    w.Null();
}

void put_opt(json_writer& w, const std::optional<uint64_t>& x) {
  if (x)
    w.Uint64(*x);
  else
    w.Null();
}

void put(json_writer& w, const std::vector<std::string>& xs) {
  w.StartArray();
  for (auto& x : xs)
    put(w, x);
  w.EndArray();
}

template <class F>
std::string render(F&& f) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  f(w);
  return std::string{buf.GetString(), buf.GetSize()};
}

http_response json(unsigned status, std::string body) {
  return http_response{status, "application/json", std::move(body), {}};
}

http_response failure(unsigned status, std::string_view what) {
  return json(status, render([&](json_writer& w) {
                w.StartObject();
                w.Key("error");
                put(w, what);
                w.EndObject();
              }));
}

http_response from_error(const runtime::error& err) {
  unsigned status = 500;
  if (err.category == std::string_view{"management"}) {
    switch (static_cast<errc>(err.code)) {
      case errc::unknown_member:
        status = 404;
        break;
      case errc::invalid_address:
      case errc::invalid_request:
        status = 400;
        break;
      case errc::unavailable:
        status = 503;
        break;
      default:
        break;
    }
  }
  return failure(status, err.message);
}

void put_member(json_writer& w, const member_view& m) {
  w.StartObject();
  w.Key("address");
  put(w, m.address);
  w.Key("status");
  put(w, m.status);
  w.Key("roles");
  put(w, m.roles);
  w.Key("up_number");
  w.Int(m.up_number);
  w.Key("reachable");
  w.Bool(m.reachable);
  w.EndObject();
}

std::string render_members(const members_view& v) {
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("self");
    put(w, v.self);
    w.Key("leader");
    put_opt(w, v.leader);
    w.Key("oldest");
    put_opt(w, v.oldest);
    w.Key("members");
    w.StartArray();
    for (auto& m : v.members)
      put_member(w, m);
    w.EndArray();
    w.Key("unreachable");
    w.StartArray();
    for (auto& u : v.unreachable) {
      w.StartObject();
      w.Key("address");
      put(w, u.address);
      w.Key("observed_by");
      put(w, u.observed_by);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

std::string render_shards(const shards_view& v) {
  return render([&](json_writer& w) {
    w.StartObject();
    w.Key("type");
    put(w, v.type);
    w.Key("regions");
    w.StartArray();
    for (auto& r : v.regions) {
      w.StartObject();
      w.Key("address");
      put(w, r.address);
      w.Key("shards");
      put(w, r.shards);
      w.Key("entities");
      w.Uint64(r.entities);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

std::string render_singletons(const std::vector<singleton_view>& xs) {
  return render([&](json_writer& w) {
    w.StartArray();
    for (auto& x : xs) {
      w.StartObject();
      w.Key("type");
      put(w, x.type);
      w.Key("host");
      put_opt(w, x.host);
      w.Key("running_here");
      w.Bool(x.running_here);
      w.Key("fencing_token");
      put_opt(w, x.fencing_token);
      w.EndObject();
    }
    w.EndArray();
  });
}

std::string render_leases(const std::vector<lease_view>& xs) {
  return render([&](json_writer& w) {
    w.StartArray();
    for (auto& x : xs) {
      w.StartObject();
      w.Key("name");
      put(w, x.name);
      w.Key("holder");
      put(w, x.holder);
      w.Key("fencing_token");
      put_opt(w, x.fencing_token);
      w.Key("held_here");
      w.Bool(x.held_here);
      w.Key("ttl_ms");
      w.Int64(static_cast<int64_t>(x.ttl.count()));
      w.EndObject();
    }
    w.EndArray();
  });
}

http_response health_response(const health& h) {
  return json(h.ok ? 200 : 503, render([&](json_writer& w) {
                w.StartObject();
                w.Key("ok");
                w.Bool(h.ok);
                if (!h.ok) {
                  w.Key("reason");
                  put(w, h.reason);
                }
                w.EndObject();
              }));
}

template <class T, class Render>
http_response answer(const runtime::expected<T>& x, Render&& f) {
  if (!x)
    return from_error(x.error());
  return json(200, f(*x));
}

// The operation named by a PUT body: `operation=leave` (a form, Akka's
// `operation=Leave` too) or `{"operation": "leave"}`.
runtime::expected<member_operation> parse_operation(const http_request& req) {
  auto bad = [](std::string why) {
    return runtime::make_error(errc::invalid_request, std::move(why));
  };
  std::string op;
  auto body = std::string_view{req.body};
  auto is_json = req.content_type.rfind("application/json", 0) == 0
                 || (!body.empty() && body.front() == '{');
  if (is_json) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
    if (doc.HasParseError() || !doc.IsObject())
      return bad("the body is not a JSON object");
    auto i = doc.FindMember("operation");
    if (i == doc.MemberEnd() || !i->value.IsString())
      return bad("the body has no string field \"operation\"");
    op.assign(i->value.GetString(), i->value.GetStringLength());
  } else {
    // A form: key=value pairs joined by '&'.
    while (!body.empty()) {
      auto amp = body.find('&');
      auto pair = body.substr(0, amp);
      body = amp == std::string_view::npos ? std::string_view{}
                                           : body.substr(amp + 1);
      auto eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == "operation") {
        auto value = percent_decode(pair.substr(eq + 1));
        if (!value)
          return bad("the operation has a broken %-escape");
        op = *value;
      }
    }
    if (op.empty())
      return bad("the body names no operation (operation=leave or "
                 "operation=down)");
  }
  for (auto& c : op)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (op == "leave")
    return member_operation::leave;
  if (op == "down")
    return member_operation::down;
  return bad(
    fmt::format("unknown operation \"{}\" (leave or down)", op.substr(0, 64)));
}

bool authorized(const router_settings& s, const http_request& req) {
  if (!s.require_token)
    return true;
  constexpr std::string_view scheme = "Bearer ";
  std::string_view header = req.authorization;
  if (header.size() <= scheme.size()
      || header.substr(0, scheme.size()) != scheme || s.token.empty())
    return false;
  return equal_secret(header.substr(scheme.size()), s.token);
}

http_response method_not_allowed(std::string allow) {
  auto r = failure(405, fmt::format("method not allowed (allowed: {})", allow));
  r.allow = std::move(allow);
  return r;
}

} // namespace

std::optional<std::string> percent_decode(std::string_view x) {
  std::string out;
  out.reserve(x.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != '%') {
      out.push_back(x[i]);
      continue;
    }
    if (i + 2 >= x.size())
      return std::nullopt;
    auto hi = hex(x[i + 1]);
    auto lo = hex(x[i + 2]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool equal_secret(std::string_view a, std::string_view b) noexcept {
  // The length is not secret; the bytes are compared without an early exit.
  if (a.size() != b.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

http_response handle(management_source& source, const router_settings& s,
                     const http_request& req) {
  if (req.body.size() > s.max_body)
    return failure(413, fmt::format("the body of {} bytes exceeds {} bytes",
                                    req.body.size(), s.max_body));
  std::string_view target = req.target;
  auto path = target.substr(0, target.find('?'));
  auto get_only = [&](auto&& f) -> http_response {
    if (req.method != "GET" && req.method != "HEAD")
      return method_not_allowed("GET, HEAD");
    return f();
  };
  if (path == "/")
    return get_only([&] {
      return http_response{
        200, "text/html; charset=utf-8", s.dashboard_html, {}};
    });
  if (path == "/ready")
    return get_only([&] { return health_response(source.ready()); });
  if (path == "/alive")
    return get_only([&] { return health_response(source.alive()); });
  if (path == "/metrics")
    return get_only([&] {
      auto text = source.metrics_text();
      if (!text)
        return from_error(text.error());
      return http_response{
        200, "text/plain; version=0.0.4; charset=utf-8", *text, {}};
    });
  if (path == "/singletons")
    return get_only(
      [&] { return answer(source.singletons(), render_singletons); });
  if (path == "/leases")
    return get_only([&] { return answer(source.leases(), render_leases); });
  if (path == "/cluster/members" || path == "/cluster/members/")
    return get_only([&] { return answer(source.members(), render_members); });
  constexpr std::string_view members_prefix = "/cluster/members/";
  if (path.substr(0, members_prefix.size()) == members_prefix) {
    auto address = percent_decode(path.substr(members_prefix.size()));
    if (!address || address->empty() || address->find('/') != std::string::npos)
      return failure(400, "the member address in the path is malformed");
    if (req.method == "PUT") {
      if (!authorized(s, req))
        return failure(401, "this endpoint needs Authorization: Bearer "
                            "<management.token>");
      auto op = parse_operation(req);
      if (!op)
        return failure(400, op.error().message);
      if (auto err = source.apply(*op, *address))
        return from_error(err);
      return json(
        200, render([&](json_writer& w) {
          w.StartObject();
          w.Key("message");
          put(w, fmt::format("{} of {} started",
                             *op == member_operation::leave ? "leave" : "down",
                             *address));
          w.EndObject();
        }));
    }
    if (req.method != "GET" && req.method != "HEAD")
      return method_not_allowed("GET, HEAD, PUT");
    auto all = source.members();
    if (!all)
      return from_error(all.error());
    for (auto& m : all->members) {
      auto hash = m.address.rfind('#');
      auto host_port = m.address.substr(0, hash);
      if (m.address == *address || host_port == *address)
        return json(200, render([&](json_writer& w) { put_member(w, m); }));
    }
    return failure(404, fmt::format("no member {} in this node's view",
                                    address->substr(0, 128)));
  }
  constexpr std::string_view shards_prefix = "/cluster/shards/";
  if (path.substr(0, shards_prefix.size()) == shards_prefix) {
    auto type = percent_decode(path.substr(shards_prefix.size()));
    if (!type || type->empty())
      return failure(400, "the entity type in the path is malformed");
    return get_only([&] {
      auto x = source.shards(*type);
      if (!x)
        return from_error(x.error());
      if (!*x)
        return failure(404, fmt::format("no region of entity type \"{}\" on "
                                        "this node",
                                        type->substr(0, 128)));
      return json(200, render_shards(**x));
    });
  }
  return failure(
    404, fmt::format("no such path: {}", std::string{path.substr(0, 128)}));
}

} // namespace troupe::management
