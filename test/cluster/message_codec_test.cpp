#include <catch2/catch.hpp>

#include <limits>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/event_based_actor.hpp>

#include <sys/resource.h>

#include "remoting_test_types.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/message_codec.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/runtime/caf_glue.hpp"

using namespace troupe;
using namespace troupe::cluster;
using troupe::test::ack;
using troupe::test::order;
using troupe::test::unregistered_thing;

namespace {

struct codec_config : caf::actor_system_config {
  codec_config() {
    runtime::add_runtime_types(*this);
    add_cluster_types(*this);
    test::add_test_types(*this);
  }
};

struct codec_fixture {
  codec_config cfg;
  caf::actor_system sys{cfg};
  remote_ref from{{"10.0.0.1", 2552, 7}, "$3"};

  std::span<const std::byte> bytes(const std::vector<char>& x) {
    return std::as_bytes(std::span{x});
  }
};

uint8_t code(const runtime::error& err) {
  return err.code;
}

} // namespace

TEST_CASE_METHOD(codec_fixture, "message codec: registered custom and "
                                "built-in types round-trip, prefixed with "
                                "the sender") {
  order o{"ACME", 5, {1.5, 2.25}};
  auto msg
    = caf::make_message(o, ack{7, "b"}, std::string{"text"}, int32_t{-3},
                        caf::atom("hello"), std::vector<std::string>{"x", "y"});
  std::vector<char> buf;
  REQUIRE(!encode_message(sys, msg, buf));
  auto decoded = decode_message(sys, bytes(buf), from);
  REQUIRE(decoded);
  REQUIRE(decoded->size() == 7);
  CHECK(decoded->get_as<remote_ref>(0) == from);
  CHECK(decoded->get_as<order>(1) == o);
  CHECK(decoded->get_as<ack>(2) == ack{7, "b"});
  CHECK(decoded->get_as<std::string>(3) == "text");
  CHECK(decoded->get_as<int32_t>(4) == -3);
  CHECK(decoded->get_as<caf::atom_value>(5) == caf::atom("hello"));
  CHECK(decoded->get_as<std::vector<std::string>>(6)
        == std::vector<std::string>{"x", "y"});
  // It matches a handler as a message built locally would.
  CHECK(decoded->match_elements<remote_ref, order, ack, std::string, int32_t,
                                caf::atom_value, std::vector<std::string>>());
}

TEST_CASE_METHOD(codec_fixture, "message codec: strings, atoms and 32- and "
                                "64-bit integers are written exactly as "
                                "CAF's binary serializer writes them") {
  // Lengths around each varbyte boundary: 1, 2 and 3 length bytes.
  std::vector<std::string> strings;
  for (size_t n : {0, 1, 127, 128, 300, 16383, 16384, 70000})
    strings.emplace_back(n, 'x');
  auto msg = caf::make_message(
    strings[0], strings[1], strings[2], strings[3], strings[4], strings[5],
    strings[6], strings[7], caf::atom("shenvlp"), uint64_t{0x0102030405060708},
    int64_t{-2}, uint32_t{0xdeadbeef}, int32_t{-7},
    std::numeric_limits<int64_t>::min(), order{"ACME", 5, {1.5}});
  std::vector<char> ours;
  REQUIRE(!encode_message(sys, msg, ours));
  // CAF's serializer over every element: the values section.
  std::vector<char> cafs;
  caf::binary_serializer sink{sys, cafs};
  for (size_t i = 0; i < msg.size(); ++i)
    REQUIRE(!msg.save(i, sink));
  REQUIRE(ours.size() > cafs.size());
  CHECK(std::equal(cafs.begin(), cafs.end(), ours.end() - cafs.size()));
  auto decoded = decode_message(sys, bytes(ours), from);
  REQUIRE(decoded);
  CHECK(decoded->get_as<std::string>(8) == strings[7]);
  CHECK(decoded->get_as<uint32_t>(12) == 0xdeadbeef);
  CHECK(decoded->get_as<int64_t>(14) == std::numeric_limits<int64_t>::min());
}

TEST_CASE_METHOD(codec_fixture, "message codec: a message sent in two parts "
                                "is the one message of both parts") {
  auto head = caf::make_message(caf::atom("shenvlp"), std::string{"acc-1"});
  auto body = caf::make_message(ack{7, "b"}, int32_t{3});
  std::vector<char> two, one;
  REQUIRE(!encode_message(sys, head, body, two));
  REQUIRE(!encode_message(sys, caf::message::concat(head, body), one));
  CHECK(two == one);
  // An error in the body names the element's index in the whole message.
  auto bad = caf::make_message(int32_t{1}, unregistered_thing{});
  std::vector<char> buf;
  auto err = encode_message(sys, head, bad, buf);
  REQUIRE(err);
  CHECK(err.message.find("element 3 of the whole message")
        != std::string::npos);
  CHECK(buf.empty());
}

TEST_CASE_METHOD(codec_fixture, "message codec: an empty message is just "
                                "the sender") {
  std::vector<char> buf;
  REQUIRE(!encode_message(sys, caf::message{}, buf));
  auto decoded = decode_message(sys, bytes(buf), from);
  REQUIRE(decoded);
  CHECK(decoded->size() == 1);
}

