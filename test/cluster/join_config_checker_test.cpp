#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/cluster/join_config_checker.hpp"

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
                       {"troupe.protocol_version", "2"},
                       {"unchecked", "x"}};
  join_config remote = {{"cluster.name", "prod"},
                        {"troupe.protocol_version", "1"},
                        {"unchecked", "y"}};
  auto result = check_join_compatibility(checker, local, remote);
  CHECK(
    result.mismatches
    == std::vector<config_mismatch>{
      {"sharding.number_of_shards", mismatch_kind::missing_remotely, "100", ""},
      {"troupe.protocol_version", mismatch_kind::different, "2", "1"},
    });
  CHECK(result.describe()
        == "sharding.number_of_shards is missing on the other node (here "
           "\"100\"); troupe.protocol_version is \"2\" here but \"1\" on the "
           "other node");
}

TEST_CASE("join_config_checker: the default checks protocol version and "
          "cluster name") {
  auto checker = default_join_config_checker();
  CHECK(checker.rules()
        == std::map<std::string, join_config_rule>{
          {"cluster.name", join_config_rule::must_equal},
          {"troupe.protocol_version", join_config_rule::must_equal},
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
