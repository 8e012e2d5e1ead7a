#pragma once

// The singleton of docs/guides/singleton-with-lease.md: a job scheduler that
// runs the jobs it was given, one per second, while its lease holds, and
// stamps every run with the fencing token of the acquisition that guards it.
// Jobs arrive through singleton proxies as (remote_ref from, std::string).

#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>

#include "troupe/cluster/remote_ref.hpp"
#include "troupe/singleton/singleton.hpp"

using run_jobs_atom = caf::atom_constant<caf::atom("runjobs")>;

inline caf::behavior
job_scheduler(caf::event_based_actor* self,
              const troupe::singleton::instance_context& ctx) {
  auto jobs = std::make_shared<std::deque<std::string>>();
  std::printf("job scheduler %llu started under fencing token %llu\n",
              static_cast<unsigned long long>(ctx.incarnation),
              static_cast<unsigned long long>(ctx.fencing_token));
  std::fflush(stdout);
  self->send(self, run_jobs_atom::value);
  return {
    [jobs](const troupe::cluster::remote_ref&, const std::string& job) {
      jobs->push_back(job); // from a proxy, anywhere in the cluster
    },
    [self, ctx, jobs](run_jobs_atom) {
      // Guarded work: re-check before every side effect, and pass the token
      // on so that the job's target can refuse a stale scheduler.
      if (!jobs->empty() && ctx.lease_alive()) {
        std::printf("ran %s under fencing token %llu\n", jobs->front().c_str(),
                    static_cast<unsigned long long>(ctx.fencing_token));
        std::fflush(stdout);
        jobs->pop_front();
      }
      self->delayed_send(self, std::chrono::seconds{1}, run_jobs_atom::value);
    },
  };
}
