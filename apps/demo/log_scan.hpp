#pragma once

#include <string>
#include <string_view>

/// @file
/// Reading a node's log for the launcher's messages. Pure.

namespace troupe::demo {

/// The last line of a node's log (`text`) at level warning or error whose
/// message mentions `about` (e.g. "lease"), without its time stamp; empty
/// if there is none. For a setup error that should name its cause, which
/// only the node's log knows.
std::string last_problem(std::string_view text, std::string_view about);

} // namespace troupe::demo
