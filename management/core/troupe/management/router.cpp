#include "troupe/management/router.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
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
  w.Key("app_version");
  put(w, m.app_version);
  w.EndObject();
}

void put_foreign(json_writer& w, const foreign_cluster_view& f) {
  w.StartObject();
  w.Key("incarnation");
  put(w, f.incarnation);
  w.Key("size");
  put_opt(w, f.size);
  w.Key("seen_via");
  put(w, f.seen_via);
  w.Key("last_seen");
  put(w, f.last_seen);
  w.Key("merging_into");
  put_opt(w, f.merging_into);
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
    w.Key("singleton_target");
    put_opt(w, v.singleton_target);
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
    w.Key("incarnation");
    put_opt(w, v.incarnation);
    w.Key("merging_into");
    put_opt(w, v.merging_into);
    w.Key("foreign_clusters");
    w.StartArray();
    for (auto& f : v.foreign_clusters)
      put_foreign(w, f);
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

// One field of a request body.
struct body_field {
  std::string name;
  std::string text;
  /// False for a JSON number, boolean or null (rendered as text).
  bool is_string = true;
};

struct body_fields {
  bool is_json = false;
  std::vector<body_field> fields;

  const body_field* find(std::string_view name) const {
    for (auto& f : fields)
      if (f.name == name)
        return &f;
    return nullptr;
  }
};

runtime::error bad_request(std::string why) {
  return runtime::make_error(errc::invalid_request, std::move(why));
}

// The fields of a body: a form (`k=v&k2=v2`, percent-decoded) or, with a
// JSON content type or a body that starts with '{', a JSON object whose
// values are strings, numbers, booleans or null.
runtime::expected<body_fields> parse_body(const http_request& req) {
  body_fields out;
  auto body = std::string_view{req.body};
  out.is_json = req.content_type.rfind("application/json", 0) == 0
                || (!body.empty() && body.front() == '{');
  if (out.is_json) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
    if (doc.HasParseError())
      return bad_request(
        fmt::format("the body is not valid JSON: {} (at byte {})",
                    rapidjson::GetParseError_En(doc.GetParseError()),
                    doc.GetErrorOffset()));
    if (!doc.IsObject())
      return bad_request("the body is not a JSON object");
    for (auto& m : doc.GetObject()) {
      body_field f;
      f.name.assign(m.name.GetString(), m.name.GetStringLength());
      auto& v = m.value;
      f.is_string = v.IsString();
      if (v.IsString())
        f.text.assign(v.GetString(), v.GetStringLength());
      else if (v.IsBool())
        f.text = v.GetBool() ? "true" : "false";
      else if (v.IsNumber())
        f.text = render([&](json_writer& w) { v.Accept(w); });
      else if (!v.IsNull())
        return bad_request(fmt::format("the field \"{}\" is not a string, "
                                       "number or boolean",
                                       f.name.substr(0, 64)));
      out.fields.push_back(std::move(f));
    }
    return out;
  }
  auto form = parse_form(body);
  if (form.broken)
    return bad_request(
      fmt::format("the field \"{}\" has a broken %-escape", *form.broken));
  for (auto& f : form.fields)
    out.fields.push_back(
      body_field{std::move(f.name), std::move(f.value), true});
  return out;
}

std::string lower(std::string x) {
  for (auto& c : x)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return x;
}

// The operation named by a PUT body: `operation=leave` (a form, Akka's
// `operation=Leave` too) or `{"operation": "leave"}`.
runtime::expected<member_operation> parse_operation(const http_request& req) {
  auto body = parse_body(req);
  if (!body)
    return body.error();
  auto* f = body->find("operation");
  if (body->is_json && (!f || !f->is_string))
    return bad_request("the body has no string field \"operation\"");
  if (!f || f->text.empty())
    return bad_request("the body names no operation (operation=leave or "
                       "operation=down)");
  auto op = lower(f->text);
  if (op == "leave")
    return member_operation::leave;
  if (op == "down")
    return member_operation::down;
  return bad_request(
    fmt::format("unknown operation \"{}\" (leave or down)", op.substr(0, 64)));
}

