#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/runtime/kubernetes_api.hpp"

/// @file
/// Discovery through the Kubernetes API (`cluster.bootstrap.discovery_method
/// = kubernetes_api`), Akka Discovery's kubernetes-api method: the pods of
/// one namespace that match a label selector, over the same client, token
/// and CA handling as the Kubernetes lease (runtime/kubernetes_api.hpp).
/// Which pods are contact points: kubernetes_pod_list.hpp
/// (`select_contact_points`: not being deleted, Running, a pod IP, the named
/// port; readiness is not required).

namespace troupe::bootstrap {

/// What to list and how to reach the API server. The base holds the API
/// server, token file, CA file, http:// permission, request timeout and
/// token refresh (one minute: the token is re-read every minute and after a
/// 401).
struct kubernetes_api_discovery_options : runtime::kubernetes_api_options {
  kubernetes_api_discovery_options() {
    log_component = "bootstrap.kubernetes_api";
  }

  /// The namespace whose pods are listed (a DNS-1123 label).
  std::string pod_namespace = "default";
  /// The `labelSelector` query parameter, in the Kubernetes label selector
  /// syntax (`app=troupe,tier in (a,b)`), sent percent-encoded; the API
  /// server checks it (400 BadRequest -> discovery_refused). Must not be
  /// empty: every pod of the namespace is never what is meant.
  std::string pod_label_selector = "app=troupe";
  /// The container port name whose containerPort is the contact point's
  /// port (an IANA service name: at most 15 characters, lowercase letters,
  /// digits and '-').
  std::string pod_port_name = "management";
  /// The port of a Running pod without a port named `pod_port_name`; 0
  /// leaves such pods out.
  uint16_t fallback_port = 0;
};

/// A contact_point_discovery over `GET /api/v1/namespaces/{ns}/pods?
/// labelSelector=...` (list pods: the Role needs the verb `list` on
/// `pods` in the core API group).
///
/// Each `discover` is one list request (plus one retry after a 401),
/// bounded by `timeout` and, per attempt, by `request_timeout`. Outcomes:
/// - 200 with a PodList: its contact points (select_contact_points; pods
///   left out are logged at debug level with the reason);
/// - a 2xx that is not a PodList (malformed JSON, another kind, no items, a
///   Content-Type other than application/json) -> bad_discovery_answer;
/// - 401 after re-reading the token file once -> discovery_refused naming
///   the token file (never the token);
/// - 403 -> discovery_refused naming the missing RBAC rule (`list` on
///   `pods` in namespace NS) and quoting the server's message;
/// - another 4xx (400 for a malformed label selector) -> discovery_refused
///   with the server's message: retrying unchanged will not help;
/// - 429, 5xx, timeouts, connection and TLS failures, an unreadable token
///   file -> discovery_unavailable.
/// A namespace that does not exist answers an empty list (the API server
/// lists without checking it), which is an empty answer, not an error.
///
/// Thread-safety: as the interface; `done` runs on the client's io thread,
/// except when no request could be sent (the token file cannot be read,
/// the client has shut down): then it runs inline, with
/// discovery_unavailable. Destroying the discovery completes pending calls
/// with discovery_unavailable.
class kubernetes_api_discovery final : public contact_point_discovery {
public:
  /// Checks the options (the client's checks, the namespace a DNS-1123
  /// label, a non-empty selector, a valid port name) and starts the client.
  /// Errors (errc::invalid_settings) name the option, or its key when
  /// `config_prefix` is set.
  static runtime::expected<std::shared_ptr<kubernetes_api_discovery>>
  make(kubernetes_api_discovery_options opts);

  ~kubernetes_api_discovery() override;

  void discover(runtime::timespan timeout, callback done) override;

  /// `Kubernetes pods in namespace NS with labels SEL (port PORT) at URL`.
  std::string describe() const override;

  /// The request target, e.g.
  /// `/api/v1/namespaces/default/pods?labelSelector=app%3Dtroupe`.
  std::string list_path() const;

private:
  kubernetes_api_discovery(kubernetes_api_discovery_options opts,
                           std::shared_ptr<runtime::kubernetes_api_client> c);

  kubernetes_api_discovery_options opts_;
  std::shared_ptr<runtime::kubernetes_api_client> client_;
};

} // namespace troupe::bootstrap
