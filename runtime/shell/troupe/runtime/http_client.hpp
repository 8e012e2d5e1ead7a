#pragma once

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "troupe/runtime/http_types.hpp"

/// @file
/// troupe's asynchronous HTTP(S) client as a CAF actor (DESIGN.md §2).

namespace troupe::runtime {

/// The HTTP client's protocol: one `http_request` in, one `http_response`
/// (any status code) or a `caf::error` of category "runtime" out.
///
/// Errors carry runtime::errc codes (see `to_caf_error`, caf_glue.hpp) and a
/// message that names the method, the URL and the failed stage:
/// `http_bad_request` (invalid URL, method or header; non-positive timeout;
/// answered without any I/O), `http_connect_failed`, `http_timeout`,
/// `http_tls_failed`, `http_response_too_large`, `http_malformed_response`
/// and `http_shutdown` (the client terminated first). The semantics of each
/// are those of `http_engine` (http_engine.hpp).
using http_client_actor
  = caf::typed_actor<caf::replies_to<http_request>::with<http_response>>;

/// Spawns an HTTP client: an actor that owns one `http_engine` (one io
/// thread). Requests run concurrently; each completes within its own
/// `http_request::timeout` (plus scheduling delay). `tls` applies to every
/// https:// request; TLS setup problems surface as `http_tls_failed` on
/// those requests. When the actor terminates, the engine shuts down and
/// pending requests are answered with `http_shutdown`.
///
/// Requires the runtime's message types (`add_runtime_types`) only when
/// requests cross a node boundary. Thread-safety: as any actor handle.
http_client_actor spawn_http_client(caf::actor_system& sys,
                                    http_tls_settings tls = {});

} // namespace troupe::runtime
