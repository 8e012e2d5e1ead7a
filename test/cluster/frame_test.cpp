#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "troupe/cluster/frame.hpp"

using namespace troupe::cluster;

namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  auto b = std::as_bytes(std::span{s.data(), s.size()});
  return {b.begin(), b.end()};
}

std::string string_of(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

struct decoded {
  frame_kind kind;
  lane ln;
  std::string payload;
  friend bool operator==(const decoded&, const decoded&) = default;
};

// Feeds `stream` in chunks of the given sizes (cycled) and collects every
// frame; stops at a violation, which is returned in `error`.
std::vector<decoded> decode_all(const std::vector<std::byte>& stream,
                                std::vector<size_t> splits,
                                frame_error* error = nullptr,
                                uint32_t max = 1 << 20) {
  frame_decoder dec{max};
  std::vector<decoded> out;
  size_t pos = 0;
  size_t i = 0;
  while (pos < stream.size()) {
    auto n = std::min(splits[i++ % splits.size()], stream.size() - pos);
    dec.feed(std::span{stream}.subspan(pos, n));
    pos += n;
    for (;;) {
      auto r = dec.next();
      if (r.status == decode_status::frame) {
        out.push_back({r.frame.kind, r.frame.lane, string_of(r.frame.payload)});
        continue;
      }
      if (r.status == decode_status::failed) {
        if (error)
          *error = r.violation->code;
        return out;
      }
      break;
    }
  }
  if (error)
    *error = frame_error::none;
  return out;
}

std::vector<decoded> sample_frames() {
  return {
    {frame_kind::handshake, lane::control, "hello"},
    {frame_kind::message, lane::ordinary, ""},
    {frame_kind::message, lane::control, "x"},
    {frame_kind::message, lane::ordinary, std::string(1000, 'a')},
    {frame_kind::message, lane::ordinary, std::string(7, '\0')},
    {frame_kind::message, lane::control, std::string(70000, 'z')},
  };
}

std::vector<std::byte> encode_all(const std::vector<decoded>& frames) {
  std::vector<std::byte> stream;
  for (auto& f : frames)
    append_frame(stream, f.kind, f.ln, bytes_of(f.payload));
  return stream;
}

std::vector<std::byte> raw_header(uint8_t version, uint8_t kind, uint8_t ln,
                                  uint8_t flags, uint32_t length) {
  return {std::byte{version},
          std::byte{kind},
          std::byte{ln},
          std::byte{flags},
          std::byte{static_cast<uint8_t>(length >> 24)},
          std::byte{static_cast<uint8_t>(length >> 16)},
          std::byte{static_cast<uint8_t>(length >> 8)},
          std::byte{static_cast<uint8_t>(length)}};
}

} // namespace

TEST_CASE("frame: header layout is version, kind, lane, flags, length (BE)") {
  std::vector<std::byte> out;
  append_frame(out, frame_kind::message, lane::ordinary, bytes_of("abc"));
  CHECK(out == [] {
    auto h = raw_header(protocol_major, 2, 1, 0, 3);
    h.insert(h.end(), {std::byte{'a'}, std::byte{'b'}, std::byte{'c'}});
    return h;
  }());
}

TEST_CASE("frame: frames survive any chunking of the stream") {
  auto frames = sample_frames();
  auto stream = encode_all(frames);
  using splits = std::vector<size_t>;
  auto [label, split] = GENERATE(table<std::string, splits>({
    {"whole stream in one chunk", splits{1 << 24}},
    {"byte by byte", splits{1}},
    {"2-byte chunks", splits{2}},
    {"7-byte chunks (header straddles)", splits{7}},
    {"8-byte chunks (header exactly)", splits{8}},
    {"9-byte chunks", splits{9}},
    {"mixed sizes", splits{3, 1000, 1, 65536, 5}},
  }));
  INFO(label);
  frame_error err = frame_error::bad_kind;
  CHECK(decode_all(stream, split, &err) == frames);
  CHECK(err == frame_error::none);
}

