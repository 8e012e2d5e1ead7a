#include "troupe/lease/outcome.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::lease {

namespace {

bool names_us(const backend_reply& r, std::string_view owner,
              uint64_t acquisition) {
  return r.holder == owner
         && (r.acquisition == 0 || r.acquisition == acquisition);
}

std::string with_detail(std::string text, const backend_reply& r) {
  if (!r.detail.empty()) {
    text += ": ";
    text += r.detail;
  }
  return text;
}

} // namespace

std::string_view to_string(outcome_kind x) noexcept {
  switch (x) {
    case outcome_kind::success:
      return "success";
    case outcome_kind::held_by_other:
      return "held_by_other";
    case outcome_kind::lost:
      return "lost";
    case outcome_kind::retry:
      return "retry";
    case outcome_kind::refused:
      return "refused";
  }
  return "unknown";
}

outcome classify(backend_op op, const backend_reply& r, std::string_view owner,
                 uint64_t acquisition) {
  using k = outcome_kind;
  switch (r.status) {
    case backend_status::ok:
      return {k::success, {}};
    case backend_status::held:
      if (names_us(r, owner, acquisition)) {
        if (op == backend_op::release)
          return {k::retry, with_detail("release did not take effect", r)};
        return {k::success, {}};
      }
      if (op == backend_op::acquire)
        return {k::held_by_other,
                fmt::format("held by \"{}\"", escape_for_message(r.holder))};
      if (op == backend_op::renew)
        return {k::lost,
                with_detail(fmt::format("taken over by \"{}\" "
                                        "(token {})",
                                        escape_for_message(r.holder), r.token),
                            r)};
      return {k::success, {}}; // release: not ours any more counts as released
    case backend_status::not_found:
      if (op == backend_op::renew)
        return {k::lost, with_detail("record is gone (expired or deleted)", r)};
      if (op == backend_op::release)
        return {k::success, {}};
      return {k::retry, with_detail("acquire found no record to write", r)};
    case backend_status::conflict:
      return {k::retry, with_detail("concurrent modification", r)};
    case backend_status::unavailable:
      return {k::retry, with_detail("backend unavailable", r)};
    case backend_status::rejected:
      if (op == backend_op::renew)
        return {k::retry, with_detail("renewal refused", r)};
      return {k::refused, with_detail("refused", r)};
  }
  return {k::retry, "unknown status"};
}

} // namespace troupe::lease
