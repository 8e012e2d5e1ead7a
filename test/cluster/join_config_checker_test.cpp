#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>

#include "troupe/cluster/join_config_checker.hpp"
#include "troupe/cluster/protocol_version.hpp"

using namespace troupe::cluster;

namespace {

// "" in the table means "the node does not have the key".
join_config config_of(const std::string& value) {
  join_config result;
  if (!value.empty())
    result.emplace("k", value);
  return result;
}

std::string describe_one(const compat_result& r) {
  return r.describe("here", "there");
}

} // namespace

TEST_CASE("join_config_checker: one key under each rule") {
  using row
    = std::tuple<join_config_rule, std::string, std::string, std::string>;
  auto [rule, local, remote, expected]
    = GENERATE(table<join_config_rule, std::string, std::string, std::string>({
      row{join_config_rule::must_equal, "1", "1", ""},
      row{join_config_rule::must_equal, "1", "2",
          "k is \"1\" here but \"2\" there"},
      row{join_config_rule::must_equal, "1", "",
          "k is missing there (here \"1\")"},
      row{join_config_rule::must_equal, "", "2",
          "k is missing here (there \"2\")"},
      row{join_config_rule::must_equal, "", "", ""},
      row{join_config_rule::ignore_if_missing, "1", "1", ""},
      row{join_config_rule::ignore_if_missing, "1", "2",
          "k is \"1\" here but \"2\" there"},
      row{join_config_rule::ignore_if_missing, "1", "", ""},
      row{join_config_rule::ignore_if_missing, "", "2", ""},
    }));
  INFO(to_string(rule) << ": local " << local << ", remote " << remote);
  join_config_checker checker;
  checker.add("k", rule);
  auto result = checker.check(config_of(local), config_of(remote));
  CHECK(result.compatible() == expected.empty());
  CHECK(describe_one(result) == expected);
}

TEST_CASE("join_config_checker: every mismatch is listed, sorted by key, "
          "with both values") {
  auto checker = default_join_config_checker();
  checker.add("sharding.number_of_shards", join_config_rule::must_equal);
  checker.add("sharding.new_feature", join_config_rule::ignore_if_missing);
  join_config local = {{"cluster.name", "prod"},
                       {"sharding.number_of_shards", "100"},
                       {"sharding.new_feature", "on"},
                       {"troupe.protocol_major", "2"},
                       {"unchecked", "x"}};
  join_config remote = {{"cluster.name", "prod"},
                        {"troupe.protocol_major", "1"},
                        {"unchecked", "y"}};
  auto result = check_join_compatibility(checker, local, remote);
  CHECK(
    result.mismatches
    == std::vector<config_mismatch>{
      {"sharding.number_of_shards", mismatch_kind::missing_remotely, "100", ""},
      {"troupe.protocol_major", mismatch_kind::different, "2", "1"},
    });
  CHECK(result.describe()
        == "sharding.number_of_shards is missing on the other node (here "
           "\"100\"); troupe.protocol_major is \"2\" here but \"1\" on the "
           "other node");
}

TEST_CASE("join_config_checker: the default checks protocol version and "
          "cluster name") {
  auto checker = default_join_config_checker();
  CHECK(checker.rules()
        == std::map<std::string, join_config_rule>{
          {"cluster.name", join_config_rule::must_equal},
          {"troupe.protocol_major", join_config_rule::must_equal},
        });
  CHECK(checker.check({}, {}).compatible());
  CHECK_FALSE(checker.check({{"cluster.name", "a"}}, {{"cluster.name", "b"}})
                .compatible());
}

TEST_CASE("values_for_keys_of: the values of the requested keys only") {
  join_config config = {{"a", "1"}, {"b", "2"}, {"c", "3"}};
  join_config request = {{"a", "x"}, {"c", "y"}, {"d", "z"}};
  CHECK(values_for_keys_of(config, request)
        == join_config{{"a", "1"}, {"c", "3"}});
}

TEST_CASE("join_config_of and join_config_checker_of: cluster name and "
          "protocol version, plus every key a module marked, checked with "
          "ignore_if_missing") {
  troupe::runtime::config_schema schema;
  schema.add({.name = "cluster.name",
              .default_value = "shop",
              .description = "The cluster's name."});
  schema.add({.name = "orders.partitions",
              .type = troupe::runtime::config_type::integer,
              .default_value = "1000",
              .description = "Partitions."});
  schema.add({.name = "orders.color",
              .default_value = "blue",
              .description = "Not checked."});
  schema.check_on_join("orders.partitions");
  troupe::runtime::config cfg{schema};
  REQUIRE_FALSE(cfg.set("orders.partitions", "100",
                        troupe::runtime::config_origin{"test"}));
  auto local = join_config_of(cfg);
  CHECK(
    local
    == join_config{{"cluster.name", "shop"},
                   {"orders.partitions", "100"},
                   {"troupe.protocol_major", std::to_string(protocol_major)}});
  auto checker = join_config_checker_of(cfg);
  CHECK(checker.rules()
        == std::map<std::string, join_config_rule>{
          {"cluster.name", join_config_rule::must_equal},
          {"orders.partitions", join_config_rule::ignore_if_missing},
          {"troupe.protocol_major", join_config_rule::must_equal}});
  // A node without the module joins; one with another value is refused
  // with the key and both values named.
  auto without = local;
  without.erase("orders.partitions");
  CHECK(checker.check(local, without).compatible());
  auto other = local;
  other["orders.partitions"] = "200";
  CHECK(checker.check(local, other).describe("here", "there")
        == "orders.partitions is \"100\" here but \"200\" there");
  // Without marked keys: the default checker and troupe's own keys.
  troupe::runtime::config_schema plain;
  plain.add({.name = "cluster.name",
             .default_value = "shop",
             .description = "The cluster's name."});
  troupe::runtime::config plain_cfg{plain};
  CHECK(
    join_config_of(plain_cfg)
    == join_config{{"cluster.name", "shop"},
                   {"troupe.protocol_major", std::to_string(protocol_major)}});
  CHECK(join_config_checker_of(plain_cfg).rules()
        == default_join_config_checker().rules());
}
