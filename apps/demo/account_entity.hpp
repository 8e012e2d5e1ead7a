#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/fwd.hpp>

#include "history_log.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/sharding/sharding.hpp"

/// @file
/// The demo's sharded bank account (entity type `account`): each deposit
/// is persisted in the store before it is acknowledged, one at a time,
/// Akka-persistence style (/work/demo-contract.md).

namespace troupe::demo {

/// `(deposit_atom, std::string deposit, int64_t amount, uint64_t request,
/// cluster::remote_ref reply_to)`: persist deposit `deposit` (the
/// client's id for it) of `amount` cents; answer `reply_to` with a
/// `deposit_reply_atom` message carrying `request`.
using deposit_atom = caf::atom_constant<caf::atom("dmdeposit")>;

/// `(deposit_reply_atom, uint64_t request, uint64_t status, std::string
/// body)`: the outcome as the app API answers it: 200 with
/// `{"seq":K,"balance":B}` once the store persisted the deposit, 503 with
/// `{"error":"..."}` otherwise (the store refused it, did not answer, or
/// the account could not be recovered).
using deposit_reply_atom = caf::atom_constant<caf::atom("dmdepreply")>;

/// What every account entity of one node shares.
struct account_config {
  /// The node's HTTP client.
  runtime::http_client_actor http;
  /// The store's base URL, `http://host:port`.
  std::string store_url;
  /// The deadline of one request to the store.
  runtime::timespan store_timeout = std::chrono::seconds{2};
  /// The node's history (history_log.hpp); null: none.
  history_ptr history;
};

/// The entity's behavior. At start it recovers its balance and seq from
/// `GET <store_url>/accounts/{id}` (the mailbox waits meanwhile: `await`).
/// A deposit is then POSTed to `/accounts/{id}/deposits` with
/// `expected_seq` = the seq it knows, and answered only after the store's
/// answer; deposits are handled strictly one at a time (each waits for the
/// previous one's store round trip), so two deposits of one incarnation
/// never race. A 409 `duplicate` (the deposit id was applied before: a
/// client's retry after a lost answer) is acknowledged with the account's
/// state; a 409 `conflict` (another incarnation wrote: the optimistic check
/// caught it) answers 503 and takes the account's state from the store's
/// answer; any other answer or a failed request answers 503 and makes the
/// entity recover again before the next deposit (a request that timed out
/// may still have been persisted). Logs WARNING lines
/// (component "demo.account") for failures only.
///
/// Right before each write it checks `ctx.member_confirmed()` and answers
/// 503 without writing when the cluster has not confirmed this node
/// recently (a process that resumes from SIGSTOP may already have been
/// downed and its shard started elsewhere).
/// Each incarnation has a number unique in this process (1, 2, ...); its
/// writes carry `writer` = `<node address>/<number>` (the store journals
/// it). History (`cfg.history`): `entity_started` and `entity_stopped`
/// (account, shard, incarnation) and, for each write, `deposit_write`
/// (account, shard, incarnation, deposit, expected_seq) stamped just
/// before the request is sent.
///
/// Runs on the entity's own actor (the shard region spawns it).
caf::behavior account_entity(caf::event_based_actor* self,
                             const sharding::entity_context& ctx,
                             const account_config& cfg);

} // namespace troupe::demo