TEST_CASE("frame: random chunkings decode identically") {
  auto frames = sample_frames();
  auto stream = encode_all(frames);
  std::mt19937_64 rng{42};
  for (int round = 0; round < 200; ++round) {
    std::vector<size_t> split;
    for (int i = 0; i < 50; ++i)
      split.push_back(1 + rng() % 3000);
    REQUIRE(decode_all(stream, split) == frames);
  }
}

TEST_CASE("frame: every view of one chunk stays valid until the next feed") {
  // A frame that straddles into the chunk, whole frames, and a partial one.
  std::vector<std::byte> stream;
  for (int i = 0; i < 5; ++i)
    append_frame(stream, frame_kind::message, lane::ordinary,
                 bytes_of(std::string(10, static_cast<char>('a' + i))));
  frame_decoder dec{1024};
  dec.feed(std::span{stream}.first(12)); // header + 4 payload bytes
  CHECK(dec.next().status == decode_status::need_more);
  CHECK(dec.buffered() == 12);
  dec.feed(std::span{stream}.subspan(12, 50)); // completes #0, #1, #2, part
  std::vector<std::span<const std::byte>> views;
  for (auto r = dec.next(); r.status == decode_status::frame; r = dec.next())
    views.push_back(r.frame.payload);
  REQUIRE(views.size() == 3);
  for (size_t i = 0; i < views.size(); ++i)
    CHECK(string_of(views[i]) == std::string(10, static_cast<char>('a' + i)));
  CHECK(dec.buffered() == 8); // 62 - 54: the header of #3
}

TEST_CASE("frame: header violations are named and close the stream") {
  const uint32_t max = 4096;
  const uint8_t v = protocol_major;
  using row
    = std::tuple<std::string, std::vector<std::byte>, frame_error, std::string>;
  auto [label, header, code, text] = GENERATE_COPY(
    table<std::string, std::vector<std::byte>, frame_error, std::string>({
      row{"version 0", raw_header(0, 2, 1, 0, 3), frame_error::bad_version,
          "frame version 0 (expected " + std::to_string(v) + ")"},
      row{"a message frame of the next major (a newer peer)",
          raw_header(v + 1, 2, 1, 0, 3), frame_error::bad_version,
          "frame version " + std::to_string(v + 1) + " (expected "
            + std::to_string(v) + ")"},
      row{"a message frame of the previous major (an older peer)",
          raw_header(v - 1, 2, 1, 0, 3), frame_error::bad_version,
          "frame version " + std::to_string(v - 1) + " (expected "
            + std::to_string(v) + ")"},
      row{"a handshake frame of major 0", raw_header(0, 1, 0, 0, 3),
          frame_error::bad_version,
          "frame version 0 (expected " + std::to_string(v) + ")"},
      row{"an HTTP request ('G')", raw_header('G', 'E', 'T', ' ', 0),
          frame_error::bad_version, "frame version 71"},
      row{"kind 0", raw_header(v, 0, 1, 0, 3), frame_error::bad_kind,
          "frame kind 0"},
      row{"kind 3", raw_header(v, 3, 1, 0, 3), frame_error::bad_kind,
          "frame kind 3"},
      row{"lane 2", raw_header(v, 2, 2, 0, 3), frame_error::bad_lane,
          "frame lane 2"},
      row{"flags set", raw_header(v, 2, 0, 0x80, 3), frame_error::bad_flags,
          "frame flags 0x80"},
      row{"length max + 1", raw_header(v, 2, 1, 0, max + 1),
          frame_error::oversized,
          "frame length 4097 exceeds max_frame_size "
          "4096"},
      row{"length 4 GiB - 1", raw_header(v, 2, 1, 0, 0xFFFFFFFF),
          frame_error::oversized, "frame length 4294967295 exceeds"},
    }));
  INFO(label);
  // Preceded by a valid frame, which is still delivered.
  std::vector<std::byte> stream;
  append_frame(stream, frame_kind::message, lane::control, bytes_of("ok"));
  stream.insert(stream.end(), header.begin(), header.end());
  stream.resize(stream.size() + 16); // payload bytes that must never matter
  for (size_t split : {size_t{1}, size_t{5}, size_t{1} << 20}) {
    frame_error err = frame_error::none;
    auto frames = decode_all(stream, {split}, &err, max);
    CHECK(frames.size() == 1);
    CHECK(err == code);
  }
  frame_decoder dec{max};
  dec.feed(stream);
  CHECK(dec.next().status == decode_status::frame);
  auto r = dec.next();
  REQUIRE(r.status == decode_status::failed);
  CHECK(r.violation->message.find(text) != std::string::npos);
  // Failed for good: more (valid) input does not revive it.
  std::vector<std::byte> good;
  append_frame(good, frame_kind::message, lane::control, bytes_of("ok"));
  dec.feed(good);
  CHECK(dec.next().status == decode_status::failed);
  CHECK(dec.failed());
}

