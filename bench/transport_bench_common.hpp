#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>
#include <caf/meta/type_name.hpp>

#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/runtime/caf_glue.hpp"

/// @file
/// What the transport benchmark's two processes share: message types, the
/// CAF configuration (same scheduler settings on both sides), the raw TCP
/// frame format and the transport settings.

namespace troupe::bench {

/// The payload size of every benchmark message, in bytes.
inline constexpr size_t payload_size = 100;

/// A benchmark message: 100 bytes of data.
struct bench_payload {
  std::string data;
};

template <class Inspector>
auto inspect(Inspector& f, bench_payload& x) {
  return f(caf::meta::type_name("bench_payload"), x.data);
}

/// Marks the end of a one-way run; the sink answers with the count.
struct bench_end {};

template <class Inspector>
auto inspect(Inspector& f, bench_end&) {
  return f(caf::meta::type_name("bench_end"));
}

/// How many payloads the sink received since the last end.
struct bench_count {
  uint64_t n = 0;
};

template <class Inspector>
auto inspect(Inspector& f, bench_count& x) {
  return f(caf::meta::type_name("bench_count"), x.n);
}

inline bench_payload make_payload() {
  return bench_payload{std::string(payload_size, 'p')};
}

/// The CAF configuration of both processes: 2 workers; `tuned` sets
/// work-stealing.moderate-sleep-duration to 0us (caf-notes.md §9; DESIGN
/// §10: both sides use the same settings).
struct bench_config : caf::actor_system_config {
  explicit bench_config(bool tuned) {
    runtime::add_runtime_types(*this);
    cluster::add_cluster_types(*this);
    add_message_type<bench_payload>("troupe.bench.payload");
    add_message_type<bench_end>("troupe.bench.end");
    add_message_type<bench_count>("troupe.bench.count");
    set("scheduler.max-threads", size_t{2});
    set("logger.file-verbosity", caf::atom("quiet"));
    set("logger.console-verbosity", caf::atom("quiet"));
    if (tuned)
      set("work-stealing.moderate-sleep-duration", caf::timespan{0});
    load<caf::io::middleman>();
  }
};

inline const std::string bench_secret = "transport-benchmark-secret-0123456789";

/// Loopback transport settings; queues large enough that a one-way burst
/// never overflows (BASP has no bound at all).
inline cluster::tcp_transport_settings bench_transport_settings() {
  cluster::tcp_transport_settings s;
  s.cluster_name = "bench";
  s.local = {"127.0.0.1", 0, 0};
  s.secret = runtime::secret{bench_secret};
  s.outbound_queue_size = 4'000'000;
  return s;
}

// -- raw TCP frames -----------------------------------------------------------

/// A raw TCP frame: 8-byte header (byte 0: kind) plus the 100-byte payload,
/// the same shape as a transport frame.
inline constexpr size_t raw_frame_size = 8 + payload_size;

/// Frame kinds of the raw TCP pump.
inline constexpr char raw_data = 'D';
inline constexpr char raw_end = 'E';

inline std::vector<char> raw_frames(size_t n, char kind) {
  std::vector<char> buf(n * raw_frame_size, 'p');
  for (size_t i = 0; i < n; ++i)
    buf[i * raw_frame_size] = kind;
  return buf;
}

} // namespace troupe::bench
