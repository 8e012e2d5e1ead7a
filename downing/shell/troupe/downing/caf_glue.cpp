#include "troupe/downing/caf_glue.hpp"

#include <caf/actor_system_config.hpp>

#include "troupe/downing/downing_settings.hpp"
#include "troupe/downing/errc.hpp"
#include "troupe/runtime/caf_glue.hpp"

namespace troupe::downing {

void add_downing_types(caf::actor_system_config& cfg) {
  runtime::add_error_category<errc>(cfg);
}

runtime::module downing_module() {
  return runtime::module{"downing", declare_downing_config, add_downing_types};
}

} // namespace troupe::downing
