// Fuzzes everything the Kubernetes backend parses from the API server: Lease
// objects, Status bodies, MicroTime, and the write body built on top of a
// Lease the server sent. Any input must give a value or an error; ASan and
// UBSan catch the rest.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "troupe/lease/kubernetes_lease_object.hpp"

using namespace troupe::lease;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input{reinterpret_cast<const char*>(data), size};
  if (auto x = parse_kubernetes_lease(input)) {
    // Everything parsed must survive a write and parse back to the same
    // holder and resourceVersion.
    kubernetes_lease_write w;
    w.name = x->name;
    w.namespace_name = x->namespace_name;
    w.resource_version = x->resource_version;
    w.holder_identity = x->holder();
    w.lease_transitions = x->lease_transitions.value_or(0) + 1;
    w.acquisition = x->acquisition;
    auto body = render_kubernetes_lease(x->raw, w);
    if (!body)
      __builtin_trap();
    auto y = parse_kubernetes_lease(*body);
    if (!y || y->holder() != x->holder()
        || y->resource_version != x->resource_version
        || y->lease_transitions != w.lease_transitions)
      __builtin_trap();
  }
  (void)parse_kubernetes_status(input);
  if (auto t = parse_micro_time(input)) {
    // A parsed MicroTime formats back to a parseable one.
    if (!parse_micro_time(format_micro_time(*t)))
      __builtin_trap();
  }
  (void)validate_dns1123_subdomain(input, "fuzz");
  return 0;
}
