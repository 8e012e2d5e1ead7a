#include "troupe/chaos/nemesis_ops.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::chaos {

namespace {

constexpr fault_kind every_kind[] = {
  fault_kind::kill,
  fault_kind::pause,
  fault_kind::partition_symmetric,
  fault_kind::partition_asymmetric,
  fault_kind::etcd_stop,
  fault_kind::etcd_slow,
  fault_kind::lease_delete,
  fault_kind::majority_restart,
  fault_kind::slow_restart,
};

} // namespace

const char* to_string(fault_kind x) noexcept {
  switch (x) {
    case fault_kind::kill:
      return "kill";
    case fault_kind::pause:
      return "pause";
    case fault_kind::partition_symmetric:
      return "partition_symmetric";
    case fault_kind::partition_asymmetric:
      return "partition_asymmetric";
    case fault_kind::etcd_stop:
      return "etcd_stop";
    case fault_kind::etcd_slow:
      return "etcd_slow";
    case fault_kind::lease_delete:
      return "lease_delete";
    case fault_kind::majority_restart:
      return "majority_restart";
    case fault_kind::slow_restart:
      return "slow_restart";
  }
  return "?";
}

std::vector<fault_kind> all_fault_kinds() {
  return {std::begin(every_kind), std::end(every_kind)};
}

runtime::expected<std::vector<fault_kind>>
parse_fault_kinds(std::string_view csv) {
  std::vector<fault_kind> out;
  auto add = [&out](fault_kind k) {
    if (std::find(out.begin(), out.end(), k) == out.end())
      out.push_back(k);
  };
  while (!csv.empty()) {
    auto comma = csv.find(',');
    auto name = csv.substr(0, comma);
    csv = comma == std::string_view::npos ? std::string_view{}
                                          : csv.substr(comma + 1);
    if (name.empty())
      continue;
    if (name == "all") {
      for (auto k : every_kind)
        add(k);
      continue;
    }
    auto i = std::find_if(std::begin(every_kind), std::end(every_kind),
                          [name](auto k) { return name == to_string(k); });
    if (i == std::end(every_kind)) {
      std::string known = "all";
      for (auto k : every_kind)
        known += std::string{", "} + to_string(k);
      return detail::nemesis_input_error(fmt::format(
        "faults: unknown fault kind \"{}\" (known: {})", name, known));
    }
    add(*i);
  }
  if (out.empty())
    return detail::nemesis_input_error("faults: the list names no fault kind");
  return out;
}

const char* to_string(step_op x) noexcept {
  switch (x) {
    case step_op::kill:
      return "kill";
    case step_op::restart:
      return "restart";
    case step_op::pause:
      return "pause";
    case step_op::resume:
      return "resume";
    case step_op::partition:
      return "partition";
    case step_op::heal:
      return "heal";
    case step_op::etcd_stop:
      return "etcd_stop";
    case step_op::etcd_start:
      return "etcd_start";
    case step_op::etcd_slow:
      return "etcd_slow";
    case step_op::etcd_fast:
      return "etcd_fast";
    case step_op::lease_delete:
      return "lease_delete";
    case step_op::links_slow:
      return "links_slow";
    case step_op::links_fast:
      return "links_fast";
  }
  return "?";
}

const char* to_string(partition_kind x) noexcept {
  return x == partition_kind::symmetric ? "symmetric" : "asymmetric";
}

bool is_node_fault(fault_kind k) noexcept {
  return k != fault_kind::etcd_stop && k != fault_kind::etcd_slow
         && k != fault_kind::lease_delete;
}

bool ends_fault(step_op op) noexcept {
  return op == step_op::restart || op == step_op::resume || op == step_op::heal
         || op == step_op::etcd_start || op == step_op::etcd_fast
         || op == step_op::links_fast;
}

std::string render_offset(std::chrono::milliseconds d) {
  auto ms = d.count();
  return fmt::format("{}{}.{:03}s", ms < 0 ? "-" : "", std::abs(ms) / 1000,
                     std::abs(ms) % 1000);
}

std::string render(const nemesis_step& step) {
  auto set = [](const std::vector<std::string>& xs) {
    return fmt::format("{{{}}}", fmt::join(xs, ","));
  };
  auto line = fmt::format("{:>10} {}", "+" + render_offset(step.at),
                          to_string(step.op));
  switch (step.op) {
    case step_op::partition:
      line += fmt::format(
        " #{} {} {} {} {}", step.id, to_string(step.partition), set(step.nodes),
        step.partition == partition_kind::symmetric ? "|" : "->", set(step.to));
      break;
    case step_op::heal:
      line += fmt::format(" #{}", step.id);
      break;
    case step_op::etcd_slow:
      line += fmt::format(" {}ms", step.delay.count());
      break;
    case step_op::links_slow:
      line += fmt::format(" {} {}ms", fmt::join(step.nodes, ","),
                          step.delay.count());
      break;
    default:
      if (!step.nodes.empty())
        line += " " + fmt::format("{}", fmt::join(step.nodes, ","));
  }
  return line + fmt::format(" (fault {})", step.fault);
}

namespace detail {

runtime::error nemesis_input_error(std::string what) {
  return runtime::make_error(runtime::errc::bad_config_value,
                             "nemesis: " + std::move(what));
}

} // namespace detail

} // namespace troupe::chaos
