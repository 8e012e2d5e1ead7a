#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include <string>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"

/// @file
/// The runtime module's CAF registrations and the error bridge.

namespace troupe::runtime {

/// Converts a CAF-free error into a caf::error with the same category (as
/// an atom, e.g. "lease") and code; the message travels as the error's
/// context. An empty error becomes an empty caf::error.
caf::error to_caf_error(const error& err);

/// The message text of a caf::error made by to_caf_error (empty if none).
std::string error_message(const caf::error& err);

/// Registers the error category of a module's `errc` enum with CAF: errors
/// render as `<category>: <to_string(errc)> (<message>)`. `Errc` needs
/// `to_string(Errc)` and `category_name(Errc)` (found by ADL).
template <class Errc>
void add_error_category(caf::actor_system_config& cfg) {
  auto category = category_name(Errc{});
  cfg.add_error_category(
    caf::atom_from_string(category),
    [category](uint8_t code, caf::atom_value, const caf::message& ctx) {
      std::string result = category;
      result += ": ";
      result += to_string(static_cast<Errc>(code));
      if (!ctx.empty() && ctx.match_element<std::string>(0)) {
        result += " (";
        result += ctx.get_as<std::string>(0);
        result += ")";
      }
      return result;
    });
}

/// Registers the runtime's message types (unique_address, HTTP types) and
/// the "runtime" error category.
void add_runtime_types(caf::actor_system_config& cfg);

/// Declares the runtime's configuration keys (log.*, scheduler.*, node.*).
void declare_runtime_config(config_schema& schema);

/// The runtime module descriptor for `node::start`.
module runtime_module();

} // namespace troupe::runtime
