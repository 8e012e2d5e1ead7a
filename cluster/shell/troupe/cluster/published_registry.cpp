#include "troupe/cluster/published_registry.hpp"

#include <algorithm>
#include <charconv>
#include <mutex>

#include <caf/actor_cast.hpp>
#include <fmt/format.h>

#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_wire.hpp"

namespace troupe::cluster {

runtime::error
published_registry::add(const std::string& name, const caf::actor& actor,
                        std::shared_ptr<const tagged_receiver> receiver) {
  if (auto err = validate_published_name(name))
    return err;
  if (!actor)
    return runtime::make_error(
      remoting_errc::invalid_actor,
      fmt::format("cannot publish \"{}\": the actor handle is invalid", name));
  std::unique_lock guard{mtx_};
  auto [i, added] = named_.try_emplace(name, target{actor, receiver});
  if (added)
    return {};
  if (i->second.actor != actor)
    return runtime::make_error(
      remoting_errc::name_taken,
      fmt::format("cannot publish \"{}\": another actor (id {}) is published "
                  "under that name",
                  name, i->second.actor.id()));
  if (receiver)
    i->second.receiver = std::move(receiver);
  return {};
}

bool published_registry::remove(std::string_view name) {
  std::unique_lock guard{mtx_};
  auto i = named_.find(name);
  if (i == named_.end())
    return false;
  named_.erase(i);
  return true;
}

bool published_registry::remove_if(std::string_view name,
                                   const caf::actor_addr& actor) {
  std::unique_lock guard{mtx_};
  auto i = named_.find(name);
  if (i == named_.end() || i->second.actor.address() != actor)
    return false;
  named_.erase(i);
  return true;
}

std::vector<std::string>
published_registry::names_of(const caf::actor_addr& actor) const {
  std::vector<std::string> result;
  std::shared_lock guard{mtx_};
  for (auto& [name, t] : named_)
    if (t.actor.address() == actor)
      result.push_back(name);
  std::sort(result.begin(), result.end());
  return result;
}

std::string published_registry::reply_name(uint64_t id) {
  return "$" + std::to_string(id);
}

std::pair<std::string, bool>
published_registry::expose(const caf::actor& actor) {
  auto id = actor.id();
  std::unique_lock guard{mtx_};
  auto added = exposed_.emplace(id, actor).second;
  return {reply_name(id), added};
}

bool published_registry::forget_exposed(uint64_t id) {
  std::unique_lock guard{mtx_};
  return exposed_.erase(id) > 0;
}

caf::actor published_registry::find(std::string_view name) const {
  if (!name.empty() && name.front() == '$') {
    uint64_t id = 0;
    auto [ptr, ec]
      = std::from_chars(name.data() + 1, name.data() + name.size(), id);
    if (ec != std::errc{} || ptr != name.data() + name.size())
      return {};
    std::shared_lock guard{mtx_};
    auto i = exposed_.find(id);
    if (i == exposed_.end())
      return {};
    return i->second;
  }
  std::shared_lock guard{mtx_};
  auto i = named_.find(name);
  return i == named_.end() ? caf::actor{} : i->second.actor;
}

published_registry::target
published_registry::find_target(std::string_view name) const {
  if (!name.empty() && name.front() == '$')
    return target{find(name), nullptr};
  std::shared_lock guard{mtx_};
  auto i = named_.find(name);
  return i == named_.end() ? target{} : i->second;
}

bool published_registry::contains(std::string_view name) const {
  return static_cast<bool>(find(name));
}

void published_registry::clear() {
  std::unique_lock guard{mtx_};
  named_.clear();
  exposed_.clear();
}

std::vector<std::string> published_registry::names() const {
  std::vector<std::string> result;
  {
    std::shared_lock guard{mtx_};
    for (auto& [name, t] : named_)
      result.push_back(name);
  }
  std::sort(result.begin(), result.end());
  return result;
}

} // namespace troupe::cluster
