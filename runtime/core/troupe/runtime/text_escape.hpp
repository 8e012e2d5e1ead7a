#pragma once

#include <cstddef>
#include <string>
#include <string_view>

/// @file
/// Quoting what a server or a store wrote (a holder name, a body, an API
/// server's message) in an error message or a log line, so that it cannot
/// forge lines or terminal escape codes. Pure functions over values.

namespace troupe::runtime {

/// `text` with `"`, `\` and bytes outside printable ASCII escaped (`\xNN`),
/// cut to at most `max_bytes` input bytes (`...` appended when cut): for
/// quoting a name or a body.
std::string escape_for_message(std::string_view text, size_t max_bytes = 80);

/// `text` with control bytes (below 0x20, and 0x7f) escaped (`\xNN`), cut
/// to at most `max_bytes` input bytes (`...` appended when cut); quotes and
/// UTF-8 stay readable: for a server's prose message.
std::string escape_controls(std::string_view text, size_t max_bytes = 300);

} // namespace troupe::runtime
