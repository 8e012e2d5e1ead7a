#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// The management API's routing: an HTTP request in, a response out
/// (docs/design/management.md). Pure: no sockets, no clock, no CAF; the
/// server (edge) parses HTTP and the sources (shell) read the modules.
///
/// Paths and verbs follow Akka Management's cluster HTTP API
/// (`/cluster/members`, `PUT /cluster/members/{address}` with
/// `operation=leave|down`, `/cluster/shards/{type}`) and its health checks
/// (`/ready`, `/alive`); `/singletons`, `/leases`, `/metrics`, `/` (the
/// dashboard) and `/faults` (fault injection for tests and the demo, off
/// by default) are troupe's; `GET /bootstrap/seed-nodes` is Cluster
/// Bootstrap's probe (no token: bootstrapping nodes read it). Answers are JSON
/// with snake_case fields; errors are `{"error": "..."}` with a 4xx or 503
/// status.

namespace troupe::management {

/// One request as the server parsed it.
struct http_request {
  /// "GET", "PUT", ... (case-sensitive, as HTTP says).
  std::string method;
  /// The request target: path and optional query, percent-encoded.
  std::string target;
  /// The `Authorization` header ("" if absent). Never logged.
  std::string authorization;
  /// The `Content-Type` header ("" if absent).
  std::string content_type;
  std::string body;
};

/// One response.
struct http_response {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// For 405: the methods the path takes (the `Allow` header).
  std::string allow;
};

/// A member of this node's view.
struct member_view {
  /// `host:port#uid`.
  std::string address;
  /// Akka's status names in lower case: "joining", "weakly_up", "up",
  /// "leaving", "exiting", "down", "removed".
  std::string status;
  std::vector<std::string> roles;
  /// The up number (the lower, the older; 0 before Up).
  int32_t up_number = 0;
  /// False when some member observes it unreachable.
  bool reachable = true;
  /// Its `cluster.app_version` (canonical form, e.g. "1.2.0").
  std::string app_version = "0.0.0";
};

/// A member some others observe unreachable.
struct unreachable_view {
  std::string address;
  std::vector<std::string> observed_by;
};

/// Another cluster of this cluster's name that this node met
/// (cluster_merge.hpp): two clusters formed apart, one of which leaves and
/// rejoins the other.
struct foreign_cluster_view {
  /// Its cluster incarnation, `<16 hex digits>@<ISO 8601 UTC>`.
  std::string incarnation;
  /// Its size as last reported (null: met without one, e.g. in a
  /// handshake).
  std::optional<uint64_t> size;
  /// The node it was last seen through, `host:port#uid`.
  std::string seen_via;
  /// When it was last seen, ISO 8601 UTC.
  std::string last_seen;
  /// Set when it was last reported leaving to join that incarnation.
  std::optional<std::string> merging_into;
};

/// `GET /cluster/members`. Leader (membership's), oldest (the singleton
/// role's lowest up number), singleton target (where singletons belong:
/// the oldest of the highest app_version) and lease holder are different
/// things and are never merged.
struct members_view {
  std::string self;
  std::optional<std::string> leader;
  std::optional<std::string> oldest;
  std::optional<std::string> singleton_target;
  std::vector<member_view> members;
  std::vector<unreachable_view> unreachable;
  /// This node's cluster incarnation (null before it joined).
  std::optional<std::string> incarnation;
  /// Set while this node's cluster leaves to join that incarnation.
  std::optional<std::string> merging_into;
  /// The other clusters of this name that this node met and has not
  /// forgotten; empty in a healthy deployment.
  std::vector<foreign_cluster_view> foreign_clusters;
};

/// One region of an entity type.
struct region_view {
  std::string address;
  std::vector<std::string> shards;
  /// Entities running there (0 when not known).
  uint64_t entities = 0;
};

/// `GET /cluster/shards/{type}`.
struct shards_view {
  std::string type;
  std::vector<region_view> regions;
};

/// One singleton type.
struct singleton_view {
  std::string type;
  /// The member running the instance, if any is known.
  std::optional<std::string> host;
  bool running_here = false;
  /// The fencing token of the instance's lease, if it uses one.
  std::optional<uint64_t> fencing_token;
};

/// One lease this node knows.
struct lease_view {
  std::string name;
  /// The holder identity ("" when free or unknown).
  std::string holder;
  std::optional<uint64_t> fencing_token;
  bool held_here = false;
  std::chrono::milliseconds ttl{0};
};

/// A health check's answer: `ok`, or the reason it is not.
struct health {
  bool ok = false;
  std::string reason;
};

/// What `PUT /cluster/members/{address}` asks for.
enum class member_operation { leave, down };

/// The direction of an injected fault, as the transport's `direction`:
/// `outbound` drops (or delays) what this node sends to the peer,
/// `inbound` what it receives from the peer.
enum class fault_direction { inbound, outbound };

/// `PUT /faults/{host:port}`: a fault on this node's link to one peer
/// endpoint (the transport's `link_fault`, cluster/transport.hpp). A
/// healthy value (no blackhole, no delay, no drops) heals the link.
struct fault_request {
  /// The peer's cluster endpoint, `host:port` (no uid: the fault stays
  /// when the peer restarts with a new one).
  std::string peer;
  /// One direction, or both when empty.
  std::vector<fault_direction> directions;
  bool blackhole = false;
  std::chrono::milliseconds delay{0};
  /// 0.0 to 1.0.
  double drop_probability = 0.0;
};

/// A fault in force (`GET /faults`).
struct fault_view {
  std::string peer;
  fault_direction direction = fault_direction::outbound;
  bool blackhole = false;
  std::chrono::milliseconds delay{0};
  double drop_probability = 0.0;
};

/// What the router reads and asks of the node. Implementations answer
/// within their own bound; an error with errc::unavailable becomes 503,
/// errc::unknown_member 404, errc::invalid_address or invalid_request 400,
/// anything else 500.
/// Called on the server's worker threads, possibly concurrently (one
/// request's gather must not hold the probes): implementations are
/// thread-safe.
class management_source {
public:
  virtual ~management_source() = default;
  virtual runtime::expected<members_view> members() const = 0;
  /// Null: no region of `type` on this node.
  virtual runtime::expected<std::optional<shards_view>>
  shards(std::string_view type) const = 0;
  virtual runtime::expected<std::vector<singleton_view>> singletons() const = 0;
  virtual runtime::expected<std::vector<lease_view>> leases() const = 0;
  /// Kubernetes readiness: Up (or WeaklyUp) and every module started.
  virtual health ready() const = 0;
  /// Kubernetes liveness: the actor system runs and shutdown has not begun.
  virtual health alive() const = 0;
  /// Prometheus text format 0.0.4.
  virtual runtime::expected<std::string> metrics_text() const = 0;
  /// Starts `op` for the member at `address` (as given: with or without
  /// `#uid`); the effect follows through gossip.
  virtual runtime::error apply(member_operation op, const std::string& address)
    = 0;
  /// `GET /bootstrap/seed-nodes` (Akka Management's Cluster Bootstrap
  /// route): this node's cluster address and, when it is an up or
  /// weakly_up member, the members a bootstrapping node may join through,
  /// as the JSON text of bootstrap/seed_nodes_answer.hpp.
  virtual runtime::expected<std::string> bootstrap_seed_nodes() const = 0;
  /// The faults in force, sorted by peer and direction.
  virtual runtime::expected<std::vector<fault_view>> faults() const = 0;
  /// Sets (or, with a healthy request, heals) the fault of each direction
  /// of `f`. Errors: errc::invalid_address for a peer that is not
  /// `host:port` or is this node.
  virtual runtime::error set_fault(const fault_request& f) = 0;
};

/// The router's settings (from `management.*`).
struct router_settings {
  /// Require `Authorization: Bearer <token>` for PUT (the server binds to a
  /// non-loopback address).
  bool require_token = false;
  /// The bearer token (a secret: never logged).
  std::string token;
  /// The dashboard page served at `/`.
  std::string dashboard_html;
  /// Larger bodies get 413.
  size_t max_body = 64 * 1024;
  /// Serve `/faults` (`management.fault_injection`); when false every
  /// request there gets 403 naming the key.
  bool fault_injection = false;
};

/// Answers `req`. Never throws; every error is a response naming what was
/// wrong (400 bad body or address, 401 token, 403 fault injection off,
/// 404 unknown path, member or type, 405 method with `allow`, 413 body too
/// large, 503 a module did not answer, 500 anything else).
///
/// Fault injection (`management.fault_injection`): `GET /faults` lists the
/// faults in force; `PUT /faults/{host:port}` with `blackhole=true`,
/// `delay_ms=N` and/or `drop_probability=P`, and `direction=inbound`,
/// `outbound` or `both` (the default), as a form or a JSON object, sets
/// them; `DELETE /faults/{host:port}` heals both directions of one peer,
/// `DELETE /faults` every peer. PUT and DELETE need the token like every
/// change.
http_response handle(management_source& source, const router_settings& s,
                     const http_request& req);

/// True for the requests whose answer never waits for a module or a
/// peer, which the server may answer on its io thread: GET and HEAD of
/// `/`, `/alive`, `/ready`, `/cluster/members[/{address}]`,
/// `/bootstrap/seed-nodes` and `/faults`
/// (each reads state this node holds under a lock). Everything else, and
/// any other method, may wait (`/singletons`, `/leases` and
/// `/cluster/shards/{type}` ask every member, `/metrics` asks the local
/// modules).
bool answers_without_waiting(const http_request& req);

/// One `name=value` field of a form body or a query string.
struct form_field {
  std::string name;
  std::string value;
};

/// A form or query string split into its fields.
struct parsed_form {
  /// In order, names and values percent-decoded; a field without `=` has
  /// an empty value.
  std::vector<form_field> fields;
  /// The raw name (at most 64 bytes) of the first field whose name or
  /// value has a broken `%`-escape; `fields` then holds the ones before.
  std::optional<std::string> broken;
};

/// Splits `x` (`a=1&b=2`, without a leading `?`). Pure; each caller
/// words its own error for `broken`.
parsed_form parse_form(std::string_view x);

/// Decodes `%XX` escapes (and nothing else: `+` stays). Null for a broken
/// escape.
std::optional<std::string> percent_decode(std::string_view x);

/// Constant-time comparison (for tokens): true if equal.
bool equal_secret(std::string_view a, std::string_view b) noexcept;

} // namespace troupe::management
