// libFuzzer target: the frame decoder over arbitrary bytes in arbitrary
// chunks. Never crashes; every frame it yields is within bounds; after a
// violation it stays failed. Built and run by scripts/fuzz.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "troupe/cluster/frame.hpp"

using namespace troupe::cluster;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  // First byte: chunk size (1..256); second: max frame size class.
  size_t chunk = static_cast<size_t>(data[0]) + 1;
  uint32_t max = uint32_t{64} << (data[1] % 12);
  auto bytes = std::as_bytes(std::span{data + 2, size - 2});
  frame_decoder dec{max};
  for (size_t pos = 0; pos < bytes.size(); pos += chunk) {
    dec.feed(bytes.subspan(pos, std::min(chunk, bytes.size() - pos)));
    for (;;) {
      auto r = dec.next();
      if (r.status == decode_status::need_more)
        break;
      if (r.status == decode_status::failed) {
        if (!dec.failed() || r.violation == nullptr)
          std::abort();
        return 0;
      }
      if (r.frame.payload.size() > max)
        std::abort();
      if (r.frame.kind != frame_kind::handshake
          && r.frame.kind != frame_kind::message)
        std::abort();
    }
  }
  return 0;
}
