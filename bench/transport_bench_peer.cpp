// transport_bench_peer: the far side of the transport benchmark.
//
// Serve mode (default): starts, on 127.0.0.1 with ephemeral ports,
//   - a raw TCP pump sink (counts 108-byte frames, answers an end frame with
//     the count) and a raw TCP echo (echoes each frame);
//   - a tcp_transport node without CAF that counts data frames, answers an
//     end frame with the count and echoes ping frames;
//   - a CAF actor system (same scheduler settings as the driver) with
//     troupe remoting, publishing "sink" (counts bench_payload, answers
//     bench_end with bench_count) and "echo" (sends each payload back);
//   - the same two actors published over CAF BASP.
// It prints one line, `ready <pump port> <echo port> <transport address>
// <remoting address> <basp sink port> <basp echo port>`, and runs until its
// stdin closes.
//
// Idle-clients mode (`--idle-clients K --hub ADDR`): K tcp_transports, each
// sending one frame to ADDR, so that ADDR's process holds K idle peer
// connections (the driver measures its memory); prints `ready`.
//
// Usage: transport_bench_peer [--tuned] [--io-thread]
//                             [--idle-clients K --hub ADDR]

#include <atomic>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include <csignal>
#include <sys/prctl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>

#include "transport_bench_common.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/log.hpp"

using namespace troupe;
using namespace troupe::bench;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// -- raw TCP ------------------------------------------------------------------

tcp::acceptor listen_loopback(asio::io_context& ioc) {
  tcp::acceptor acc{ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}};
  return acc;
}

// Accepts connections one after the other, handing each to `serve`.
template <class Serve>
void accept_loop(tcp::acceptor& acc, Serve serve) {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket s{acc.get_executor()};
    acc.accept(s, ec);
    if (ec)
      return;
    s.set_option(tcp::no_delay{true});
    serve(s);
  }
}

// Counts frames; answers each end frame with the 8-byte count.
void serve_pump(tcp::socket& s) {
  std::vector<char> buf(256 * 1024);
  boost::system::error_code ec;
  uint64_t count = 0;
  size_t pos = 0; // offset inside the current frame
  for (;;) {
    auto n = s.read_some(asio::buffer(buf), ec);
    if (ec)
      return;
    for (size_t i = 0; i < n;) {
      if (pos == 0) {
        if (buf[i] == raw_end) {
          asio::write(s, asio::buffer(&count, sizeof(count)), ec);
          count = 0;
        } else {
          ++count;
        }
      }
      auto step = std::min(n - i, raw_frame_size - pos);
      i += step;
      pos = (pos + step) % raw_frame_size;
    }
  }
}

// Echoes each frame.
void serve_echo(tcp::socket& s) {
  std::vector<char> frame(raw_frame_size);
  boost::system::error_code ec;
  while (!ec) {
    asio::read(s, asio::buffer(frame), ec);
    if (!ec)
      asio::write(s, asio::buffer(frame), ec);
  }
}

// -- raw transport (frames, no CAF) -------------------------------------------

class raw_peer_listener final : public cluster::transport_listener {
public:
  std::atomic<cluster::transport*> transport{nullptr};

  void on_frame(const cluster::unique_address& from, cluster::lane lane,
                std::span<const std::byte> payload) override {
    if (payload.empty())
      return;
    auto kind = static_cast<char>(payload[0]);
    auto* t = transport.load();
    if (kind == raw_data) {
      ++count_;
    } else if (kind == raw_end && t != nullptr) {
      std::string reply = "C" + std::to_string(count_);
      count_ = 0;
      t->send(from, lane, std::as_bytes(std::span{reply}));
    } else if (t != nullptr) {
      t->send(from, lane, payload); // ping: echo
    }
  }

  void on_peer_up(const cluster::unique_address&, cluster::direction) override {
  }

  void on_peer_down(const cluster::unique_address&, cluster::direction,
                    std::string_view) override {}

  void on_peer_quarantined(const cluster::unique_address&,
                           std::string_view) override {}

private:
  uint64_t count_ = 0; // io thread only
};

// -- actors -------------------------------------------------------------------

caf::behavior troupe_sink(caf::event_based_actor*,
                          cluster::remoting_handle remoting) {
  auto count = std::make_shared<uint64_t>(0);
  return {
    [=](const cluster::remote_ref&, const bench_payload&) { ++*count; },
    [=](const cluster::remote_ref& from, const bench_end&) {
      remoting.tell(from, bench_count{*count});
      *count = 0;
    },
  };
}

caf::behavior troupe_echo(caf::event_based_actor*,
                          cluster::remoting_handle remoting) {
  return {
    [=](const cluster::remote_ref& from, const bench_payload& p) {
      remoting.tell(from, p);
    },
  };
}

