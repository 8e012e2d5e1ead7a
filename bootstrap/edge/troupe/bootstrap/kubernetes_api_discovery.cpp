#include "troupe/bootstrap/kubernetes_api_discovery.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/kubernetes_pod_list.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/kubernetes_status.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/text_escape.hpp"

namespace troupe::bootstrap {

using runtime::http_response;
using runtime::make_error;

namespace {

const runtime::logger log{"bootstrap.kubernetes_api"};

// A PodList of a few hundred pods; the decoder's own bound.
constexpr uint64_t max_response_bytes = 16 * 1024 * 1024;

// RFC 3986 percent-encoding of everything but the unreserved characters.
std::string percent_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// A container port name as the API validates it (IANA_SVC_NAME).
bool is_port_name(std::string_view n) {
  if (n.empty() || n.size() > 15 || n.front() == '-' || n.back() == '-'
      || n.find("--") != std::string_view::npos)
    return false;
  bool letter = false;
  for (char c : n) {
    if (c >= 'a' && c <= 'z')
      letter = true;
    else if (!(c >= '0' && c <= '9') && c != '-')
      return false;
  }
  return letter;
}

} // namespace

runtime::expected<std::shared_ptr<kubernetes_api_discovery>>
kubernetes_api_discovery::make(kubernetes_api_discovery_options opts) {
  auto name = [&](std::string_view option) {
    return fmt::format("{}{}", opts.config_prefix, option);
  };
  auto invalid = [](std::string msg) {
    return make_error(errc::invalid_settings, std::move(msg));
  };
  if (auto err = runtime::validate_kubernetes_namespace(opts.pod_namespace))
    return invalid(fmt::format("{}: {}", name("pod_namespace"), err.message));
  if (opts.pod_label_selector.empty())
    return invalid(fmt::format("{} is empty: it would select every pod of "
                               "namespace {}; set the labels of the "
                               "cluster's pods (e.g. app=troupe)",
                               name("pod_label_selector"), opts.pod_namespace));
  if (!is_port_name(opts.pod_port_name))
    return invalid(fmt::format(
      "{} \"{}\" is not a container port name (1 to 15 lowercase letters, "
      "digits and '-', at least one letter, no leading, trailing or double "
      "'-')",
      name("pod_port_name"), runtime::escape_for_message(opts.pod_port_name)));
  auto client = runtime::kubernetes_api_client::make(opts);
  if (!client)
    return invalid(std::move(client.error().message));
  static_cast<runtime::kubernetes_api_options&>(opts) = (*client)->options();
  return std::shared_ptr<kubernetes_api_discovery>{
    new kubernetes_api_discovery(std::move(opts), std::move(*client))};
}

kubernetes_api_discovery::kubernetes_api_discovery(
  kubernetes_api_discovery_options opts,
  std::shared_ptr<runtime::kubernetes_api_client> c)
  : opts_(std::move(opts)), client_(std::move(c)) {}

kubernetes_api_discovery::~kubernetes_api_discovery() {
  client_->shutdown();
}

std::string kubernetes_api_discovery::list_path() const {
  return fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}",
                     opts_.pod_namespace,
                     percent_encode(opts_.pod_label_selector));
}

std::string kubernetes_api_discovery::describe() const {
  return fmt::format("Kubernetes pods in namespace {} with labels {} (port "
                     "{}) at {}",
                     opts_.pod_namespace, opts_.pod_label_selector,
                     opts_.pod_port_name, opts_.api_server);
}

namespace {

// The outcome of one list request (see the class comment).
runtime::expected<std::vector<contact_point>>
outcome_of(const kubernetes_api_discovery_options& opts,
           const runtime::kubernetes_api_client& client,
           const std::string& where,
           const runtime::expected<http_response>& res) {
  if (!res)
    return make_error(errc::discovery_unavailable,
                      fmt::format("{}: {}", where, res.error().message));
  auto code = res->status;
  auto server = [&] { return runtime::kubernetes_status_text(res->body); };
  if (code >= 200 && code < 300) {
    auto type = runtime::media_type_of(*res);
    if (!type.empty() && type != "application/json")
      return make_error(errc::bad_discovery_answer,
                        fmt::format("{}: HTTP {} with Content-Type {}, "
                                    "expected application/json",
                                    where, code,
                                    runtime::escape_for_message(type)));
    auto list = parse_kubernetes_pod_list(res->body);
    if (!list)
      return make_error(
        errc::bad_discovery_answer,
        fmt::format("{}: HTTP {}: {}", where, code, list.error().message));
    auto sel
      = select_contact_points(*list, opts.pod_port_name, opts.fallback_port);
    if (!sel.excluded.empty())
      log.debug("{}: {} pod(s) are no contact points: {}", where,
                sel.excluded.size(), fmt::join(sel.excluded, ", "));
    return std::move(sel.contact_points);
  }
  if (code == 401)
    return make_error(errc::discovery_refused,
                      fmt::format("{}: HTTP 401 Unauthorized even after "
                                  "re-reading the token{}: {}",
                                  where, client.token_source(), server()));
  if (code == 403)
    return make_error(errc::discovery_refused,
                      fmt::format("{}: HTTP 403 Forbidden: RBAC denies "
                                  "listing pods; the Role needs the verb "
                                  "list on pods (apiGroups [\"\"]) in "
                                  "namespace {}: {}",
                                  where, opts.pod_namespace, server()));
  if (code == 429 || code >= 500)
    return make_error(errc::discovery_unavailable,
                      fmt::format("{}: HTTP {}: {}", where, code, server()));
  return make_error(errc::discovery_refused,
                    fmt::format("{}: HTTP {}: {}", where, code, server()));
}

} // namespace

void kubernetes_api_discovery::discover(runtime::timespan timeout,
                                        callback done) {
  auto where = fmt::format("Kubernetes API {}: list pods in namespace {} "
                           "with labelSelector {}",
                           opts_.api_server, opts_.pod_namespace,
                           opts_.pod_label_selector);
  auto ms
    = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  client_->request(
    "GET", list_path(), {}, max_response_bytes,
    [opts = opts_, client = client_, where = std::move(where), ms,
     done = std::move(done)](auto res) {
      if (!res
          && res.error().code
               == static_cast<uint8_t>(runtime::errc::http_timeout)) {
        done(make_error(errc::discovery_unavailable,
                        fmt::format("{}: no answer within the discovery "
                                    "timeout of {} ms: {}",
                                    where, ms, res.error().message)));
        return;
      }
      done(outcome_of(opts, *client, where, res));
    },
    timeout);
}

} // namespace troupe::bootstrap