// The fault named by a PUT /faults/{peer} body. Unknown fields are
// refused: a typo must not inject a different fault than meant.
runtime::expected<fault_request> parse_fault(const http_request& req,
                                             std::string peer) {
  auto body = parse_body(req);
  if (!body)
    return body.error();
  fault_request out;
  out.peer = std::move(peer);
  for (auto& f : body->fields) {
    auto value = lower(f.text);
    auto bad_value = [&](std::string_view expected) {
      return bad_request(fmt::format("{} must be {}, got \"{}\"", f.name,
                                     expected, f.text.substr(0, 64)));
    };
    if (f.name == "direction") {
      if (value == "inbound")
        out.directions = {fault_direction::inbound};
      else if (value == "outbound")
        out.directions = {fault_direction::outbound};
      else if (value == "both")
        out.directions.clear();
      else
        return bad_value("inbound, outbound or both");
    } else if (f.name == "blackhole") {
      if (value != "true" && value != "false")
        return bad_value("true or false");
      out.blackhole = value == "true";
    } else if (f.name == "delay_ms") {
      int64_t ms = -1;
      auto [end, ec]
        = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec != std::errc{} || end != value.data() + value.size() || ms < 0
          || ms > 600000)
        return bad_value("an integer from 0 to 600000");
      out.delay = std::chrono::milliseconds{ms};
    } else if (f.name == "drop_probability") {
      char* end = nullptr;
      auto p = std::strtod(value.c_str(), &end);
      if (value.empty() || end != value.c_str() + value.size() || !(p >= 0.0)
          || p > 1.0)
        return bad_value("a number from 0.0 to 1.0");
      out.drop_probability = p;
    } else {
      return bad_request(
        fmt::format("unknown field \"{}\" (direction, blackhole, delay_ms, "
                    "drop_probability)",
                    f.name.substr(0, 64)));
    }
  }
  if (!out.blackhole && out.delay.count() == 0 && out.drop_probability == 0.0)
    return bad_request("the body names no fault (blackhole=true, delay_ms=N "
                       "or drop_probability=P); DELETE heals a link");
  if (out.directions.empty())
    out.directions = {fault_direction::inbound, fault_direction::outbound};
  return out;
}

const char* to_string(fault_direction d) {
  return d == fault_direction::inbound ? "inbound" : "outbound";
}

std::string render_faults(const std::vector<fault_view>& xs) {
  return render([&](json_writer& w) {
    w.StartArray();
    for (auto& x : xs) {
      w.StartObject();
      w.Key("peer");
      put(w, x.peer);
      w.Key("direction");
      put(w, to_string(x.direction));
      w.Key("blackhole");
      w.Bool(x.blackhole);
      w.Key("delay_ms");
      w.Int64(static_cast<int64_t>(x.delay.count()));
      w.Key("drop_probability");
      w.Double(x.drop_probability);
      w.EndObject();
    }
    w.EndArray();
  });
}