caf::behavior basp_sink(caf::event_based_actor*) {
  auto count = std::make_shared<uint64_t>(0);
  return {
    [=](const bench_payload&) { ++*count; },
    [=](const bench_end&) {
      auto n = *count;
      *count = 0;
      return bench_count{n};
    },
  };
}

caf::behavior basp_echo(caf::event_based_actor*) {
  return {[](bench_payload& p) { return std::move(p); }};
}

std::shared_ptr<cluster::tcp_transport>
make_transport(std::shared_ptr<cluster::transport_listener> listener) {
  auto t = cluster::tcp_transport::make(bench_transport_settings(),
                                        std::move(listener));
  if (!t) {
    std::fprintf(stderr, "transport_bench_peer: %s\n",
                 t.error().message.c_str());
    std::exit(1);
  }
  return std::move(*t);
}

void wait_for_stdin_eof() {
  std::string line;
  while (std::getline(std::cin, line)) {
  }
}

int idle_clients(int k, const std::string& hub_text) {
  auto hub = runtime::parse_unique_address(hub_text);
  if (!hub) {
    std::fprintf(stderr, "transport_bench_peer: %s\n",
                 hub.error().message.c_str());
    return 2;
  }
  std::vector<std::shared_ptr<cluster::tcp_transport>> clients;
  auto listener = std::make_shared<raw_peer_listener>();
  std::string hello = "H";
  for (int i = 0; i < k; ++i) {
    clients.push_back(make_transport(listener));
    clients.back()->send(*hub, cluster::lane::ordinary,
                         std::as_bytes(std::span{hello}));
  }
  std::printf("ready\n");
  std::fflush(stdout);
  wait_for_stdin_eof();
  for (auto& c : clients)
    c->shutdown();
  return 0;
}

int serve(bool tuned, cluster::remoting_settings settings) {
  asio::io_context ioc;
  auto pump = listen_loopback(ioc);
  auto echo = listen_loopback(ioc);
  std::thread pump_thread{[&] { accept_loop(pump, serve_pump); }};
  std::thread echo_thread{[&] { accept_loop(echo, serve_echo); }};

  auto raw_listener = std::make_shared<raw_peer_listener>();
  auto raw = make_transport(raw_listener);
  raw_listener->transport = raw.get();

  bench_config cfg{tuned};
  caf::actor_system sys{cfg};
  auto remoting = cluster::remoting_handle::start(
    sys,
    [](std::shared_ptr<cluster::transport_listener> l)
      -> runtime::expected<std::shared_ptr<cluster::transport>> {
      return std::shared_ptr<cluster::transport>{make_transport(std::move(l))};
    },
    settings);
  if (!remoting) {
    std::fprintf(stderr, "transport_bench_peer: %s\n",
                 remoting.error().message.c_str());
    return 1;
  }
  auto sink = sys.spawn(troupe_sink, *remoting);
  auto echo_actor = sys.spawn(troupe_echo, *remoting);
  remoting->publish("sink", sink);
  remoting->publish("echo", echo_actor);
  auto b_sink = sys.spawn(basp_sink);
  auto b_echo = sys.spawn(basp_echo);
  auto sink_port = sys.middleman().publish(b_sink, 0, "127.0.0.1", true);
  auto echo_port = sys.middleman().publish(b_echo, 0, "127.0.0.1", true);
  if (!sink_port || !echo_port) {
    std::fprintf(stderr, "transport_bench_peer: BASP publish failed\n");
    return 1;
  }
  std::printf("ready %u %u %s %s %u %u\n", pump.local_endpoint().port(),
              echo.local_endpoint().port(),
              runtime::to_string(raw->local_address()).c_str(),
              runtime::to_string(remoting->local_address()).c_str(), *sink_port,
              *echo_port);
  std::fflush(stdout);
  wait_for_stdin_eof();

  remoting->stop();
  raw->shutdown();
  for (auto& a : {sink, echo_actor, b_sink, b_echo})
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  pump.close();
  echo.close();
  ::shutdown(pump.native_handle(), SHUT_RDWR);
  pump_thread.detach();
  echo_thread.detach();
  std::_Exit(0); // the serve threads may sit in accept/read
}

} // namespace

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  runtime::set_log_level(runtime::log_level::warning);
  bool tuned = false;
  cluster::remoting_settings settings;
  int clients = 0;
  std::string hub;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg{argv[i]};
    if (arg == "--tuned")
      tuned = true;
    else if (arg == "--io-thread")
      settings.deliver_on_io_thread = true;
    else if (arg == "--idle-clients" && i + 1 < argc)
      clients = std::atoi(argv[++i]);
    else if (arg == "--hub" && i + 1 < argc)
      hub = argv[++i];
    else {
      std::fprintf(stderr, "transport_bench_peer: unknown argument %s\n",
                   argv[i]);
      return 2;
    }
  }
  if (clients > 0)
    return idle_clients(clients, hub);
  return serve(tuned, settings);
}
