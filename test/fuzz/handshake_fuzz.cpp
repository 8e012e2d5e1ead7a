// libFuzzer target: both sides of the handshake fed arbitrary messages.
// Input: length-prefixed messages (1 length byte each), alternately for a
// client (after its hello) and a server. Never crashes; nothing is ever
// established without the secret (the fuzzer does not know it).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "troupe/cluster/handshake.hpp"

using namespace troupe::cluster;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  handshake_settings local{"fuzz",
                           {"10.0.0.1", 2552, 7},
                           troupe::runtime::secret{"fuzz-secret-0123456789"}};
  nonce n{};
  auto client = handshake::client(local, {"10.0.0.2", 2552}, n);
  auto server = handshake::server(local, n);
  client.start();
  bool to_client = true;
  size_t pos = 0;
  while (pos < size) {
    size_t len = data[pos++];
    len = std::min(len, size - pos);
    auto msg = std::as_bytes(std::span{data + pos, len});
    pos += len;
    auto& side = to_client ? client : server;
    auto step = side.on_message(msg);
    // The server may legitimately answer a well-formed hello with a
    // challenge; establishing needs a MAC under the unknown secret.
    if (step.status == handshake_status::established)
      std::abort();
    to_client = !to_client;
  }
  return 0;
}