http_response message(std::string_view text) {
  return json(200, render([&](json_writer& w) {
                w.StartObject();
                w.Key("message");
                put(w, text);
                w.EndObject();
              }));
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

http_response unauthorized() {
  return failure(
    401, "this endpoint needs Authorization: Bearer <management.token>");
}

// `/faults` and `/faults/{host:port}`.
http_response handle_faults(management_source& source, const router_settings& s,
                            const http_request& req, std::string_view path) {
  if (!s.fault_injection)
    return failure(403, "fault injection is off on this node (start it with "
                        "management.fault_injection=true, loopback only)");
  auto changes = req.method == "PUT" || req.method == "DELETE";
  if (changes && !authorized(s, req))
    return unauthorized();
  if (path == "/faults" || path == "/faults/") {
    if (req.method == "DELETE") {
      auto all = source.faults();
      if (!all)
        return from_error(all.error());
      std::vector<std::string> peers;
      for (auto& f : *all)
        if (std::find(peers.begin(), peers.end(), f.peer) == peers.end())
          peers.push_back(f.peer);
      for (auto& p : peers) {
        fault_request heal;
        heal.peer = p;
        heal.directions = {fault_direction::inbound, fault_direction::outbound};
        if (auto err = source.set_fault(heal))
          return from_error(err);
      }
      return message(fmt::format("healed {} peer(s)", peers.size()));
    }
    if (req.method != "GET" && req.method != "HEAD")
      return method_not_allowed("GET, HEAD, DELETE");
    return answer(source.faults(), render_faults);
  }
  auto peer = percent_decode(path.substr(std::string_view{"/faults/"}.size()));
  if (!peer || peer->empty() || peer->find('/') != std::string::npos)
    return failure(400, "the peer in the path is malformed (want host:port)");
  fault_request f;
  if (req.method == "PUT") {
    auto parsed = parse_fault(req, *peer);
    if (!parsed)
      return from_error(parsed.error());
    f = std::move(*parsed);
  } else if (req.method == "DELETE") {
    f.peer = *peer;
    f.directions = {fault_direction::inbound, fault_direction::outbound};
  } else {
    return method_not_allowed("PUT, DELETE");
  }
  if (auto err = source.set_fault(f))
    return from_error(err);
  if (req.method == "DELETE")
    return message(fmt::format("healed the link to {}", *peer));
  // Set either way (a restarting member may come back there), but a peer
  // that is no member is most often a mistyped port (say the management
  // port): say so.
  std::string note;
  if (auto view = source.members()) {
    auto known = std::any_of(
      view->members.begin(), view->members.end(), [&](const member_view& m) {
        return m.address.substr(0, m.address.rfind('#')) == *peer;
      });
    if (!known)
      note = fmt::format("; note: no member of this node's view is at {} "
                         "(the cluster port, not the management or app port, "
                         "names a member)",
                         *peer);
  }
  return message(fmt::format("fault set on the link to {} ({}){}", *peer,
                             f.directions.size() == 2
                               ? "both directions"
                               : to_string(f.directions.front()),
                             note));
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

bool answers_without_waiting(const http_request& req) {
  if (req.method != "GET" && req.method != "HEAD")
    return false;
  std::string_view target = req.target;
  auto path = target.substr(0, target.find('?'));
  constexpr std::string_view members = "/cluster/members";
  return path == "/" || path == "/alive" || path == "/ready"
         || path == "/faults" || path == "/bootstrap/seed-nodes"
         || path.substr(0, members.size()) == members;
}

parsed_form parse_form(std::string_view x) {
  parsed_form out;
  while (!x.empty()) {
    auto amp = x.find('&');
    auto pair = x.substr(0, amp);
    x = amp == std::string_view::npos ? std::string_view{} : x.substr(amp + 1);
    auto eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(
      eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!name || !value) {
      out.broken = std::string{pair.substr(0, std::min<size_t>(eq, 64))};
      return out;
    }
    out.fields.push_back(form_field{std::move(*name), std::move(*value)});
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
  if (path == "/bootstrap/seed-nodes")
    return get_only([&] {
      auto text = source.bootstrap_seed_nodes();
      if (!text)
        return from_error(text.error());
      return json(200, std::move(*text));
    });
  constexpr std::string_view members_prefix = "/cluster/members/";
  if (path.substr(0, members_prefix.size()) == members_prefix) {
    auto address = percent_decode(path.substr(members_prefix.size()));
    if (!address || address->empty() || address->find('/') != std::string::npos)
      return failure(400, "the member address in the path is malformed");
    if (req.method == "PUT") {
      if (!authorized(s, req))
        return unauthorized();
      auto op = parse_operation(req);
      if (!op)
        return failure(400, op.error().message);
      if (auto err = source.apply(*op, *address))
        return from_error(err);
      return message(fmt::format(
        "{} of {} started", *op == member_operation::leave ? "leave" : "down",
        *address));
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
  if (path == "/faults" || path.substr(0, 8) == "/faults/")
    return handle_faults(source, s, req, path);
  return failure(
    404, fmt::format("no such path: {}", std::string{path.substr(0, 128)}));
}

} // namespace troupe::management
