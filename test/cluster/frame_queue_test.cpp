#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "recording_listener.hpp"
#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/frame_queue.hpp"

using namespace troupe::cluster;
using troupe::test::bytes_of;

namespace {

// Decodes the queue's front (all of it) back into payload strings.
std::vector<std::string> contents(const frame_queue& q) {
  size_t frames = 0;
  auto bytes = q.front(SIZE_MAX, frames);
  frame_decoder dec{1 << 20};
  dec.feed(bytes);
  std::vector<std::string> out;
  for (auto r = dec.next(); r.status == decode_status::frame; r = dec.next())
    out.emplace_back(reinterpret_cast<const char*>(r.frame.payload.data()),
                     r.frame.payload.size());
  CHECK(out.size() == frames);
  CHECK(!dec.failed());
  return out;
}

} // namespace

TEST_CASE("frame_queue: full queue drops the oldest frame") {
  frame_queue q{3};
  size_t dropped = 0;
  for (int i = 0; i < 10; ++i)
    dropped += q.push(lane::ordinary, 0, bytes_of("m" + std::to_string(i)));
  CHECK(dropped == 7);
  CHECK(q.size() == 3);
  CHECK(contents(q) == std::vector<std::string>{"m7", "m8", "m9"});
}

TEST_CASE("frame_queue: front takes whole frames within the byte budget") {
  frame_queue q{100};
  for (int i = 0; i < 5; ++i)
    q.push(lane::control, 0, bytes_of("0123456789")); // 18 bytes each
  size_t frames = 0;
  CHECK(q.front(40, frames).size() == 36);
  CHECK(frames == 2);
  CHECK(q.front(1, frames).size() == 18); // at least one frame
  CHECK(frames == 1);
  q.pop(4);
  CHECK(q.size() == 1);
  CHECK(q.bytes() == 18);
  q.pop(10);
  CHECK(q.empty());
  CHECK(q.front(100, frames).empty());
  CHECK(frames == 0);
}

TEST_CASE("frame_queue: remove_if drops frames of one incarnation in place") {
  frame_queue q{100};
  q.push(lane::ordinary, 1, bytes_of("a"));
  q.push(lane::ordinary, 0, bytes_of("any"));
  q.push(lane::ordinary, 2, bytes_of("b"));
  q.push(lane::ordinary, 1, bytes_of("a2"));
  q.pop(0);
  CHECK(q.remove_if([](uint64_t uid) { return uid == 1; }) == 2);
  CHECK(contents(q) == std::vector<std::string>{"any", "b"});
  CHECK(q.remove_if([](uint64_t) { return true; }) == 2);
  CHECK(q.empty());
}

TEST_CASE("frame_queue: a long overflow keeps the buffer compact") {
  frame_queue q{4};
  for (int i = 0; i < 100000; ++i)
    q.push(lane::ordinary, 0, bytes_of("payload-" + std::to_string(i)));
  CHECK(q.size() == 4);
  CHECK(q.bytes() < 200);
  CHECK(contents(q).back() == "payload-99999");
}

TEST_CASE("frame_queue: swap exchanges contents") {
  frame_queue pending{2};
  frame_queue inflight{2};
  pending.push(lane::ordinary, 0, bytes_of("x"));
  pending.swap(inflight);
  CHECK(pending.empty());
  CHECK(contents(inflight) == std::vector<std::string>{"x"});
}
