#include "troupe/runtime/stop_signal.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <signal.h>

namespace troupe::runtime {

namespace {

std::atomic<bool> stop_flag{false};

extern "C" void on_stop_signal(int) {
  stop_flag.store(true);
}

} // namespace

void install_stop_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

bool stop_requested() noexcept {
  return stop_flag.load();
}

void request_stop() noexcept {
  stop_flag.store(true);
}

bool sleep_unless_stopped(timespan d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until)
      break;
    std::this_thread::sleep_for(
      std::min<timespan>(until - now, std::chrono::milliseconds{10}));
  }
  return stop_requested();
}

} // namespace troupe::runtime
