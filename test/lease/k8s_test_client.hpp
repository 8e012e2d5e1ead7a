#pragma once

// A blocking client over troupe::runtime::http_engine (the client the
// Kubernetes lease backend uses) and JSON accessors, for the Lease API
// emulator's tests.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "troupe/runtime/http_engine.hpp"
#include "troupe/test/http_test_server.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

namespace k8s_test {

namespace rt = troupe::runtime;
using namespace std::chrono_literals;

/// Sends requests with `Authorization: Bearer <token>` (unless the token is
/// empty), `Accept: application/json` and, for a body,
/// `Content-Type: application/json`; `extra` headers replace these.
class client {
public:
  explicit client(std::string token, rt::http_tls_settings tls = {})
    : token_(std::move(token)), engine_(std::move(tls)) {}

  void set_token(std::string token) {
    token_ = std::move(token);
  }

  rt::expected<rt::http_response> call(std::string method, std::string url,
                                       std::string body = {},
                                       std::vector<rt::http_header> extra = {},
                                       rt::timespan timeout = 5s) {
    rt::http_request req;
    req.method = std::move(method);
    req.url = std::move(url);
    req.timeout = timeout;
    auto has = [&](std::string_view name) {
      for (auto& h : extra)
        if (h.name == name)
          return true;
      return false;
    };
    req.headers = extra;
    if (!token_.empty() && !has("Authorization"))
      req.headers.push_back({"Authorization", "Bearer " + token_});
    if (!has("Accept"))
      req.headers.push_back({"Accept", "application/json"});
    if (!body.empty() && !has("Content-Type"))
      req.headers.push_back({"Content-Type", "application/json"});
    req.body = std::move(body);
    std::promise<rt::expected<rt::http_response>> done;
    auto result = done.get_future();
    engine_.start(std::move(req), [&done](rt::expected<rt::http_response> r) {
      done.set_value(std::move(r));
    });
    return result.get();
  }

  /// `call`, failing the test on a transport error.
  rt::http_response must(std::string method, std::string url,
                         std::string body = {},
                         std::vector<rt::http_header> extra = {}) {
    auto r = call(std::move(method), std::move(url), std::move(body),
                  std::move(extra));
    if (!r)
      FAIL("transport error: " << r.error().message);
    return std::move(*r);
  }

private:
  std::string token_;
  rt::http_engine engine_;
};

/// A Lease body: name, holder, optional resourceVersion and extra spec
/// members (`,"x":1`).
inline std::string lease_body(std::string_view name, std::string_view holder,
                              std::string_view rv = {},
                              std::string_view extra_spec = {}) {
  auto rv_member = rv.empty() ? std::string{}
                              : fmt::format(R"(,"resourceVersion":"{}")", rv);
  return fmt::format(
    R"({{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
    R"("metadata":{{"name":"{}"{}}},)"
    R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":15,)"
    R"("acquireTime":"2024-05-01T10:00:00.123456Z",)"
    R"("renewTime":"2024-05-01T10:05:42.654321Z","leaseTransitions":0{}}}}})",
    name, rv_member, holder, extra_spec);
}

inline rapidjson::Document json_of(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError())
    FAIL("not JSON: " << body);
  return doc;
}

/// The string at a JSON pointer ("/metadata/name"); "<missing>" if absent.
inline std::string str_at(const rapidjson::Value& doc, const char* pointer) {
  auto* v = rapidjson::Pointer(pointer).Get(doc);
  if (!v)
    return "<missing>";
  if (!v->IsString())
    return "<not a string>";
  return {v->GetString(), v->GetStringLength()};
}

/// The integer at a JSON pointer; INT64_MIN if absent or not an integer.
inline int64_t int_at(const rapidjson::Value& doc, const char* pointer) {
  auto* v = rapidjson::Pointer(pointer).Get(doc);
  if (!v || !v->IsInt64())
    return INT64_MIN;
  return v->GetInt64();
}

inline bool has_at(const rapidjson::Value& doc, const char* pointer) {
  return rapidjson::Pointer(pointer).Get(doc) != nullptr;
}

/// The exact Status body the emulator must answer (§2.4's shape).
inline std::string status_body(int code, std::string_view reason,
                               std::string_view message,
                               std::string_view details) {
  return fmt::format(R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},)"
                     R"("status":"Failure","message":"{}","reason":"{}",)"
                     R"("details":{},"code":{}}})"
                     "\n",
                     message, reason, details, code);
}

/// `{"name":N,"group":"coordination.k8s.io","kind":K}`.
inline std::string details(std::string_view name,
                           std::string_view kind = "leases") {
  return fmt::format(
    R"({{"name":"{}","group":"coordination.k8s.io","kind":"{}"}})", name, kind);
}

/// An emulator with default options and a client holding its token.
struct fixture {
  troupe::test::k8s_api_emulator emu;
  client c;

  explicit fixture(troupe::test::k8s_api_emulator_options opts = {})
    : emu(std::move(opts)), c(emu.options().token) {}

  std::string url(std::string_view name = "abc") const {
    return emu.lease_url("default", name);
  }

  std::string collection() const {
    return emu.leases_url("default");
  }

  /// POSTs a lease held by `holder`; returns its resourceVersion.
  std::string create(std::string_view name = "abc",
                     std::string_view holder = "a") {
    auto res = c.must("POST", collection(), lease_body(name, holder));
    REQUIRE(res.status == 201);
    return str_at(json_of(res.body), "/metadata/resourceVersion");
  }
};

/// The stale-resourceVersion exchange: two writers read one version, the
/// second PUT is stale. Shared by the 409 test and the planted-bug check.
inline rt::http_response stale_put(fixture& f) {
  auto rv = f.create("abc", "pod-a");
  REQUIRE(f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-b", rv)).status
          == 200);
  return f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-c", rv));
}

inline std::unique_ptr<troupe::test::test_pki> make_pki() {
  auto pki = troupe::test::make_test_pki();
  if (!pki)
    FAIL(pki.error().message);
  return std::move(*pki);
}

} // namespace k8s_test
