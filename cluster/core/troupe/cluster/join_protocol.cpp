#include "troupe/cluster/join_protocol.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"

namespace troupe::cluster {

std::variant<init_join_ack, init_join_nack>
answer_init_join(const init_join& request, const unique_address& self,
                 bool accepting, const join_config_checker& checker,
                 const join_config& local) {
  if (!accepting)
    return init_join_nack{self};
  init_join_ack ack{self, checker.check(local, request.config), {}};
  if (ack.compat.compatible())
    ack.config = values_for_keys_of(local, request.config);
  return ack;
}

const char* to_string(give_up_reason x) noexcept {
  switch (x) {
    case give_up_reason::incompatible_configuration:
      return "incompatible_configuration";
    case give_up_reason::join_timeout:
      return "join_timeout";
  }
  return "unknown";
}

const char* to_string(join_state x) noexcept {
  switch (x) {
    case join_state::idle:
      return "idle";
    case join_state::first_seed:
      return "first_seed";
    case join_state::joining_seed:
      return "joining_seed";
    case join_state::awaiting_welcome:
      return "awaiting_welcome";
    case join_state::joined:
      return "joined";
    case join_state::gave_up:
      return "gave_up";
  }
  return "unknown";
}

join_process::join_process(joining_node self, join_config_checker checker,
                           join_settings settings)
  : self_(std::move(self)), self_endpoint_(endpoint_of(self_.self)),
    checker_(std::move(checker)), settings_(std::move(settings)) {
  TROUPE_ASSERT(settings_.seed_node_timeout > timespan{0});
  TROUPE_ASSERT(settings_.init_join_interval > timespan{0});
}

std::vector<join_effect> join_process::start(timestamp now) {
  return join_seed_nodes(settings_.seed_nodes, now);
}

std::vector<join_effect>
join_process::join_seed_nodes(std::vector<endpoint> seeds, timestamp now) {
  if (state_ == join_state::joined)
    return {};
  seeds_.clear();
  for (auto& seed : seeds)
    if (std::find(seeds_.begin(), seeds_.end(), seed) == seeds_.end())
      seeds_.push_back(std::move(seed));
  give_up_deadline_.reset();
  if (seeds_.empty()) {
    state_ = join_state::idle;
    return {};
  }
  if (auto limit = settings_.shutdown_after_unsuccessful_join_seed_nodes)
    give_up_deadline_ = now + *limit;
  return begin_seed_process(now);
}

std::vector<join_effect> join_process::begin_seed_process(timestamp now) {
  others_.clear();
  for (const auto& seed : seeds_)
    if (seed != self_endpoint_)
      others_.insert(seed);
  answered_.clear();
  incompatible_.clear();
  attempts_ = 0;
  join_target_.reset();
  welcome_deadline_.reset();
  if (others_.empty())
    return become_joined_self();
  // Only the first seed may found a cluster, and only after its timeout.
  state_ = seeds_.front() == self_endpoint_ ? join_state::first_seed
                                            : join_state::joining_seed;
  round_end_ = now + settings_.seed_node_timeout;
  return send_round(now);
}

std::vector<join_effect> join_process::send_round(timestamp now) {
  ++attempts_;
  send_init_join effect;
  effect.message = init_join{self_.self, self_.config};
  if (state_ == join_state::first_seed) {
    for (const auto& seed : others_)
      if (answered_.count(seed) == 0)
        effect.to.push_back(seed);
    next_send_ = now + settings_.init_join_interval;
  } else {
    answered_.clear(); // a new round asks every other seed again
    effect.to.assign(others_.begin(), others_.end());
    round_start_ = now;
    round_end_ = now + settings_.seed_node_timeout;
    next_send_ = round_end_;
  }
  return {std::move(effect)};
}

std::vector<join_effect> join_process::tick(timestamp now) {
  if (state_ == join_state::idle || state_ == join_state::joined
      || state_ == join_state::gave_up)
    return {};
  if (give_up_deadline_ && now >= *give_up_deadline_) {
    std::vector<std::string> seeds;
    for (const auto& seed : seeds_)
      seeds.push_back(to_string(seed));
    return become_gave_up(
      give_up_reason::join_timeout,
      fmt::format("joining seed nodes {} was unsuccessful after {} "
                  "(cluster.shutdown_after_unsuccessful_join_seed_nodes)",
                  fmt::join(seeds, ", "),
                  runtime::render_duration(
                    *settings_.shutdown_after_unsuccessful_join_seed_nodes)));
  }
  switch (state_) {
    case join_state::first_seed:
      if (now >= round_end_ && !settings_.first_seed_founds_on_timeout
          && incompatible_.empty()) {
        // A silent seed may be a member behind a partition: keep asking.
        round_end_ = now + settings_.seed_node_timeout;
        return send_round(now);
      }
      if (now >= round_end_)
        return maybe_conclude(true);
      if (now >= next_send_)
        return send_round(now);
      return {};
    case join_state::joining_seed:
      if (now < round_end_)
        return {};
      if (!incompatible_.empty())
        return maybe_conclude(true);
      return send_round(now);
    case join_state::awaiting_welcome:
      if (welcome_deadline_ && now >= *welcome_deadline_)
        return begin_seed_process(now); // join attempt failed: start over
      return {};
    default:
      return {};
  }
}

std::vector<join_effect>
join_process::on_init_join_ack(const init_join_ack& ack, timestamp now) {
  auto seed = endpoint_of(ack.address);
  if (!is_seed_state() || others_.count(seed) == 0)
    return {};
  if (ack.compat.compatible()) {
    // The seed accepted this node's values; this node checks the seed's
    // values with its own rules (it may know keys the seed does not).
    auto mine = checker_.check(self_.config, ack.config);
    if (mine.compatible()) {
      state_ = join_state::awaiting_welcome;
      join_target_ = ack.address;
      welcome_deadline_.reset();
      if (auto retry = settings_.retry_unsuccessful_join_after)
        welcome_deadline_ = now + *retry;
      return {send_join{ack.address, cluster::join{self_.self, self_.roles,
                                                   self_.app_version}}};
    }
    incompatible_[seed] = mine.describe("on this node", "on the seed node");
  } else {
    incompatible_[seed]
      = ack.compat.describe("on the seed node", "on this node");
  }
  answered_.insert(seed);
  return maybe_conclude(false);
}

std::vector<join_effect>
join_process::on_init_join_nack(const init_join_nack& nack, timestamp) {
  auto seed = endpoint_of(nack.address);
  if (!is_seed_state() || others_.count(seed) == 0)
    return {};
  answered_.insert(seed);
  return maybe_conclude(false);
}

std::vector<join_effect> join_process::on_welcome(const welcome& msg,
                                                  timestamp) {
  bool expected = state_ == join_state::awaiting_welcome
                    ? msg.from == join_target_
                    : is_seed_state() && others_.count(endpoint_of(msg.from));
  if (!expected)
    return {};
  state_ = join_state::joined;
  join_target_ = msg.from;
  welcome_deadline_.reset();
  give_up_deadline_.reset();
  return {joined{msg.from}};
}

std::vector<join_effect> join_process::maybe_conclude(bool deadline_passed) {
  bool all_answered
    = std::all_of(others_.begin(), others_.end(),
                  [this](const auto& seed) { return answered_.count(seed); });
  if (!deadline_passed && !all_answered)
    return {};
  if (!incompatible_.empty()) {
    std::string message = "this node's configuration is incompatible with "
                          "the cluster.";
    for (const auto& [seed, why] : incompatible_)
      message += fmt::format(" Seed node {}: {}.", to_string(seed), why);
    return become_gave_up(give_up_reason::incompatible_configuration,
                          std::move(message));
  }
  if (state_ == join_state::first_seed)
    return become_joined_self(); // nobody else is up: found the cluster
  if (!deadline_passed) {
    // Every seed is alive but none is a member yet: one of them is about
    // to found the cluster or join it, so ask again after
    // init_join_interval instead of waiting out seed_node_timeout.
    round_end_
      = std::min(round_end_, round_start_ + settings_.init_join_interval);
    next_send_ = round_end_;
  }
  return {};
}

std::vector<join_effect> join_process::become_joined_self() {
  state_ = join_state::joined;
  join_target_ = self_.self;
  welcome_deadline_.reset();
  give_up_deadline_.reset();
  return {join_self{}};
}

std::vector<join_effect> join_process::become_gave_up(give_up_reason reason,
                                                      std::string message) {
  state_ = join_state::gave_up;
  welcome_deadline_.reset();
  give_up_deadline_.reset();
  return {give_up{reason, std::move(message)}};
}

bool join_process::is_seed_state() const noexcept {
  return state_ == join_state::first_seed || state_ == join_state::joining_seed;
}

std::optional<timestamp> join_process::next_tick() const {
  std::optional<timestamp> result;
  auto consider = [&result](std::optional<timestamp> t) {
    if (t && (!result || *t < *result))
      result = t;
  };
  switch (state_) {
    case join_state::first_seed:
      consider(std::min(next_send_, round_end_));
      break;
    case join_state::joining_seed:
      consider(round_end_);
      break;
    case join_state::awaiting_welcome:
      consider(welcome_deadline_);
      break;
    default:
      return std::nullopt;
  }
  consider(give_up_deadline_);
  return result;
}

} // namespace troupe::cluster
