#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/bootstrap/contact_point.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The pure part of the kubernetes_api discovery: a `PodList` (the answer
/// of `GET /api/v1/namespaces/{ns}/pods?labelSelector=...`) as a value, its
/// decoder, and the rule that turns pods into contact points, as Akka
/// Discovery's kubernetes-api method (`KubernetesApiServiceDiscovery.
/// targets`) does. Free functions over values; thread-safe as any value.

namespace troupe::bootstrap {

/// One `spec.containers[].ports[]` entry.
struct kubernetes_container_port {
  /// `name` ("" when absent).
  std::string name;
  /// `containerPort` (1-65535).
  uint16_t container_port = 0;
  /// `protocol` ("TCP" when absent, the API's default).
  std::string protocol = "TCP";

  friend bool operator==(const kubernetes_container_port&,
                         const kubernetes_container_port&)
    = default;
};

/// The fields of one pod that discovery reads.
struct kubernetes_pod {
  /// `metadata.name`.
  std::string name;
  /// `metadata.deletionTimestamp` ("" when absent or null): set once the
  /// pod is being deleted (terminating, within its grace period).
  std::string deletion_timestamp;
  /// `status.phase` (Pending, Running, Succeeded, Failed, Unknown; "" when
  /// absent).
  std::string phase;
  /// `status.podIP` ("" before the pod has one).
  std::string pod_ip;
  /// Every container's ports, in container order.
  std::vector<kubernetes_container_port> ports;

  friend bool operator==(const kubernetes_pod&, const kubernetes_pod&)
    = default;
};

/// A decoded `PodList`.
struct kubernetes_pod_list {
  /// `metadata.resourceVersion` ("" when absent).
  std::string resource_version;
  std::vector<kubernetes_pod> items;
};

/// Decodes a `PodList` (at most 16 MiB). Total: any byte string yields a
/// value or an error (errc::bad_discovery_answer) naming what was wrong and
/// where: malformed JSON (with the offset), not an object, `kind` missing or
/// not "PodList", `items` missing or not an array (null counts as empty, as
/// Go encodes an empty slice), an item or a field of the wrong type
/// (`items[2].spec.containers[0].ports[1].containerPort is not an integer
/// in 1..65535`), an item without `metadata.name`. Fields discovery does not
/// read are ignored.
runtime::expected<kubernetes_pod_list>
parse_kubernetes_pod_list(std::string_view json);

/// The contact points of a pod list and why the other pods are not ones.
struct pod_selection {
  /// Sorted, without duplicates.
  std::vector<contact_point> contact_points;
  /// One line per pod left out, e.g. `troupe-2 (phase Pending)`, in list
  /// order: for a debug log line.
  std::vector<std::string> excluded;
};

/// Which pods are contact points, as Akka's kubernetes-api discovery:
/// - not being deleted (`metadata.deletionTimestamp` unset). Akka filters
///   these out too: a terminating pod is leaving (its coordinated shutdown
///   runs) or gone soon, and a node that counted it towards
///   `required_contact_point_nr` could found a cluster on a member that
///   will not be there;
/// - `status.phase` Running, with a `status.podIP` (the contact point's
///   host);
/// - the port: the `containerPort` of the first TCP port named `port_name`
///   (containers in order). A Running pod without such a port is a contact
///   point on `fallback_port` when it is not 0 (the caller's
///   `cluster.bootstrap.contact_point_port`, Akka's
///   `contact-point-discovery.port-name` / fallback port), otherwise it is
///   left out. (Akka drops such a pod whenever a port name is configured,
///   and uses the fallback port only when no port name is: troupe always
///   has a port name, so the fallback is what lets a pod whose container
///   port is unnamed take part when the operator asks for it.)
/// Readiness is not looked at: a troupe pod becomes ready only once it is
/// an Up member, which needs the bootstrap to have found it first.
pod_selection select_contact_points(const kubernetes_pod_list& list,
                                    std::string_view port_name,
                                    uint16_t fallback_port);

} // namespace troupe::bootstrap
