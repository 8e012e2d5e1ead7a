#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <poll.h>

#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/bootstrap/dns_answer.hpp"
#include "troupe/bootstrap/dns_discovery.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

struct ares_channeldata; // c-ares' channel (ares_channel is a pointer to it)

/// @file
/// One call of dns_discovery::discover in flight: its own c-ares channel,
/// the queries it sent, what they found so far. A part of dns_discovery
/// (its io thread drives every lookup); not meant for other callers.

namespace troupe::bootstrap::dns {

/// `DNS A/AAAA troupe.test` or `DNS SRV _management._tcp.troupe.test`: the
/// question of `opts`, for describe() and error messages.
std::string describe_question(const dns_discovery_options& opts);

/// A lookup from its first query to its result.
///
/// Life cycle: `start` sends the first queries; the io thread passes the
/// channel's ready sockets to `process` (c-ares runs the query callbacks
/// there, which may send further queries: the A/AAAA queries of SRV
/// targets) until `finished()`: every query answered, one failed, or
/// `fail` was called (deadline, shutdown). `complete` then destroys the
/// channel and calls `done` once.
///
/// Thread-safety: none; the io thread alone uses a lookup.
class lookup {
public:
  using callback = contact_point_discovery::callback;

  lookup(const dns_discovery_options& opts, runtime::timespan timeout,
         runtime::timestamp deadline, callback done);

  /// Destroys the channel if `complete` did not.
  ~lookup();

  lookup(const lookup&) = delete;
  lookup& operator=(const lookup&) = delete;

  /// Creates the channel and sends the first queries (A and AAAA of the
  /// service name, or its SRV query). May finish at once (c-ares could not
  /// start).
  void start();

  /// Appends the sockets c-ares waits on, with the events it waits for.
  void add_poll_fds(std::vector<pollfd>& fds) const;

  /// Lets c-ares read and write the ready sockets among `fds` (those
  /// add_poll_fds gave, after poll) and handle its retry timeouts.
  void process(std::span<const pollfd> fds);

  /// The earliest of the deadline and c-ares' next retry.
  runtime::timestamp next_wakeup(runtime::timestamp now) const;

  runtime::timestamp deadline() const noexcept {
    return deadline_;
  }

  /// True once the result is known.
  bool finished() const noexcept {
    return result_.has_value();
  }

  /// Ends the lookup with errc::discovery_unavailable saying `why`
  /// (prefixed with the question and the server), unless it finished.
  void fail(const std::string& why);

  /// Ends it with the deadline's error (`no answer within 500ms`).
  void expire();

  /// Destroys the channel, then calls `done` with the result. Only when
  /// finished(); at most once.
  void complete();

  /// Called by the query callbacks (public for them only).
  struct query;
  void on_answer(const query& q, int status,
                 std::span<const unsigned char> answer);

private:
  void send(query_type type, const std::string& name, bool search,
            std::string target = {});
  void on_addresses(const query& q, std::vector<std::string> addresses);
  void on_srv(const srv_answer& answer);
  void resolve_target(const std::string& target);
  void finish_if_done();
  void finish(runtime::error err);
  std::string where() const;

  struct target_state {
    std::vector<uint16_t> ports;
    address_set addresses;
    int pending = 0;
  };

  dns_discovery_options opts_;
  std::string name_;
  runtime::timespan timeout_;
  runtime::timestamp deadline_;
  callback done_;
  ares_channeldata* channel_ = nullptr;
  std::string server_;
  int pending_ = 0;
  std::vector<contact_point> points_;
  std::map<std::string, target_state> targets_;
  std::optional<runtime::expected<std::vector<contact_point>>> result_;
};

} // namespace troupe::bootstrap::dns
