#include "scheduler.hpp"

#include <memory>

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>

#include "store_json.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::demo {

namespace {

using tick_atom = caf::atom_constant<caf::atom("dmtick")>;

// The client answers within the request's own deadline; this bound only
// keeps a lost answer from stopping the ticks.
constexpr auto answer_slack = std::chrono::seconds{1};

struct scheduler_state {
  singleton::instance_context ctx;
  scheduler_config cfg;
  uint64_t seq = 0;
  runtime::logger log{"demo.scheduler"};
};

void write_record(caf::event_based_actor* self,
                  const std::shared_ptr<scheduler_state>& st) {
  if (!st->ctx.lease_alive()) {
    // The manager stops this instance when it learns of the loss; until
    // then nothing is written under the old token.
    st->log.warning("lease for token {} no longer alive: no ledger write",
                    st->ctx.fencing_token);
    self->delayed_send(self, st->cfg.tick_interval, tick_atom::value);
    return;
  }
  runtime::http_request req;
  req.method = "POST";
  req.url = st->cfg.store_url + "/ledger";
  req.headers.push_back({"Content-Type", "application/json"});
  auto seq = ++st->seq;
  if (st->cfg.history)
    st->cfg.history->record("ledger_write",
                            {{"incarnation", st->ctx.incarnation},
                             {"token", st->ctx.fencing_token},
                             {"seq", seq}});
  req.body = ledger_body(st->ctx.fencing_token, seq, st->cfg.owner);
  req.timeout = st->cfg.store_timeout;
  auto token = st->ctx.fencing_token;
  self
    ->request(st->cfg.http, st->cfg.store_timeout + answer_slack,
              std::move(req))
    .then(
      [self, st, token, seq](runtime::http_response& resp) {
        if (resp.status == 200)
          st->log.info("ledger accepted token {} seq {}", token, seq);
        else
          st->log.warning("ledger rejected token {} seq {}: HTTP {}: {}", token,
                          seq, resp.status, store_reason(resp.body));
        self->delayed_send(self, st->cfg.tick_interval, tick_atom::value);
      },
      [self, st, token, seq](caf::error& err) {
        st->log.warning("ledger write of token {} seq {} failed: {}", token,
                        seq, runtime::error_message(err));
        self->delayed_send(self, st->cfg.tick_interval, tick_atom::value);
      });
}

} // namespace

caf::behavior scheduler(caf::event_based_actor* self,
                        const singleton::instance_context& ctx,
                        const scheduler_config& cfg) {
  auto st = std::make_shared<scheduler_state>();
  st->ctx = ctx;
  st->cfg = cfg;
  st->log.info("scheduler started under fencing token {} (incarnation {})",
               ctx.fencing_token, ctx.incarnation);
  if (auto history = cfg.history) {
    auto instance = [history, ctx](std::string_view event) {
      history->record(event, {{"type", ctx.type_name},
                              {"incarnation", ctx.incarnation},
                              {"token", ctx.fencing_token}});
    };
    instance("singleton_started");
    self->attach_functor([instance] { instance("singleton_stopped"); });
  }
  self->send(self, tick_atom::value);
  return {
    [self, st](tick_atom) { write_record(self, st); },
  };
}

} // namespace troupe::demo