TEST_CASE_METHOD(codec_fixture, "message codec: an unregistered type is an "
                                "error naming it, and nothing is written") {
  std::vector<char> buf{'h', 'd', 'r'};
  auto msg = caf::make_message(order{}, unregistered_thing{3});
  auto err = encode_message(sys, msg, buf);
  REQUIRE(err);
  CHECK(err.category == "remoting");
  CHECK(code(err) == static_cast<uint8_t>(remoting_errc::unregistered_type));
  CHECK_THAT(err.message,
             Catch::Contains("element 1 of the message has type "
                             "troupe::test::unregistered_thing, which is not "
                             "registered with add_message_type"));
  CHECK(buf == std::vector<char>{'h', 'd', 'r'});
  CHECK(check_message(sys, msg).code == err.code);
  CHECK(!check_message(sys, caf::make_message(order{})));
}

TEST_CASE_METHOD(codec_fixture, "message codec: actor handles are refused "
                                "at both ends") {
  auto self = sys.spawn([] {});
  std::vector<char> buf;
  auto err = encode_message(sys, caf::make_message(self), buf);
  CHECK(code(err) == static_cast<uint8_t>(remoting_errc::serialization_failed));
  CHECK_THAT(err.message, Catch::Contains("do not travel"));
  // A peer that writes one anyway: type number of caf::actor.
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(uint16_t{1}, caf::type_nr<caf::actor>::value));
  auto decoded = decode_message(sys, bytes(buf), from);
  REQUIRE(!decoded);
  CHECK_THAT(decoded.error().message,
             Catch::Contains("message element 0: type number 1 is unknown "
                             "or refused"));
}

TEST_CASE_METHOD(codec_fixture, "message codec: undecodable bodies are "
                                "errors naming the element and the fault") {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  std::string says;
  SECTION("unknown type name") {
    REQUIRE(!sink(uint16_t{1}, uint16_t{0}, std::string{"troupe.nope"}));
    says = "message element 0: type \"troupe.nope\" is not registered on "
           "this node";
  }
  SECTION("truncated value") {
    REQUIRE(!encode_message(sys, caf::make_message(order{"A", 1, {2.0}}), buf));
    buf.resize(buf.size() - 3);
    says = "message element 0 (troupe::test::order)";
  }
  SECTION("trailing bytes") {
    REQUIRE(!encode_message(sys, caf::make_message(int32_t{1}), buf));
    buf.push_back('x');
    says = "1 trailing bytes after 1 elements";
  }
  SECTION("a huge vector length is refused before anything is allocated") {
    REQUIRE(!sink(uint16_t{1}, uint16_t{0}, std::string{"troupe.test.order"},
                  std::string{"A"}, int64_t{1}));
    // varbyte length 2^40 for `prices`.
    for (auto b : {0x80, 0x80, 0x80, 0x80, 0x80, 0x20})
      buf.push_back(static_cast<char>(b));
    says = "message element 0 (troupe::test::order)";
  }
  SECTION("a huge string length") {
    REQUIRE(!sink(uint16_t{1}, caf::type_nr<std::string>::value));
    for (auto b : {0x80, 0x80, 0x80, 0x80, 0x80, 0x20})
      buf.push_back(static_cast<char>(b));
    says = "message element 0";
  }
  SECTION("a bad type number") {
    REQUIRE(!sink(uint16_t{1}, uint16_t{999}));
    says = "type number 999 is unknown or refused";
  }
  SECTION("no element count") {
    says = "truncated element count";
  }
  auto decoded = decode_message(sys, bytes(buf), from);
  REQUIRE(!decoded);
  CHECK(decoded.error().code
        == static_cast<uint8_t>(remoting_errc::undecodable));
  CHECK_THAT(decoded.error().message, Catch::Contains(says));
}

TEST_CASE_METHOD(codec_fixture, "message codec: a byte buffer claiming 256 "
                                "MiB in a small frame allocates nothing "
                                "large") {
  // CAF resizes byte sequences to the claimed length before reading them;
  // the codec refuses lengths the remaining bytes cannot hold first.
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(uint16_t{1}, caf::type_nr<std::vector<char>>::value));
  for (auto b : {0x80, 0x80, 0x80, 0x80, 0x01}) // varbyte 2^28
    buf.push_back(static_cast<char>(b));
  buf.resize(buf.size() + 16, 'x');
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  auto decoded = decode_message(sys, bytes(buf), from);
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  REQUIRE(!decoded);
  CHECK_THAT(decoded.error().message, Catch::Contains("message element 0"));
  CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024); // KiB
}

TEST_CASE_METHOD(codec_fixture, "message codec: every prefix of a valid body "
                                "fails cleanly") {
  std::vector<char> buf;
  REQUIRE(!encode_message(
    sys, caf::make_message(order{"ACME", 5, {1.5, 2.5}}, ack{1, "x"}), buf));
  for (size_t n = 0; n < buf.size(); ++n) {
    std::vector<char> prefix(buf.begin(), buf.begin() + n);
    CHECK(!decode_message(sys, bytes(prefix), from));
  }
  CHECK(decode_message(sys, bytes(buf), from));
}
