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

TEST_CASE("frame_queue: consume counts whole frames and keeps a partial one") {
  frame_queue q{10};
  q.push(lane::ordinary, 0, bytes_of("alpha"));
  q.push(lane::ordinary, 0, bytes_of("beta"));
  q.push(lane::ordinary, 0, bytes_of("gamma"));
  auto first = frame_header_size + 5;
  auto total = q.bytes();
  // Half of the first frame went out: nothing is complete yet.
  CHECK(q.consume(3) == 0);
  CHECK(q.size() == 3);
  CHECK(q.written_prefix() == 3);
  CHECK(q.bytes() == total - 3);
  size_t frames = 0;
  auto rest = q.front(SIZE_MAX, frames);
  CHECK(frames == 3);
  CHECK(rest.size() == total - 3);
  // The rest of the first frame and two bytes of the second.
  CHECK(q.consume(first - 3 + 2) == 1);
  CHECK(q.size() == 2);
  CHECK(q.written_prefix() == 2);
  // Everything: both remaining frames complete, the queue rewinds.
  CHECK(q.consume(q.bytes()) == 2);
  CHECK(q.empty());
  CHECK(q.written_prefix() == 0);
  CHECK(q.bytes() == 0);
}

TEST_CASE("frame_queue: a partly written frame survives remove_if but not "
          "drop_partial or pop") {
  frame_queue q{10};
  q.push(lane::ordinary, 7, bytes_of("first"));
  q.push(lane::ordinary, 7, bytes_of("second"));
  q.push(lane::ordinary, 8, bytes_of("third"));
  q.consume(4);
  // Removing uid 7 keeps the started frame: its rest must still follow.
  CHECK(q.remove_if([](uint64_t uid) { return uid == 7; }) == 1);
  CHECK(q.size() == 2);
  CHECK(q.written_prefix() == 4);
  // On a new connection the rest of it means nothing: drop it whole.
  CHECK(q.drop_partial() == 1);
  CHECK(q.written_prefix() == 0);
  CHECK(q.drop_partial() == 0);
  CHECK(contents(q) == std::vector<std::string>{"third"});
  q.push(lane::ordinary, 0, bytes_of("fourth"));
  q.consume(2);
  q.pop(1);
  CHECK(q.written_prefix() == 0);
  CHECK(contents(q) == std::vector<std::string>{"fourth"});
}

TEST_CASE("frame_queue: swap and clear carry the written prefix") {
  frame_queue a{10};
  frame_queue b{10};
  a.push(lane::control, 0, bytes_of("started"));
  a.consume(5);
  a.swap(b);
  CHECK(a.written_prefix() == 0);
  CHECK(b.written_prefix() == 5);
  CHECK(b.clear() == 1);
  CHECK(b.written_prefix() == 0);
}
