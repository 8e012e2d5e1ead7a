#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "transport_bench_common.hpp"
#include "troupe/cluster/remoting.hpp"

/// @file
/// The driver's actors of the transport benchmark: one-way senders and
/// ping-pong pingers, through troupe remoting and through CAF BASP.

namespace troupe::bench {

using cluster::remote_ref;
using cluster::remoting_handle;
using steady = std::chrono::steady_clock;

using count_promise = std::shared_ptr<std::promise<uint64_t>>;
using samples_promise = std::shared_ptr<std::promise<std::vector<double>>>;

caf::behavior troupe_sender(caf::event_based_actor* self,
                            remoting_handle remoting, remote_ref sink,
                            uint64_t count, count_promise done) {
  auto me = remoting.reply_ref(self);
  self->send(self, caf::atom("go"));
  return {
    [=](caf::atom_value) {
      for (uint64_t i = 0; i < count; ++i)
        remoting.send(sink, caf::make_message(make_payload()));
      remoting.send(sink, caf::make_message(bench_end{}), me);
    },
    [=](const remote_ref&, const bench_count& c) {
      done->set_value(c.n);
      self->quit();
    },
  };
}

caf::behavior basp_sender(caf::event_based_actor* self, caf::actor sink,
                          uint64_t count, count_promise done) {
  self->send(self, caf::atom("go"));
  return {
    [=](caf::atom_value) {
      for (uint64_t i = 0; i < count; ++i)
        self->send(sink, make_payload());
      self->request(sink, caf::infinite, bench_end{})
        .then([=](const bench_count& c) {
          done->set_value(c.n);
          self->quit();
        });
    },
  };
}

// Ping-pong: one payload in flight; records each round trip in us.
struct pinger_state {
  std::vector<double> samples;
  steady::time_point t0;
  int left = 0;
};

template <class SendFn>
bool record_pong(const std::shared_ptr<pinger_state>& st,
                 const samples_promise& done, SendFn send) {
  st->samples.push_back(
    std::chrono::duration<double, std::micro>(steady::now() - st->t0).count());
  if (--st->left > 0) {
    st->t0 = steady::now();
    send();
    return true;
  }
  done->set_value(std::move(st->samples));
  return false;
}

caf::behavior troupe_pinger(caf::event_based_actor* self,
                            remoting_handle remoting, remote_ref echo, int k,
                            samples_promise done) {
  auto st = std::make_shared<pinger_state>();
  st->left = k;
  auto me = remoting.reply_ref(self);
  auto send
    = [=] { remoting.send(echo, caf::make_message(make_payload()), me); };
  self->send(self, caf::atom("go"));
  return {
    [=](caf::atom_value) {
      st->t0 = steady::now();
      send();
    },
    [=](const remote_ref&, const bench_payload&) {
      if (!record_pong(st, done, send))
        self->quit();
    },
  };
}

caf::behavior basp_pinger(caf::event_based_actor* self, caf::actor echo, int k,
                          samples_promise done) {
  auto st = std::make_shared<pinger_state>();
  st->left = k;
  auto send = [=] { self->send(echo, make_payload()); };
  self->send(self, caf::atom("go"));
  return {
    [=](caf::atom_value) {
      st->t0 = steady::now();
      send();
    },
    [=](const bench_payload&) {
      if (!record_pong(st, done, send))
        self->quit();
    },
  };
}

} // namespace troupe::bench
