#include "deposit_api.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "account_entity.hpp"
#include "deposit_query.hpp"
#include "pending_answers.hpp"
#include "store_json.hpp"
#include "troupe/management/http_server.hpp"

namespace troupe::demo {

namespace {

using management::http_response;

http_response json_answer(unsigned status, std::string body) {
  http_response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

} // namespace

struct deposit_api::impl {
  std::shared_ptr<pending_answers> table = std::make_shared<pending_answers>();
  caf::actor reply_actor;
  cluster::remote_ref reply_ref;
  sharding::shard_region accounts;
  runtime::timespan timeout;
  std::unique_ptr<management::http_server> server;

  http_response handle(const management::http_request& req);
};

http_response deposit_api::impl::handle(const management::http_request& req) {
  auto path = std::string_view{req.target}.substr(0, req.target.find('?'));
  if (path != "/deposit")
    return json_answer(404, error_body("unknown path; the app API has POST "
                                       "/deposit?account=&deposit=&amount="));
  if (req.method != "POST") {
    auto r = json_answer(405, error_body("use POST"));
    r.allow = "POST";
    return r;
  }
  auto q = parse_deposit_query(req.target);
  if (!q)
    return json_answer(400, error_body(q.error().message));
  auto [request, answer] = table->open();
  if (auto err = accounts.tell(q->account, deposit_atom::value, q->deposit,
                               q->amount, request, reply_ref)) {
    table->forget(request);
    return json_answer(
      503, error_body(fmt::format("account {}: {}", q->account, err.message)));
  }
  auto a = table->await(request, answer, timeout);
  if (!a)
    return json_answer(
      504, error_body(fmt::format(
             "deposit {} to account {}: no answer within {}ms (it may still "
             "be persisted)",
             q->deposit, q->account,
             std::chrono::duration_cast<std::chrono::milliseconds>(timeout)
               .count())));
  return json_answer(static_cast<unsigned>(a->status), std::move(a->body));
}

runtime::expected<std::unique_ptr<deposit_api>>
deposit_api::start(caf::actor_system& sys, cluster::remoting_handle remoting,
                   sharding::shard_region accounts,
                   const node_settings& settings) {
  auto x = std::make_unique<impl>();
  x->accounts = std::move(accounts);
  x->timeout = settings.deposit_timeout;
  x->reply_actor
    = sys.spawn([table = x->table](caf::event_based_actor*) -> caf::behavior {
        return {
          [table](const cluster::remote_ref&, deposit_reply_atom,
                  uint64_t request, uint64_t status, std::string& body) {
            table->fulfil(request, entity_answer{status, std::move(body)});
          },
        };
      });
  x->reply_ref = remoting.reply_ref(x->reply_actor);
  management::http_server_settings hs;
  hs.bind = settings.api_bind;
  hs.port = settings.api_port;
  hs.max_connections = 256;
  // Each request waits for its entity (at most deposit_timeout): a
  // deposit for a shard that is moving must not hold the others. The
  // client keeps far fewer in flight.
  hs.workers = 32;
  auto* raw = x.get();
  auto server = management::http_server::start(
    hs,
    [raw](const management::http_request& req) { return raw->handle(req); });
  if (!server) {
    caf::anon_send_exit(x->reply_actor, caf::exit_reason::user_shutdown);
    return server.error();
  }
  x->server = std::move(*server);
  return std::unique_ptr<deposit_api>{new deposit_api(std::move(x))};
}

deposit_api::deposit_api(std::unique_ptr<impl> x) : impl_(std::move(x)) {}

deposit_api::~deposit_api() {
  stop();
}

uint16_t deposit_api::port() const noexcept {
  return impl_->server->port();
}

void deposit_api::stop() {
  impl_->server->stop();
  if (impl_->reply_actor) {
    caf::anon_send_exit(impl_->reply_actor, caf::exit_reason::user_shutdown);
    impl_->reply_actor = caf::actor{};
  }
}

} // namespace troupe::demo
