#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "troupe/test/k8s_lease_codec.hpp"
#include "troupe/test/k8s_status.hpp"

/// @file
/// The storage semantics of `coordination.k8s.io/v1` Leases as the
/// apiserver implements them (registry/generic/registry/store.go, the Lease
/// strategy, etcd3 storage), without HTTP: the pure core of the Lease API
/// emulator (k8s_api_emulator.hpp), unit-testable without sockets.

namespace troupe::test {

/// Deliberate rule breaks, for checking that the emulator's own tests catch
/// them (planted-bug checks). Never set outside such a check.
enum class k8s_planted_bug : uint8_t {
  none,
  /// PUT ignores a stale metadata.resourceVersion (no 409 Conflict).
  accept_stale_resource_version,
};

/// Options of a `k8s_lease_store`.
struct k8s_lease_store_options {
  /// The namespaces that exist; empty means every namespace exists. A write
  /// into another one answers 404 `namespaces "NS" not found`, as the
  /// NamespaceLifecycle admission plugin does.
  std::vector<std::string> namespaces;
  k8s_planted_bug planted_bug = k8s_planted_bug::none;
};

/// What a write takes from outside: the store reads no clock and draws no
/// random numbers.
struct k8s_write_context {
  /// `metadata.creationTimestamp` of an object this write creates (RFC 3339
  /// with seconds, e.g. "2024-05-01T10:00:00Z").
  std::string now;
  /// `metadata.uid` of an object this write creates.
  std::string new_uid;
  /// Set when the authorizer denies `create`: a PUT that would create the
  /// object answers this (after validation), as handlers/update.go does.
  std::optional<k8s_status> create_denied;
};

/// The Lease objects of one emulated apiserver, with a single global
/// resourceVersion counter (etcd's revision) bumped by every write: create,
/// update, delete.
///
/// Each operation returns the HTTP answer the apiserver gives (status, JSON
/// body ending in a newline). The rules, in the apiserver's order:
/// - GET: 200 with the object, 404 NotFound.
/// - POST (`create`): decode (400) -> namespace in body must match the URL
///   (400) -> ValidateLease (422, kind `Lease`) -> namespace exists (404) ->
///   a numeric resourceVersion in the body is a 500 `resourceVersion should
///   not be set on objects to be created` -> name taken: 409 AlreadyExists
///   -> 201 with the object.
/// - PUT (`replace`): decode (400) -> name must match the URL (400) ->
///   namespace (400) -> a uid in the body is a precondition: a mismatch
///   (also against a missing object) is 409 Conflict with the etcd3
///   StorageError text -> a resourceVersion that is not a decimal is a 500
///   -> missing object: validate (422), `create_denied` (403), namespace
///   exists (404), create: 201, whatever resourceVersion was sent ->
///   resourceVersion missing or "0": 422 Invalid (kind `leases`,
///   `metadata.resourceVersion: Invalid value: 0x0: must be specified for an
///   update`) -> stale: 409 Conflict (optimistic-lock text) -> validate
///   (422) -> 200. uid and creationTimestamp are kept from the stored
///   object. An update that changes nothing is not written: 200 with the
///   same resourceVersion (etcd3 GuaranteedUpdate skips identical bytes).
/// - PATCH (`merge_patch`, RFC 7386 on the stored object): 404 when missing,
///   then as PUT; a resourceVersion in the patch is a precondition.
/// - DELETE (`remove`): decode DeleteOptions (500 when malformed) -> 404 ->
///   preconditions uid then resourceVersion (409 Conflict, kind `Lease`,
///   rest/delete.go's texts) -> 200 Status Success, details {name, group,
///   kind: leases, uid}.
///
/// Thread-safety: none; the emulator serializes calls.
class k8s_lease_store {
public:
  explicit k8s_lease_store(k8s_lease_store_options opts = {});

  k8s_reply get(std::string_view ns, std::string_view name) const;

  /// LeaseList of `ns`, or of every namespace when `ns` is empty; sorted by
  /// namespace, then name (etcd key order).
  k8s_reply list(std::string_view ns) const;

  k8s_reply create(std::string_view ns, std::string_view body,
                   const k8s_write_context& ctx);

  k8s_reply replace(std::string_view ns, std::string_view name,
                    std::string_view body, const k8s_write_context& ctx);

  k8s_reply merge_patch(std::string_view ns, std::string_view name,
                        std::string_view patch, const k8s_write_context& ctx);

  k8s_reply remove(std::string_view ns, std::string_view name,
                   std::string_view body);

  /// The stored object, or nullptr. Valid until the next write.
  const k8s_lease* find(std::string_view ns, std::string_view name) const;

  /// Every stored object, in list order.
  std::vector<k8s_lease> all() const;

  /// Writes `spec_json` (a JSON object, decoded as a PUT body's spec) as the
  /// spec of ns/name without any check but decoding (an out-of-band writer,
  /// e.g. `kubectl apply`); creates the object when missing; bumps the
  /// resourceVersion. Errors: the 400 a PUT with that spec would get.
  std::variant<k8s_lease, k8s_status> put(std::string_view ns,
                                          std::string_view name,
                                          std::string_view spec_json,
                                          const k8s_write_context& ctx);

  /// Removes ns/name (e.g. `kubectl delete lease`); bumps the
  /// resourceVersion. False if there was no such object.
  bool erase(std::string_view ns, std::string_view name);

  /// The current value of the global counter, as a decimal string ("1"
  /// before any write).
  std::string resource_version() const;

  /// Raises the global counter for a write and returns its new value: the
  /// etcd revision of the emulated server, which writes of every resource
  /// raise (the pods' too).
  std::string next_revision();

  /// Successful writes so far (creates, updates, deletes; no-op updates do
  /// not count).
  uint64_t writes() const noexcept {
    return writes_;
  }

private:
  // The PUT/PATCH path once the body is decoded.
  k8s_reply update(std::string_view ns, std::string_view name,
                   k8s_lease_body body, const k8s_write_context& ctx);

  k8s_reply store_new(std::string_view ns, k8s_lease_body body,
                      const k8s_write_context& ctx);

  bool namespace_exists(std::string_view ns) const;

  k8s_lease_store_options opts_;
  std::set<std::string, std::less<>> namespaces_;
  std::map<std::string, k8s_lease, std::less<>> objects_;
  uint64_t revision_ = 1;
  uint64_t writes_ = 0;
};

} // namespace troupe::test
