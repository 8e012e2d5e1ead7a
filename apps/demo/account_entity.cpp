#include "account_entity.hpp"

#include <atomic>
#include <memory>

#include <caf/event_based_actor.hpp>

#include <fmt/format.h>

#include "deposit_query.hpp"
#include "store_json.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::demo {

namespace {

constexpr auto answer_slack = std::chrono::seconds{1};

// Incarnations of every account entity in this process.
std::atomic<uint64_t> incarnations{0};

struct account_state_box {
  bool confirmed() const {
    return !confirmed_fn || confirmed_fn();
  }

  std::string id;
  std::string shard;
  uint64_t incarnation = 0;
  /// `<node address>/<incarnation>`: the journal's `writer`.
  std::string writer;
  /// entity_context::member_confirmed.
  std::function<bool()> confirmed_fn;
  account_config cfg;
  cluster::remoting_handle remoting;
  bool recovered = false;
  account_state state;
  runtime::logger log{"demo.account"};
};

using box_ptr = std::shared_ptr<account_state_box>;

struct pending_deposit {
  std::string deposit;
  int64_t amount = 0;
  uint64_t request = 0;
  cluster::remote_ref reply_to;
};

void answer(const box_ptr& box, const pending_deposit& d, uint64_t status,
            std::string body) {
  if (!d.reply_to.is_addressable())
    return;
  if (auto err = box->remoting.send(
        d.reply_to, caf::make_message(deposit_reply_atom::value, d.request,
                                      status, std::move(body))))
    box->log.warning("account {}: cannot answer deposit {}: {}", box->id,
                     d.deposit, err.message);
}

void fail(const box_ptr& box, const pending_deposit& d, std::string why) {
  box->log.warning("account {}: deposit {} not persisted: {}", box->id,
                   d.deposit, why);
  answer(box, d, 503, error_body(why));
}

runtime::http_request store_request(const box_ptr& box, std::string method,
                                    std::string path, std::string body = {}) {
  runtime::http_request req;
  req.method = std::move(method);
  req.url = box->cfg.store_url + path;
  if (!body.empty())
    req.headers.push_back({"Content-Type", "application/json"});
  req.body = std::move(body);
  req.timeout = box->cfg.store_timeout;
  return req;
}

// Recovers the balance, then calls `then(true)`; `then(false, why)` when
// the store gave no usable answer. The mailbox waits meanwhile.
template <class F>
void recover(caf::event_based_actor* self, const box_ptr& box, F then) {
  auto req = store_request(box, "GET", "/accounts/" + box->id);
  self->request(box->cfg.http, box->cfg.store_timeout + answer_slack, req)
    .await(
      [box, then](runtime::http_response& resp) {
        auto st = parse_account_state(resp.body);
        if (resp.status == 200 && st) {
          box->state = *st;
          box->recovered = true;
          then(true, std::string{});
        } else {
          then(false, fmt::format("recovery: the store answered HTTP {}: {}",
                                  resp.status, store_reason(resp.body)));
        }
      },
      [box, then](caf::error& err) {
        then(false, "recovery: " + runtime::error_message(err));
      });
}

void persist(caf::event_based_actor* self, const box_ptr& box,
             pending_deposit d) {
  if (!box->confirmed()) {
    // Frozen or cut off long enough that the others may be downing this
    // node: its shard may already run elsewhere (member_confirmed).
    fail(box, d,
         "this node has not been confirmed by a member recently (paused or "
         "cut off?): not writing");
    return;
  }
  if (box->cfg.history)
    box->cfg.history->record("deposit_write",
                             {{"account", box->id},
                              {"shard", box->shard},
                              {"incarnation", box->incarnation},
                              {"deposit", d.deposit},
                              {"expected_seq", box->state.seq}});
  auto req = store_request(
    box, "POST", "/accounts/" + box->id + "/deposits",
    deposit_body(d.deposit, d.amount, box->state.seq, box->writer));
  self->request(box->cfg.http, box->cfg.store_timeout + answer_slack, req)
    .await(
      [box, d](runtime::http_response& resp) {
        auto [verdict, st] = judge_deposit_answer(resp.status, resp.body);
        if (st)
          box->state = *st; // the answer carries the account's state
        switch (verdict) {
          case deposit_verdict::persisted:
          case deposit_verdict::duplicate:
            answer(box, d, 200, deposit_answer(*st));
            return;
          case deposit_verdict::conflict:
            break;
          case deposit_verdict::unknown:
            box->recovered = false; // read the seq again before the next one
            break;
        }
        fail(box, d,
             fmt::format("the store answered HTTP {}: {}", resp.status,
                         store_reason(resp.body)));
      },
      [box, d](caf::error& err) {
        // The outcome is unknown: read the seq again before the next one.
        box->recovered = false;
        fail(box, d, "store request failed: " + runtime::error_message(err));
      });
}

void on_deposit(caf::event_based_actor* self, const box_ptr& box,
                pending_deposit d) {
  if (box->recovered) {
    persist(self, box, std::move(d));
    return;
  }
  recover(self, box, [self, box, d](bool ok, const std::string& why) {
    if (ok)
      persist(self, box, d);
    else
      fail(box, d, why);
  });
}

} // namespace

caf::behavior account_entity(caf::event_based_actor* self,
                             const sharding::entity_context& ctx,
                             const account_config& cfg) {
  auto box = std::make_shared<account_state_box>();
  box->id = ctx.entity;
  box->shard = ctx.shard;
  box->incarnation = ++incarnations;
  box->writer
    = fmt::format("{}/{}", runtime::to_string(ctx.node), box->incarnation);
  box->cfg = cfg;
  box->remoting = ctx.remoting;
  box->confirmed_fn = ctx.confirmed;
  if (auto history = cfg.history) {
    auto lifecycle = [history, box](std::string_view event) {
      history->record(event, {{"account", box->id},
                              {"shard", box->shard},
                              {"incarnation", box->incarnation}});
    };
    lifecycle("entity_started");
    self->attach_functor([lifecycle] { lifecycle("entity_stopped"); });
  }
  if (is_demo_id(box->id))
    recover(self, box, [box](bool ok, const std::string& why) {
      if (!ok)
        box->log.warning("account {}: {} (tried again at the next deposit)",
                         box->id, why);
    });
  return {
    [self, box](deposit_atom, std::string& deposit, int64_t amount,
                uint64_t request, cluster::remote_ref& reply_to) {
      pending_deposit d{std::move(deposit), amount, request,
                        std::move(reply_to)};
      if (!is_demo_id(box->id))
        fail(box, d, fmt::format("\"{}\" is not an account id", box->id));
      else
        on_deposit(self, box, std::move(d));
    },
  };
}

} // namespace troupe::demo
