#pragma once

// The singleton of docs/guides/singleton-with-lease.md: a job scheduler that
// runs one job per second while its lease holds, and stamps every job with
// the fencing token of the acquisition that guards it.

#include <chrono>
#include <cstdio>

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>

#include "troupe/singleton/singleton.hpp"

using run_jobs_atom = caf::atom_constant<caf::atom("runjobs")>;

inline caf::behavior
job_scheduler(caf::event_based_actor* self,
              const troupe::singleton::instance_context& ctx) {
  self->send(self, run_jobs_atom::value);
  return {
    [self, ctx, next = uint64_t{1}](run_jobs_atom) mutable {
      // Guarded work: re-check before every side effect, and pass the token
      // on so that the job's target can refuse a stale scheduler.
      if (ctx.lease_alive())
        std::printf("job %llu under fencing token %llu\n",
                    static_cast<unsigned long long>(next++),
                    static_cast<unsigned long long>(ctx.fencing_token));
      self->delayed_send(self, std::chrono::seconds{1}, run_jobs_atom::value);
    },
  };
}
