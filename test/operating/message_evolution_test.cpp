// Message evolution across a rolling upgrade (docs/guides/operations.md
// §4.4): CAF's binary serializer has no schema evolution, so a changed
// message is a new type under a new name, and the new version registers
// both while old nodes remain. Nodes of version 1 and 2 in one process,
// each with its own actor system and its own type registrations, over real
// loopback sockets (tcp_transport).

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "tcp_fixture.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/test/eventually.hpp"

using namespace troupe;
using namespace troupe::test;
using cluster::remote_ref;
using cluster::remoting_handle;

namespace evolution {

/// Version 1 of a deposit: an amount in the account's currency.
struct deposit {
  std::string account;
  int64_t amount = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deposit& x) {
  return f(caf::meta::type_name("evolution.deposit"), x.account, x.amount);
}

/// Version 2 adds a currency: a new type under a new name, never a new
/// field in `deposit` (an old node would misread the bytes).
struct deposit_v2 {
  std::string account;
  int64_t amount = 0;
  std::string currency;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deposit_v2& x) {
  return f(caf::meta::type_name("evolution.deposit.v2"), x.account, x.amount,
           x.currency);
}

/// The answer, the same in both versions.
struct deposit_ack {
  std::string account;
  int64_t amount = 0;
  std::string currency;
  /// "v1" or "v2": the code that handled it.
  std::string handled_by;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deposit_ack& x) {
  return f(caf::meta::type_name("evolution.deposit_ack"), x.account, x.amount,
           x.currency, x.handled_by);
}

/// What a sender of version 2 sends to a receiver of `app_version`: the new
/// type only to nodes that know it; to an old node the old type, which can
/// carry only the default currency.
caf::message deposit_for(int app_version, std::string account, int64_t amount,
                         std::string currency) {
  if (app_version >= 2)
    return caf::make_message(
      deposit_v2{std::move(account), amount, std::move(currency)});
  REQUIRE(currency == "EUR"); // what version 1 assumes
  return caf::make_message(deposit{std::move(account), amount});
}

} // namespace evolution

namespace {

using namespace std::chrono_literals;

struct received {
  std::mutex mtx;
  std::vector<evolution::deposit_ack> acks;
  size_t handled = 0;
  size_t reply_errors = 0;

  size_t ack_count() {
    std::lock_guard g{mtx};
    return acks.size();
  }
};

/// The bank of a node of `version`: version 1 knows `deposit`, version 2
/// both types. Remoting delivers each message with the sender's reply
/// reference first; the bank answers through it.
caf::behavior bank(caf::event_based_actor*, int version,
                   remoting_handle remoting, std::shared_ptr<received> log) {
  auto answer = [=](const remote_ref& from, evolution::deposit_ack ack) {
    auto err = remoting.tell(from, std::move(ack));
    std::lock_guard g{log->mtx}; // (Catch is not thread-safe: the test
    ++log->handled;              // checks these counts)
    if (err)
      ++log->reply_errors;
  };
  if (version == 1)
    return {
      [=](const remote_ref& from, const evolution::deposit& d) {
        answer(from, {d.account, d.amount, "EUR", "v1"});
      },
    };
  return {
    [=](const remote_ref& from, const evolution::deposit& d) {
      answer(from, {d.account, d.amount, "EUR", "v2"});
    },
    [=](const remote_ref& from, const evolution::deposit_v2& d) {
      answer(from, {d.account, d.amount, d.currency, "v2"});
    },
  };
}

/// Collects the acks a node receives.
caf::behavior ack_sink(caf::event_based_actor*, std::shared_ptr<received> log) {
  return {
    [=](const remote_ref&, const evolution::deposit_ack& ack) {
      std::lock_guard g{log->mtx};
      log->acks.push_back(ack);
    },
  };
}

/// One node of `version`: its own actor system with that version's types,
/// remoting over loopback TCP, "bank" and "acks" published.
class versioned_node {
public:
  struct config : caf::actor_system_config {
    explicit config(int version) {
      runtime::add_runtime_types(*this);
      cluster::add_cluster_types(*this);
      add_message_type<evolution::deposit>("evolution.deposit");
      add_message_type<evolution::deposit_ack>("evolution.deposit_ack");
      if (version >= 2)
        add_message_type<evolution::deposit_v2>("evolution.deposit.v2");
      set("scheduler.max-threads", size_t{2});
      set("logger.file-verbosity", caf::atom("quiet"));
    }
  };

  explicit versioned_node(int version)
    : version(version), cfg_(version), sys_(cfg_) {
    auto made = remoting_handle::start(
      sys_, [](auto listener) { return tcp(std::move(listener)); });
    REQUIRE(made);
    remoting = *made;
    bank_ = sys_.spawn(bank, version, remoting, bank_log);
    sink_ = sys_.spawn(ack_sink, acks);
    REQUIRE(remoting.publish("bank", bank_));
    REQUIRE(remoting.publish("acks", sink_));
  }