TEST_CASE("frame: the version byte is the sender's major: a handshake frame "
          "of another major is decoded for the handshake to refuse") {
  std::vector<std::byte> stream;
  append_frame(stream, frame_kind::handshake, lane::control, bytes_of("hi"), 2);
  CHECK(std::to_integer<int>(stream[0]) == 2);
  frame_decoder dec{1024};
  dec.feed(stream);
  auto r = dec.next();
  REQUIRE(r.status == decode_status::frame);
  CHECK(r.frame.kind == frame_kind::handshake);
  CHECK(string_of(r.frame.payload) == "hi");
  // A receiver of major 2 takes message frames of major 2 only.
  frame_header h;
  auto major2 = raw_header(2, 2, 1, 0, 0);
  CHECK(decode_header(major2.data(), 1024, h, 2).code == frame_error::none);
  CHECK(h.version == 2);
  auto major1 = raw_header(1, 2, 1, 0, 0);
  auto v = decode_header(major1.data(), 1024, h, 2);
  CHECK(v.code == frame_error::bad_version);
  CHECK(v.message == "frame version 1 (expected 2)");
}

TEST_CASE("frame: an oversized length fails before its payload is buffered") {
  frame_decoder dec{1024};
  auto header = raw_header(protocol_major, 2, 1, 0, 1 << 30);
  dec.feed(std::span{header}.first(5));
  CHECK(dec.next().status == decode_status::need_more);
  dec.feed(std::span{header}.subspan(5));
  CHECK(dec.next().status == decode_status::failed);
  CHECK(dec.buffered() == 0);
}

TEST_CASE("frame: max_frame_size itself is accepted") {
  std::vector<std::byte> stream;
  append_frame(stream, frame_kind::message, lane::ordinary,
               std::vector<std::byte>(1024));
  frame_error err = frame_error::bad_kind;
  CHECK(decode_all(stream, {100}, &err, 1024).size() == 1);
  CHECK(err == frame_error::none);
}

TEST_CASE("frame: truncated frames wait for more and never yield a frame") {
  std::vector<std::byte> stream;
  append_frame(stream, frame_kind::message, lane::ordinary, bytes_of("12345"));
  for (size_t cut = 0; cut < stream.size(); ++cut) {
    INFO("cut after " << cut << " bytes");
    frame_decoder dec{1024};
    dec.feed(std::span{stream}.first(cut));
    CHECK(dec.next().status == decode_status::need_more);
    CHECK(dec.buffered() == cut);
    dec.feed(std::span{stream}.subspan(cut));
    auto r = dec.next();
    REQUIRE(r.status == decode_status::frame);
    CHECK(string_of(r.frame.payload) == "12345");
    CHECK(dec.next().status == decode_status::need_more);
  }
}

TEST_CASE("frame: garbage never crashes and never yields a bad header") {
  std::mt19937_64 rng{7};
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::byte> junk(rng() % 300);
    for (auto& b : junk)
      b = static_cast<std::byte>(rng());
    frame_decoder dec{256};
    dec.feed(junk);
    for (;;) {
      auto r = dec.next();
      if (r.status != decode_status::frame)
        break;
      // Whatever parsed is a well-formed frame within the bound.
      CHECK(r.frame.payload.size() <= 256);
      CHECK((r.frame.kind == frame_kind::message
             || r.frame.kind == frame_kind::handshake));
    }
  }
}
