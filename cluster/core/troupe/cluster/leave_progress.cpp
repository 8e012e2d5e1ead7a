#include "troupe/cluster/leave_progress.hpp"

namespace troupe::cluster {

bool leave_reached(leave_stage stage, const member* self,
                   const std::vector<member>& members) noexcept {
  if (self == nullptr)
    return true;
  switch (self->status) {
    case member_status::down:
    case member_status::removed:
      return true;
    case member_status::exiting:
      return stage != leave_stage::removed
             || !someone_stays(members, self->address);
    case member_status::leaving:
      return stage == leave_stage::leaving;
    default:
      return false;
  }
}

} // namespace troupe::cluster
