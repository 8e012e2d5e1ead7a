#include "troupe/cluster/member.hpp"

#include <algorithm>
#include <tuple>

#include "troupe/cluster/membership_errc.hpp"

namespace troupe::cluster {

const char* to_string(membership_errc x) noexcept {
  switch (x) {
    case membership_errc::none:
      return "none";
    case membership_errc::invalid_transition:
      return "invalid_transition";
    case membership_errc::unknown_status:
      return "unknown_status";
    case membership_errc::unknown_member:
      return "unknown_member";
  }
  return "unknown";
}

const char* to_string(member_status x) noexcept {
  switch (x) {
    case member_status::joining:
      return "joining";
    case member_status::weakly_up:
      return "weakly_up";
    case member_status::up:
      return "up";
    case member_status::leaving:
      return "leaving";
    case member_status::exiting:
      return "exiting";
    case member_status::down:
      return "down";
    case member_status::removed:
      return "removed";
  }
  return "unknown";
}

runtime::expected<member_status> parse_member_status(std::string_view text) {
  for (auto x : all_member_statuses)
    if (text == to_string(x))
      return x;
  std::string msg = "unknown member status \"";
  msg += text;
  msg += "\" (expected joining, weakly_up, up, leaving, exiting, down or "
         "removed)";
  return runtime::make_error(membership_errc::unknown_status, std::move(msg));
}

bool is_allowed_transition(member_status from, member_status to) noexcept {
  using enum member_status;
  switch (from) {
    case joining:
      return to == weakly_up || to == up || to == leaving || to == down
             || to == removed;
    case weakly_up:
      return to == up || to == leaving || to == down || to == removed;
    case up:
      return to == leaving || to == down || to == removed;
    case leaving:
      return to == exiting || to == down || to == removed;
    case exiting:
      return to == removed || to == down;
    case down:
      return to == removed;
    case removed:
      return false;
  }
  return false;
}

int status_priority(member_status x) noexcept {
  // The declaration order of member_status is Akka's priority order
  // (removed > down > exiting > leaving > up > weakly_up > joining).
  return static_cast<int>(x);
}

member member::joining(unique_address address, std::vector<std::string> roles,
                       cluster::app_version version) {
  return member{std::move(address), member_status::joining,
                normalize_roles(std::move(roles)), no_up_number,
                std::move(version)};
}

bool member::has_role(std::string_view role) const noexcept {
  return std::binary_search(roles.begin(), roles.end(), role, std::less<>{});
}

bool member::is_older_than(const member& other) const noexcept {
  if (up_number != other.up_number)
    return up_number < other.up_number;
  return address < other.address;
}

runtime::expected<member> member::with_status(member_status to) const {
  if (to == status)
    return *this;
  if (!is_allowed_transition(status, to)) {
    std::string msg = "member ";
    msg += runtime::to_string(address);
    msg += ": status transition ";
    msg += to_string(status);
    msg += " -> ";
    msg += to_string(to);
    msg += " is not allowed (allowed from ";
    msg += to_string(status);
    msg += ":";
    bool any = false;
    for (auto x : all_member_statuses) {
      if (is_allowed_transition(status, x)) {
        msg += any ? ", " : " ";
        msg += to_string(x);
        any = true;
      }
    }
    msg += any ? ")" : " none)";
    return runtime::make_error(membership_errc::invalid_transition,
                               std::move(msg));
  }
  member result = *this;
  result.status = to;
  return result;
}

runtime::expected<member> member::with_up(int32_t new_up_number) const {
  auto result = with_status(member_status::up);
  if (result)
    result.value().up_number = new_up_number;
  return result;
}

std::vector<std::string> normalize_roles(std::vector<std::string> roles) {
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  return roles;
}

const member& highest_priority_of(const member& x, const member& y) noexcept {
  // A total order on records of one address; the merge keeps the maximum.
  // Higher priority wins; then the lower up_number (Akka keeps the older
  // record); then the smaller roles (only reachable with inconsistent
  // input, but it keeps the merge commutative).
  auto key = [](const member& m) {
    return std::make_tuple(status_priority(m.status), -int64_t{m.up_number});
  };
  auto kx = key(x);
  auto ky = key(y);
  if (kx != ky)
    return kx > ky ? x : y;
  if (x.roles != y.roles)
    return y.roles < x.roles ? y : x;
  return y.app_version < x.app_version ? y : x;
}

bool precedes_as_singleton_host(const member& x, const member& y) noexcept {
  if (x.app_version != y.app_version)
    return x.app_version > y.app_version;
  return x.is_older_than(y);
}

bool someone_stays(const std::vector<member>& members,
                   const unique_address& self) noexcept {
  return std::any_of(members.begin(), members.end(), [&](const member& m) {
    return m.address != self
           && (m.status == member_status::joining
               || m.status == member_status::weakly_up
               || m.status == member_status::up
               || m.status == member_status::leaving);
  });
}

std::string to_string(const member& x) {
  std::string result = runtime::to_string(x.address);
  result += ' ';
  result += to_string(x.status);
  result += " (up_number ";
  if (x.up_number == member::no_up_number)
    result += "none";
  else
    result += std::to_string(x.up_number);
  result += ", roles [";
  for (size_t i = 0; i < x.roles.size(); ++i) {
    if (i > 0)
      result += ',';
    result += x.roles[i];
  }
  result += "]";
  if (x.app_version != cluster::app_version{}) {
    result += ", app_version ";
    result += to_string(x.app_version);
  }
  result += ")";
  return result;
}

} // namespace troupe::cluster
