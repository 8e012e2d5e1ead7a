// Fuzzes everything the etcd backend parses from etcd's JSON gateway: grant,
// txn, range, keepalive (both error shapes), authenticate and error bodies,
// the answer classification for every status class, and base64/int64
// decoding. Any input must give a value or an error; ASan and UBSan catch
// the rest. A decoded base64 value must encode back to a decodable string.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "troupe/lease/etcd_protocol.hpp"

using namespace troupe::lease::etcd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input{reinterpret_cast<const char*>(data), size};
  (void)parse_grant_response(input);
  if (auto t = parse_txn_response(input))
    for (auto& kv : t->range_kvs) {
      auto back = base64_decode(base64_encode(kv.key));
      if (!back || *back != kv.key)
        __builtin_trap();
    }
  (void)parse_range_response(input);
  (void)parse_keepalive_response(input);
  (void)parse_authenticate_response(input);
  (void)parse_error_body(input);
  for (uint16_t status : {200, 400, 401, 403, 404, 412, 429, 500, 503})
    (void)classify_answer(status, input);
  (void)parse_int64(input);
  if (auto bytes = base64_decode(input)) {
    auto again = base64_decode(base64_encode(*bytes));
    if (!again || *again != *bytes)
      __builtin_trap();
  }
  (void)is_valid_utf8(input);
  (void)escape_for_message(input);
  return 0;
}
