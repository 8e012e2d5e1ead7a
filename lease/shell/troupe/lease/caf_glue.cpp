#include "troupe/lease/caf_glue.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_messages.hpp"
#include "troupe/runtime/caf_glue.hpp"

namespace troupe::lease {

void add_lease_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<acquire_result>("troupe.lease.acquire_result");
  cfg.add_message_type<lease_lost>("troupe.lease.lease_lost");
  cfg.add_message_type<lease_status>("troupe.lease.lease_status");
  cfg.add_message_type<backend_replied>("troupe.lease.backend_replied");
  cfg.add_message_type<timer_fired>("troupe.lease.timer_fired");
  runtime::add_error_category<errc>(cfg);
}

runtime::module lease_module() {
  return runtime::module{"lease", declare_lease_config, add_lease_types};
}

} // namespace troupe::lease
