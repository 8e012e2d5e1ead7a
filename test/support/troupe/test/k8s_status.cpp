#include "troupe/test/k8s_status.hpp"

#include <set>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace troupe::test {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put(json_writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

// `put` for omitempty fields.
void put_nonempty(json_writer& w, std::string_view key,
                  std::string_view value) {
  if (!value.empty())
    put(w, key, value);
}

std::string qualified_resource() {
  return fmt::format("{}.{}", k8s_lease_resource, k8s_lease_group);
}

k8s_status failure(uint16_t code, std::string reason, std::string message) {
  k8s_status s;
  s.code = code;
  s.reason = std::move(reason);
  s.message = std::move(message);
  return s;
}

// A failure with details {name, group, kind}.
k8s_status about(uint16_t code, std::string reason, std::string message,
                 std::string_view name, std::string_view kind) {
  auto s = failure(code, std::move(reason), std::move(message));
  s.has_details = true;
  s.details_name = std::string{name};
  s.details_group = std::string{k8s_lease_group};
  s.details_kind = std::string{kind};
  return s;
}

} // namespace

std::string k8s_status::render() const {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  put(w, "kind", "Status");
  put(w, "apiVersion", "v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  put_nonempty(w, "status", status);
  put_nonempty(w, "message", message);
  put_nonempty(w, "reason", reason);
  if (has_details) {
    w.Key("details");
    w.StartObject();
    put_nonempty(w, "name", details_name);
    put_nonempty(w, "group", details_group);
    put_nonempty(w, "kind", details_kind);
    put_nonempty(w, "uid", details_uid);
    if (!causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const auto& c : causes) {
        w.StartObject();
        put_nonempty(w, "reason", c.reason);
        put_nonempty(w, "message", c.message);
        put_nonempty(w, "field", c.field);
        w.EndObject();
      }
      w.EndArray();
    }
    if (retry_after_seconds != 0) {
      w.Key("retryAfterSeconds");
      w.Int(retry_after_seconds);
    }
    w.EndObject();
  }
  if (code != 0) {
    w.Key("code");
    w.Int(code);
  }
  w.EndObject();
  return k8s_escape_html(buf.GetString()) + "\n";
}

k8s_reply to_reply(const k8s_status& s) {
  k8s_reply r;
  r.status = s.code == 0 ? 200 : s.code;
  r.body = s.render();
  return r;
}

k8s_status k8s_not_found(std::string_view name) {
  return about(404, "NotFound",
               fmt::format("{} \"{}\" not found", qualified_resource(), name),
               name, k8s_lease_resource);
}

k8s_status k8s_namespace_not_found(std::string_view ns) {
  auto s
    = failure(404, "NotFound", fmt::format("namespaces \"{}\" not found", ns));
  s.has_details = true;
  s.details_name = std::string{ns};
  s.details_kind = "namespaces";
  return s;
}

k8s_status k8s_already_exists(std::string_view name) {
  return about(
    409, "AlreadyExists",
    fmt::format("{} \"{}\" already exists", qualified_resource(), name), name,
    k8s_lease_resource);
}

k8s_status k8s_conflict(std::string_view qualified_kind, std::string_view name,
                        std::string_view why) {
  return about(409, "Conflict",
               fmt::format("Operation cannot be fulfilled on {}.{} \"{}\": {}",
                           qualified_kind, k8s_lease_group, name, why),
               name, qualified_kind);
}

k8s_status k8s_stale_conflict(std::string_view name) {
  return k8s_conflict(k8s_lease_resource, name, k8s_optimistic_lock_message);
}

k8s_status k8s_invalid(std::string_view kind, std::string_view name,
                       std::vector<k8s_status_cause> causes) {
  // Go's aggregate: one error verbatim, several as "[a, b]", duplicates once.
  std::set<std::string> seen;
  std::string errs;
  for (const auto& c : causes) {
    auto one = fmt::format("{}: {}", c.field, c.message);
    if (!seen.insert(one).second)
      continue;
    errs += (seen.size() > 1 ? ", " : "") + one;
  }
  if (seen.size() > 1)
    errs = "[" + errs + "]";
  auto msg
    = fmt::format("{}.{} \"{}\" is invalid", kind, k8s_lease_group, name);
  if (!errs.empty())
    msg += ": " + errs;
  auto s = about(422, "Invalid", std::move(msg), name, kind);
  s.causes = std::move(causes);
  return s;
}

