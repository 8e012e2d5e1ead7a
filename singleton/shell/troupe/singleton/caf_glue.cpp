#include "troupe/singleton/caf_glue.hpp"

#include <caf/actor_system_config.hpp>

#include "troupe/runtime/caf_glue.hpp"
#include "troupe/singleton/errc.hpp"
#include "troupe/singleton/hand_over.hpp"
#include "troupe/singleton/singleton_protocol.hpp"
#include "troupe/singleton/singleton_settings.hpp"

namespace troupe::singleton {

void add_singleton_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<hand_over_to_me>("troupe.singleton.hand_over_to_me");
  cfg.add_message_type<hand_over_in_progress>(
    "troupe.singleton.hand_over_in_progress");
  cfg.add_message_type<hand_over_done>("troupe.singleton.hand_over_done");
  cfg.add_message_type<take_over_from_me>("troupe.singleton.take_over_from_me");
  cfg.add_message_type<identify_singleton>(
    "troupe.singleton.identify_singleton");
  cfg.add_message_type<singleton_identity>(
    "troupe.singleton.singleton_identity");
  runtime::add_error_category<errc>(cfg);
}

runtime::module singleton_module() {
  return runtime::module{"singleton", declare_singleton_config,
                         add_singleton_types};
}

} // namespace troupe::singleton
