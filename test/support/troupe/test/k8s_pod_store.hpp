#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/test/k8s_status.hpp"

/// @file
/// The pods of the emulated API server (`/api/v1/namespaces/{ns}/pods`)
/// without HTTP: the objects tests put there, and the list answer
/// (PodList) filtered by a label selector. Pure: the caller passes the
/// resourceVersion of every write and the server's current one.

namespace troupe::test {

/// One `spec.containers[].ports[]` entry.
struct k8s_container_port {
  std::string name;
  uint16_t container_port = 0;
  std::string protocol = "TCP";
};

/// One container (only what discovery reads, plus a name and an image).
struct k8s_container {
  std::string name = "node";
  std::string image = "troupe-demo:dev";
  std::vector<k8s_container_port> ports;
};

/// A pod as a test describes it. `uid`, `resource_version` and
/// `creation_timestamp` are set by the store.
struct k8s_pod {
  std::string ns = "default";
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<k8s_container> containers;
  /// `status.phase`: Pending, Running, Succeeded, Failed, Unknown.
  std::string phase = "Running";
  /// `status.podIP` (and `status.podIPs[0].ip`); "" before one is assigned.
  std::string pod_ip;
  /// `metadata.deletionTimestamp` (RFC 3339); "" unless being deleted.
  std::string deletion_timestamp;

  std::string uid;
  std::string resource_version;
  std::string creation_timestamp;
};

/// Pods by namespace and name.
///
/// The list answer follows the apiserver (registry/core/pod, the generic
/// store's List, the JSON encoder):
/// - 200 with `{"kind":"PodList","apiVersion":"v1","metadata":
///   {"resourceVersion":RV},"items":[...]}`, RV the server's current
///   resourceVersion (the etcd revision, which every write of any resource
///   raises); items in etcd key order (by name), without kind and
///   apiVersion, `items` `[]` when nothing matches;
/// - a namespace that does not exist lists as empty: List does not check
///   the namespace (only mutating requests pass NamespaceLifecycle
///   admission), as `kubectl get pods -n no-such-ns` shows ("No resources
///   found");
/// - a malformed `labelSelector` is 400 BadRequest with the parser's
///   message (handlers/get.go ListResource: DecodeParameters ->
///   NewBadRequest);
/// - other query parameters (fieldSelector, limit, watch) are ignored.
///
/// Thread-safety: none; the emulator serializes calls.
class k8s_pod_store {
public:
  /// Creates ns/name or replaces it (keeping its uid and creation
  /// timestamp) with `resource_version`; a new pod gets `uid` and
  /// `creation_timestamp`. Returns the stored pod.
  k8s_pod put(k8s_pod pod, std::string resource_version, std::string uid,
              std::string creation_timestamp);

  /// Removes ns/name; false if there was none.
  bool erase(std::string_view ns, std::string_view name);

  /// The stored pod, or nullptr. Valid until the next write.
  const k8s_pod* find(std::string_view ns, std::string_view name) const;

  /// Every pod, namespace then name order.
  std::vector<k8s_pod> all() const;

  /// `GET /api/v1/namespaces/{ns}/pods?{query}` (query without '?', raw
  /// and percent-encoded as sent) at the server's `resource_version`.
  k8s_reply list(std::string_view ns, std::string_view query,
                 std::string_view resource_version) const;

private:
  std::map<std::string, k8s_pod, std::less<>> pods_; // key "ns/name"
};

/// One pod as the apiserver renders it in a list (no kind, apiVersion).
std::string k8s_pod_json(const k8s_pod& pod);

/// The value of `name` in a query string (`a=1&b=x%20y`), percent-decoded
/// and with `+` as a space (Go's url.ParseQuery); nullopt when absent.
std::optional<std::string> k8s_query_param(std::string_view query,
                                           std::string_view name);

} // namespace troupe::test