k8s_status k8s_bad_request(std::string message) {
  return failure(400, "BadRequest", std::move(message));
}

k8s_status k8s_unauthorized() {
  return failure(401, "Unauthorized", "Unauthorized");
}

k8s_status k8s_forbidden_resource(std::string_view user, std::string_view verb,
                                  std::string_view resource,
                                  std::string_view group, std::string_view ns,
                                  std::string_view name) {
  auto why = fmt::format("User \"{}\" cannot {} resource \"{}\" in API group "
                         "\"{}\"",
                         user, verb, resource, group);
  why += ns.empty() ? std::string{" at the cluster scope"}
                    : fmt::format(" in the namespace \"{}\"", ns);
  auto qualified = group.empty() ? std::string{resource}
                                 : fmt::format("{}.{}", resource, group);
  auto subject
    = name.empty() ? qualified : fmt::format("{} \"{}\"", qualified, name);
  auto s = failure(403, "Forbidden",
                   fmt::format("{} is forbidden: {}", subject, why));
  s.has_details = true;
  s.details_name = std::string{name};
  s.details_group = std::string{group};
  s.details_kind = std::string{resource};
  return s;
}

k8s_status k8s_forbidden(std::string_view user, std::string_view verb,
                         std::string_view ns, std::string_view name) {
  return k8s_forbidden_resource(user, verb, k8s_lease_resource, k8s_lease_group,
                                ns, name);
}

k8s_status k8s_forbidden_create_on_update(std::string_view name) {
  return about(
    403, "Forbidden",
    fmt::format("{} \"{}\" is forbidden: ", qualified_resource(), name), name,
    k8s_lease_resource);
}

k8s_status
k8s_unsupported_media_type(const std::vector<std::string>& accepted) {
  return failure(415, "UnsupportedMediaType",
                 fmt::format("the body of the request was in an unknown "
                             "format - accepted media types include: {}",
                             fmt::join(accepted, ", ")));
}

k8s_status k8s_entity_too_large(uint64_t limit) {
  return failure(413, "RequestEntityTooLarge",
                 fmt::format("Request entity too large: limit is {}", limit));
}

k8s_status k8s_path_not_found() {
  auto s = failure(404, "NotFound",
                   "the server could not find the requested resource");
  s.has_details = true;
  return s;
}

k8s_status k8s_method_not_allowed() {
  auto s = failure(405, "MethodNotAllowed",
                   "the server does not allow this method on the requested "
                   "resource");
  s.has_details = true;
  return s;
}

k8s_status k8s_unknown_error(std::string message) {
  return failure(500, "", std::move(message));
}

k8s_status k8s_server_error(uint16_t code, std::string_view name,
                            std::string message, int32_t retry_after_seconds) {
  auto or_default = [&](std::string_view d) {
    return message.empty() ? std::string{d} : message;
  };
  k8s_status s;
  switch (code) {
    case 409:
      s = k8s_stale_conflict(name);
      break;
    case 429:
      s = failure(429, "TooManyRequests",
                  or_default("Too many requests, please try again later."));
      s.has_details = true;
      break;
    case 500: {
      auto cause = or_default("k8s_api_emulator: injected fault");
      s = failure(500, "InternalError",
                  fmt::format("Internal error occurred: {}", cause));
      s.has_details = true;
      s.causes.push_back({"", cause, ""});
      break;
    }
    case 503:
      s = failure(503, "ServiceUnavailable",
                  or_default("the server is currently unable to handle the "
                             "request"));
      break;
    case 504:
      s = failure(
        504, "Timeout",
        fmt::format("Timeout: {}", or_default("request did not complete within "
                                              "requested timeout - context "
                                              "deadline exceeded")));
      s.has_details = true;
      break;
    default:
      s = failure(code, "",
                  or_default(fmt::format("the server responded with the "
                                         "status code {} but did not return "
                                         "more information",
                                         code)));
  }
  if (retry_after_seconds > 0) {
    s.has_details = true;
    s.retry_after_seconds = retry_after_seconds;
  }
  return s;
}

std::string k8s_escape_html(std::string json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80'
             && (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else
      out += c;
  }
  return out;
}

} // namespace troupe::test