  ~versioned_node() {
    remoting.stop();
    caf::anon_send_exit(bank_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
  }

  versioned_node(const versioned_node&) = delete;
  versioned_node& operator=(const versioned_node&) = delete;

  remote_ref ref(std::string name) const {
    return remoting.local_ref(std::move(name));
  }

  /// Sends `msg` to `to`'s bank with this node's ack sink as the reply
  /// reference.
  void send_to_bank(const versioned_node& to, const caf::message& msg) {
    REQUIRE_FALSE(remoting.send(to.ref("bank"), msg, ref("acks")));
  }

  int version;
  remoting_handle remoting;
  std::shared_ptr<received> bank_log = std::make_shared<received>();
  std::shared_ptr<received> acks = std::make_shared<received>();

private:
  static runtime::expected<std::shared_ptr<cluster::transport>>
  tcp(std::shared_ptr<cluster::transport_listener> listener) {
    auto made = cluster::tcp_transport::make(loopback(), std::move(listener));
    if (!made)
      return made.error();
    return std::shared_ptr<cluster::transport>{std::move(*made)};
  }

  config cfg_;
  caf::actor_system sys_;
  caf::actor bank_;
  caf::actor sink_;
};

evolution::deposit_ack ack_at(received& r, size_t i) {
  std::lock_guard g{r.mtx};
  REQUIRE(i < r.acks.size());
  return r.acks[i];
}

} // namespace

TEST_CASE("message evolution: a node of version 1 and one of version 2 "
          "interoperate on a changed message, and the new type flows "
          "between new nodes") {
  versioned_node old_node{1};
  versioned_node new_a{2};
  versioned_node new_b{2};
  // Old to new: the old type, handled by the new code.
  old_node.send_to_bank(new_a, caf::make_message(evolution::deposit{"a", 5}));
  REQUIRE(eventually([&] { return old_node.acks->ack_count() == 1; }));
  auto a1 = ack_at(*old_node.acks, 0);
  CHECK(a1.account == "a");
  CHECK(a1.amount == 5);
  CHECK(a1.currency == "EUR");
  CHECK(a1.handled_by == "v2");
  // New to old: the sender picks the old type for the old node.
  new_a.send_to_bank(old_node,
                     evolution::deposit_for(old_node.version, "b", 7, "EUR"));
  REQUIRE(eventually([&] { return new_a.acks->ack_count() == 1; }));
  auto a2 = ack_at(*new_a.acks, 0);
  CHECK(a2.account == "b");
  CHECK(a2.amount == 7);
  CHECK(a2.handled_by == "v1");
  // New to new: the new type, with its new field.
  new_a.send_to_bank(new_b,
                     evolution::deposit_for(new_b.version, "c", 9, "USD"));
  REQUIRE(eventually([&] { return new_a.acks->ack_count() == 2; }));
  auto a3 = ack_at(*new_a.acks, 1);
  CHECK(a3.account == "c");
  CHECK(a3.amount == 9);
  CHECK(a3.currency == "USD");
  CHECK(a3.handled_by == "v2");
  // Every answer went out, and nothing was undecodable anywhere.
  for (auto* n : {&old_node, &new_a, &new_b}) {
    std::lock_guard g{n->bank_log->mtx};
    CHECK(n->bank_log->reply_errors == 0);
  }
  CHECK(old_node.remoting.metrics().undecodable == 0);
  CHECK(new_a.remoting.metrics().undecodable == 0);
  CHECK(new_b.remoting.metrics().undecodable == 0);
}

TEST_CASE("message evolution: the new type sent to an old node is a counted "
          "drop there, never a wrong decode, and the old type still works "
          "afterwards") {
  versioned_node old_node{1};
  versioned_node new_node{2};
  // What a sender that ignored the receiver's version would do.
  new_node.send_to_bank(
    old_node, caf::make_message(evolution::deposit_v2{"a", 5, "USD"}));
  REQUIRE(
    eventually([&] { return old_node.remoting.metrics().undecodable == 1; }));
  CHECK(old_node.remoting.transport().metrics().total.dropped(
          cluster::drop_reason::undecodable)
        == 1);
  {
    std::lock_guard g{old_node.bank_log->mtx};
    CHECK(old_node.bank_log->handled == 0);
  }
  new_node.send_to_bank(
    old_node, evolution::deposit_for(old_node.version, "a", 5, "EUR"));
  REQUIRE(eventually([&] { return new_node.acks->ack_count() == 1; }));
  CHECK(ack_at(*new_node.acks, 0).handled_by == "v1");
  CHECK(old_node.remoting.metrics().undecodable == 1);
}
