#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "troupe/cluster/transport.hpp"
#include "troupe/test/eventually.hpp"

// A transport_listener that records everything, for the sim and TCP
// transport tests. Thread-safe (the TCP transport calls it from its io
// thread while the test reads).

namespace troupe::test {

struct recorded_frame {
  cluster::unique_address from;
  cluster::lane lane;
  std::string payload;
};

class recording_listener : public cluster::transport_listener {
public:
  void on_frame(const cluster::unique_address& from, cluster::lane lane,
                std::span<const std::byte> payload) override {
    {
      // Held: the transport's io thread waits here, so the node stops
      // reading its sockets and the sender's writes come up short.
      std::unique_lock gate{gate_mtx_};
      gate_cv_.wait(gate, [this] { return !held_; });
    }
    std::lock_guard guard{mtx_};
    frames_.push_back(
      {from, lane,
       std::string{reinterpret_cast<const char*>(payload.data()),
                   payload.size()}});
  }

  void on_peer_up(const cluster::unique_address& peer,
                  cluster::direction dir) override {
    add_event(fmt::format("up {} {}", to_string(dir), to_string(peer)));
  }

  void on_peer_down(const cluster::unique_address& peer, cluster::direction dir,
                    std::string_view) override {
    add_event(fmt::format("down {} {}", to_string(dir), to_string(peer)));
  }

  void on_peer_quarantined(const cluster::unique_address& peer,
                           std::string_view) override {
    add_event(fmt::format("quarantined {}", to_string(peer)));
  }

  void
  on_foreign_incarnation(const cluster::unique_address& peer,
                         const cluster::cluster_incarnation& theirs) override {
    add_event(fmt::format("foreign {} {}", to_string(peer), to_string(theirs)));
  }

  void on_dropped(const cluster::unique_address&, cluster::lane,
                  cluster::drop_reason reason, uint64_t count) override {
    std::lock_guard guard{mtx_};
    dropped_[static_cast<size_t>(reason)] += count;
  }

  /// Makes the next frame's callback wait until `release()`.
  void hold() {
    std::lock_guard gate{gate_mtx_};
    held_ = true;
  }

  void release() {
    {
      std::lock_guard gate{gate_mtx_};
      held_ = false;
    }
    gate_cv_.notify_all();
  }

  std::vector<recorded_frame> frames() const {
    std::lock_guard guard{mtx_};
    return frames_;
  }

  // Payloads from `from`'s endpoint on `lane`, in arrival order.
  std::vector<std::string> payloads(const cluster::endpoint& from,
                                    cluster::lane lane) const {
    std::lock_guard guard{mtx_};
    std::vector<std::string> out;
    for (auto& f : frames_)
      if (cluster::endpoint_of(f.from) == from && f.lane == lane)
        out.push_back(f.payload);
    return out;
  }

  size_t frame_count() const {
    std::lock_guard guard{mtx_};
    return frames_.size();
  }

  std::vector<std::string> events() const {
    std::lock_guard guard{mtx_};
    return events_;
  }

  bool has_event(const std::string& e) const {
    std::lock_guard guard{mtx_};
    for (auto& x : events_)
      if (x == e)
        return true;
    return false;
  }

  uint64_t dropped(cluster::drop_reason reason) const {
    std::lock_guard guard{mtx_};
    return dropped_[static_cast<size_t>(reason)];
  }

  void clear() {
    std::lock_guard guard{mtx_};
    frames_.clear();
    events_.clear();
    dropped_ = {};
  }

private:
  void add_event(std::string e) {
    std::lock_guard guard{mtx_};
    events_.push_back(std::move(e));
  }

  mutable std::mutex mtx_;
  std::mutex gate_mtx_;
  std::condition_variable gate_cv_;
  bool held_ = false;
  std::vector<recorded_frame> frames_;
  std::vector<std::string> events_;
  std::array<uint64_t, cluster::drop_reason_count> dropped_{};
};

inline std::vector<std::byte> bytes_of(std::string_view s) {
  auto b = std::as_bytes(std::span{s.data(), s.size()});
  return {b.begin(), b.end()};
}

} // namespace troupe::test
