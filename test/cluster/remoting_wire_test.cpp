#include <catch2/catch.hpp>

#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_wire.hpp"

using namespace troupe::cluster;

namespace {

std::span<const std::byte> bytes(const std::vector<char>& x) {
  return std::as_bytes(std::span{x});
}

std::vector<char> chars(std::initializer_list<int> xs) {
  std::vector<char> result;
  for (auto x : xs)
    result.push_back(static_cast<char>(x));
  return result;
}

} // namespace

TEST_CASE("remoting wire: a message envelope carries target, reply-to and "
          "the body") {
  std::vector<char> buf;
  append_message_header(buf, "jobs", "$42");
  buf.push_back('B');
  buf.push_back('Y');
  CHECK(buf == chars({1, 4, 'j', 'o', 'b', 's', 3, '$', '4', '2', 'B', 'Y'}));
  auto v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->kind == envelope_kind::message);
  CHECK(v->name == "jobs");
  CHECK(v->reply_to == "$42");
  REQUIRE(v->body.size() == 2);
  CHECK(static_cast<char>(v->body[0]) == 'B');
  // Anonymous sender, empty body.
  buf.clear();
  append_message_header(buf, "x", "");
  v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->reply_to.empty());
  CHECK(v->body.empty());
}

TEST_CASE("remoting wire: a tagged envelope carries target, tag and body") {
  std::vector<char> buf;
  append_tagged_header(buf, "rg", std::string_view{"e\0s", 3});
  buf.push_back('B');
  CHECK(buf == chars({5, 2, 'r', 'g', 0, 3, 'e', 0, 's', 'B'}));
  auto v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->kind == envelope_kind::tagged);
  CHECK(v->name == "rg");
  CHECK(v->tag == std::string_view{"e\0s", 3});
  CHECK(v->reply_to.empty());
  REQUIRE(v->body.size() == 1);
  CHECK(static_cast<char>(v->body[0]) == 'B');
  // The longest tag, an empty body.
  buf.clear();
  append_tagged_header(buf, "x", std::string(max_tag_size, 't'));
  v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->tag.size() == max_tag_size);
  CHECK(v->body.empty());
}

TEST_CASE("remoting wire: watch, unwatch and down round-trip") {
  std::vector<char> buf;
  append_watch(buf, envelope_kind::unwatch, "jobs");
  auto v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->kind == envelope_kind::unwatch);
  CHECK(v->name == "jobs");
  buf.clear();
  append_down(buf, "jobs", down_cause::unpublished, 0x0102030405060708, "gone");
  CHECK(buf == chars({4, 4, 'j', 'o', 'b', 's', 1,   1,   2,   3,  4,
                      5, 6, 7,   8,   0,   4,   'g', 'o', 'n', 'e'}));
  v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->kind == envelope_kind::down);
  CHECK(v->cause == down_cause::unpublished);
  CHECK(v->seq == 0x0102030405060708u);
  CHECK(v->reason == "gone");
  // A long reason is cut.
  buf.clear();
  append_down(buf, "x", down_cause::actor_stopped, 1, std::string(5000, 'r'));
  v = decode_envelope(bytes(buf));
  REQUIRE(v);
  CHECK(v->reason.size() == max_reason_size);
}

TEST_CASE("remoting wire: malformed payloads are errors naming the fault") {
  auto [payload, says] = GENERATE(table<std::vector<char>, std::string>({
    {std::vector<char>{}, "empty payload"},
    {chars({9}), "unknown kind 9"},
    {chars({2}), "watch: missing byte"},
    {chars({2, 5, 'a'}), "watch: name length 5 exceeds the 1 bytes left"},
    {chars({2, 0}), "watch: empty name"},
    {chars({2, 1, 'a', 0}), "watch: 1 trailing bytes"},
    {chars({1, 0, 0}), "message: empty target name"},
    {chars({5, 1, 'a', 0}), "tagged: missing 2-byte number"},
    {chars({5, 1, 'a', 0, 9, 'x'}),
     "tagged: tag length 9 exceeds the 1 bytes left"},
    {chars({5, 0, 0, 0}), "tagged: empty target name"},
    {chars({1, 1, 'a'}), "message: missing byte"},
    {chars({4, 1, 'a', 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}),
     "down: unknown down cause 9"},
    {chars({4, 1, 'a', 0, 0, 0}), "down: missing 8-byte number"},
    {chars({4, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9}),
     "down: reason length 9 exceeds the 0 bytes left"},
  }));
  auto v = decode_envelope(bytes(payload));
  REQUIRE(!v);
  CHECK(v.error().category == "remoting");
  CHECK(v.error().code == static_cast<uint8_t>(remoting_errc::undecodable));
  CHECK(v.error().message == "remoting payload: " + says);
}

TEST_CASE("remoting wire: any prefix of a valid payload decodes or fails "
          "cleanly") {
  std::vector<char> buf;
  append_down(buf, "name", down_cause::node_removed, 77, "reason");
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> prefix(buf.begin(), buf.begin() + n);
    CHECK(!decode_envelope(bytes(prefix)));
  }
  CHECK(decode_envelope(bytes(buf)));
}

TEST_CASE("remoting wire: published names are checked") {
  auto [name, ok, says] = GENERATE(table<std::string, bool, std::string>({
    {"jobs", true, ""},
    {std::string(255, 'n'), true, ""},
    {"", false, "cannot publish \"\": the name is empty"},
    {std::string(256, 'n'), false, "longer than 255 bytes"},
    {"$1", false, "reserved for reply references"},
  }));
  auto err = validate_published_name(name);
  CHECK(static_cast<bool>(err) == !ok);
  if (!ok) {
    CHECK(err.code == static_cast<uint8_t>(remoting_errc::invalid_name));
    CHECK_THAT(err.message, Catch::Contains(says));
  }
}
