// libFuzzer target: both sides of the handshake fed arbitrary messages.
// Input: length-prefixed messages (1 length byte each), alternately for a
// client (after its hello) and the servers: one of this build's protocol
// major and one of another major (the version refusal path). Never
// crashes; nothing is ever established without the secret (the fuzzer
// does not know it), and the other major's server never establishes.

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
  auto other = local;
  other.protocol = {static_cast<uint8_t>(protocol_major + 1), 3};
  nonce n{};
  auto client = handshake::client(local, {"10.0.0.2", 2552}, n);
  auto server = handshake::server(local, n);
  auto foreign = handshake::server(other, n);
  client.start();
  bool to_client = true;
  size_t pos = 0;
  while (pos < size) {
    size_t len = data[pos++];
    len = std::min(len, size - pos);
    auto msg = std::as_bytes(std::span{data + pos, len});
    pos += len;
    // The server may legitimately answer a well-formed hello with a
    // challenge; establishing needs a MAC under the unknown secret, and a
    // refusal goes only to a peer whose proof verified.
    if (to_client) {
      if (client.on_message(msg).status == handshake_status::established)
        std::abort();
    } else {
      if (server.on_message(msg).status == handshake_status::established)
        std::abort();
      auto step = foreign.on_message(msg);
      if (step.status == handshake_status::established
          || (step.status == handshake_status::failed && !step.send.empty()))
        std::abort();
    }
    to_client = !to_client;
  }
  return 0;
}
