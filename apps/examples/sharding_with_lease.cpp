#include <iostream>
#include <sstream>
#include <thread>

#include "account.hpp"
#include "troupe/cluster_system.hpp"

using namespace troupe;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  auto sys = cluster_system::start(argc, argv); // node, cluster, downing
  if (!sys)
    return fail(sys.error());
  // The shard coordinator allocates shards only while it holds this lease.
  auto lease = (*sys)->lease({.name = "my-app-shard-coordinator-lease",
                              .owner = (*sys)->owner_name(), // POD_NAME
                              .ttl = 30s,
                              .renewal_interval = 10s});
  if (!lease)
    return fail(lease.error());
  auto accounts
    = (*sys)->start_sharding("account", account, {.coordinator_lease = *lease});
  if (!accounts)
    return fail(accounts.error());
  auto deposits = [accounts = *accounts] { // stdin: "<account id> <amount>"
    for (std::string line; std::getline(std::cin, line);) {
      std::istringstream words{line};
      std::string id;
      int64_t amount = 0;
      if (!(words >> id >> amount))
        std::cerr << "not \"<account id> <amount>\": " << line << '\n';
      else if (auto err = accounts.tell(id, amount))
        std::cerr << err.message << '\n';
    }
  };
  std::thread{deposits}.detach();
  return (*sys)->run(); // until SIGTERM: hand off shards, leave, stop
}
