// The management API's HTTP path against a raw Boost.Beast server in the
// same run, both answered over one kept-alive loopback connection by the
// same blocking Beast client (DESIGN.md §10: the baseline runs with the
// subject's settings):
// - subject: management::http_server as every node runs it (4 workers,
//   the requests that never wait answered on the io thread) with
//   management::handle over a source that holds a 5-member view;
// - baseline: a synchronous Beast server on one thread that answers each
//   request with the same status, headers and body, prebuilt.
// The ratio is the cost of routing and rendering the JSON (both requests
// are answered on the io thread; a request that may wait adds the hop to
// a worker and back). `alive` is a tiny answer (the
// probes Kubernetes sends every few seconds), `members` the dashboard's
// largest poll.

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "bench_main.hpp"
#include "troupe/management/http_server.hpp"
#include "troupe/management/router.hpp"

using namespace troupe;
using namespace troupe::management;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// A node's view as a real 5-member cluster shows it; the rest answers
// what the router needs and is not measured.
class fixed_source : public management_source {
public:
  fixed_source() {
    view_.self = "10.0.0.1:2552#1001";
    view_.leader = view_.self;
    view_.oldest = "10.0.0.2:2552#1002";
    for (int i = 1; i <= 5; ++i)
      view_.members.push_back(
        {"10.0.0." + std::to_string(i) + ":2552#100" + std::to_string(i),
         "up",
         {"backend", "shard"},
         i,
         true});
  }
  runtime::expected<members_view> members() const override {
    return view_;
  }
  runtime::expected<std::optional<shards_view>>
  shards(std::string_view) const override {
    return std::optional<shards_view>{};
  }
  runtime::expected<std::vector<singleton_view>> singletons() const override {
    return std::vector<singleton_view>{};
  }
  runtime::expected<std::vector<lease_view>> leases() const override {
    return std::vector<lease_view>{};
  }
  health ready() const override {
    return {true, ""};
  }
  health alive() const override {
    return {true, ""};
  }
  runtime::expected<std::string> metrics_text() const override {
    return std::string{};
  }
  runtime::error apply(member_operation, const std::string&) override {
    return {};
  }
  runtime::expected<std::string> bootstrap_seed_nodes() const override {
    return std::string{"{}"};
  }
  runtime::expected<std::vector<fault_view>> faults() const override {
    return std::vector<fault_view>{};
  }
  runtime::error set_fault(const fault_request&) override {
    return {};
  }

private:
  members_view view_;
};

// One kept-alive connection; throws on any error.
class client {
public:
  explicit client(uint16_t port) {
    sock_.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  size_t get(const std::string& target) {
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(sock_, req);
    http::response<http::string_body> res;
    http::read(sock_, buf_, res);
    if (res.result_int() != 200)
      throw std::runtime_error("GET " + target + ": HTTP "
                               + std::to_string(res.result_int()));
    return res.body().size();
  }

private:
  asio::io_context ioc_;
  tcp::socket sock_{ioc_};
  beast::flat_buffer buf_;
};

// The baseline: answers every request on one connection at a time with the
// answer `prebuilt` gives for its target, on one thread.
class raw_server {
public:
  explicit raw_server(std::function<http_response(const std::string&)> answer)
    : answer_(std::move(answer)) {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread{[this] { serve(); }};
  }

  ~raw_server() {
    stopping_ = true;
    boost::system::error_code ec;
    // Wakes accept with one last connection.
    tcp::socket poke{ioc_};
    poke.connect({asio::ip::make_address("127.0.0.1"), port_}, ec);
    thread_.join();
  }

  uint16_t port() const {
    return port_;
  }

private:
  void serve() {
    while (!stopping_) {
      tcp::socket sock{ioc_};
      boost::system::error_code ec;
      acceptor_.accept(sock, ec);
      if (ec || stopping_)
        return;
      beast::flat_buffer buf;
      for (;;) {
        http::request<http::string_body> req;
        http::read(sock, buf, req, ec);
        if (ec)
          break;
        auto a = answer_(std::string{req.target()});
        http::response<http::string_body> res{
          static_cast<http::status>(a.status), req.version()};
        res.set(http::field::content_type, a.content_type);
        res.set(http::field::cache_control, "no-store");
        res.keep_alive(req.keep_alive());
        res.body() = std::move(a.body);
        res.prepare_payload();
        http::write(sock, res, ec);
        if (ec)
          break;
      }
    }
  }

  std::function<http_response(const std::string&)> answer_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

http_request get_request(const std::string& target) {
  return http_request{"GET", target, {}, {}, {}};
}

// The subject: the node's server settings and router over the source.
void subject(benchmark::State& state, const std::string& target) {
  auto source = std::make_shared<fixed_source>();
  router_settings rs;
  http_server_settings hs;
  hs.port = 0;
  hs.workers = 4;
  hs.answer_inline = answers_without_waiting;
  auto srv = http_server::start(
    hs, [source, rs](const http_request& r) { return handle(*source, rs, r); });
  if (!srv) {
    state.SkipWithError(srv.error().message.c_str());
    return;
  }
  client c{(*srv)->port()};
  size_t bytes = 0;
  for (auto _ : state)
    bytes += c.get(target);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// The baseline: the same answer, prebuilt, from the raw server.
void baseline(benchmark::State& state, const std::string& target) {
  fixed_source source;
  // Rendered once by the router (the same bytes the subject sends).
  auto prebuilt = handle(source, {}, get_request(target));
  raw_server srv{[&](const std::string&) { return prebuilt; }};
  client c{srv.port()};
  size_t bytes = 0;
  for (auto _ : state)
    bytes += c.get(target);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void management_alive(benchmark::State& state) {
  subject(state, "/alive");
}
void raw_alive(benchmark::State& state) {
  baseline(state, "/alive");
}
void management_members(benchmark::State& state) {
  subject(state, "/cluster/members");
}
void raw_members(benchmark::State& state) {
  baseline(state, "/cluster/members");
}

} // namespace

BENCHMARK(raw_alive)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(management_alive)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_members)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(management_members)->UseRealTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  troupe::bench::ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // UseRealTime() appends "/real_time" to each name.
  bool complete = reporter.print_ratios({
    {"management_alive/real_time", "raw_alive/real_time"},
    {"management_members/real_time", "raw_members/real_time"},
  });
  benchmark::Shutdown();
  return complete ? 0 : 1;
}
