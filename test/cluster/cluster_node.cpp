// cluster_node: one process of the multi-process cluster tests (and of the
// cluster benchmark).
//
// Starts a troupe node with the cluster module, remoting, the cluster
// daemon and the split brain resolver (downing.*: keep_majority unless
// configured otherwise), all from its configuration (`--cluster.key=value`
// flags, TROUPE_* environment variables, `--config=FILE`, as every troupe
// program; a non-empty `cluster.seed_nodes` joins at start), subscribes to the
// membership events and prints one line per fact to stdout, each written
// whole with one write(2):
//
//   ready <host:port#uid>                   once remoting is up (first line)
//   event <kind> <host:port#uid>            per event; kind is the event's
//                                           name (member_joined, member_up,
//                                           unreachable_member,
//                                           reachable_member, member_removed,
//                                           ...); the address is the member's
//   event leader_changed <host:port#uid|none>
//   event role_leader_changed <host:port#uid|none> <role>
//   stats bytes_in=<n> bytes_out=<n> messages_in=<n> messages_out=<n>
//                                           every --report_interval: the
//                                           transport's cumulative counters
//                                           (transport_metrics::total: whole
//                                           frames, summed over peers)
//   management <port>                       with --with_management, once
//                                           the management API serves
//   stopping / stopped                      on SIGTERM/SIGINT, or when the
//                                           daemon stops the node (downed,
//                                           removed, refused, merged)
//   contacts <n>                            --contacts_file was read: n
//                                           contact endpoints handed to the
//                                           daemon
//
// The state a subscriber receives first is printed as events too (Akka's
// InitialStateAsEvents): a member event per member by its status, then
// unreachable_member per unreachable member, then leader_changed, so no
// event is lost between the daemon's start and the subscription.
//
// Exits after the node's coordinated shutdown (its shard region hands
// off, it leaves the cluster, its singleton hands over, its leases are
// released) with the reason's exit code (runtime::exit_code: 0 after a
// signal or a leave, 1 when the cluster stopped it, 75 when its cluster
// left to join another of the same name: restart it), 1 with a message on
// stderr naming the problem on a bad flag or configuration. Asks for
// SIGKILL when its parent dies.
//
// Usage: cluster_node [--with_management] [--report_interval=DURATION]
//                     [--singleton=NAME] [--singleton_journal=PATH]
//                     [--sharding=TYPE]
//                     [--sharding_journal=PATH] [--sharding_client=N]
//                     [--sharding_client_log=PATH] [--key=value ...]
//   --with_management    starts the management API (management.*) and,
//                        when cluster.bootstrap.discovery_method is set,
//                        Cluster Bootstrap (cluster.seed_nodes empty).
//   --report_interval    a tool flag (not a configuration key), e.g. 1s or
//                        500ms; default: no stats lines.
//   --singleton          starts a singleton manager and a proxy for NAME
//                        (singleton.* and, with singleton.use_lease, lease.*
//                        keys) after the resolver; the instance prints
//                          event singleton_started <incarnation> <token>
//                          event singleton_stopped <incarnation>
//   --singleton_journal  the oracle's shared file (DESIGN.md §10), appended
//                        with O_APPEND, one write(2) per line:
//                          <kind> <node> <incarnation> <token> <ns> <seq>
//                        ns is CLOCK_MONOTONIC (one clock for every process
//                        of the host); kinds:
//                          start, stop     the instance's life (stop from
//                                          its exit handler, before it
//                                          terminates)
//                          effect          every 50 ms while it runs, only
//                                          after ctx.lease_alive() said yes
//                          recv <seq>      a client message it received
//                          send <seq> <target>  the client sent <seq> to the
//                                          proxy, which then knew <target>
//                                          (an address, or none)
//                          client_done <seq>    the client's last <seq>
//                        (incarnation and token are 0 on client lines).
//   --sharding           starts a shard region of TYPE (sharding.*, and
//                        with sharding.use_lease the lease.* keys) after
//                        the singleton; a node without sharding.role gets a
//                        proxy-only region. Each entity answers a
//                        shard_msg{id, reply_to} with a shard_ack{id,
//                        entity, node, incarnation} to reply_to.
//   --sharding_journal   the sharding oracle's shared file, appended with
//                        O_APPEND, one write(2) per line:
//                          <ns> started <entity> <node> <incarnation>
//                          <ns> handled <entity> <node> <incarnation> <id>
//                          <ns> stopped <entity> <node> <incarnation>
//                          <ns> coordinator_started <node> <incarnation>
//                          <ns> coordinator_stopped <node> <incarnation>
//                        the incarnation counts the entity's incarnations
//                        on this process from 1; `handled` is written before
//                        the ack is sent, `stopped` from the entity's exit
//                        handler or exit functor. The coordinator lines come
//                        from polling the coordinator's singleton manager
//                        every 10 ms (its status names the running
//                        instance): started carries the time the poll first
//                        saw it, stopped the last time a poll saw it
//                        running, so the window is inside the real one.
//   --sharding_client    N: sends shard_msg to entities e0..e<N-1> round
//                        robin, ids 1, 2, 3, ..., one round per second
//                        (N / 100 messages every 10 ms, at least 1), from
//                        the start until the node stops.
//   --sharding_client_log  the client's file (one write(2) per line):
//                          acked <id> <entity> <node> <incarnation>
//                        per shard_ack received.
//   --contacts_file      a file of cluster endpoints (host:port, separated
//                        by commas or new lines), read every 100 ms: when
//                        its content changes, the endpoints become the
//                        daemon's contact endpoints (cluster_handle::
//                        set_contact_endpoints, as the bootstrap would hand
//                        them), and `contacts <n>` is printed. A missing file
//                        is no list yet; a bad endpoint is reported on
//                        stderr and the list is not used.
// Signals besides SIGTERM/SIGINT: SIGUSR1 makes the node leave the cluster
// gracefully (it stops once removed); SIGUSR2 starts the proxy client (a
// numbered uint64_t through the proxy every 10 ms, journaled as send; the
// numbers start after port x 1,000,000, so that the clients of several nodes
// never send the same number), and a second SIGUSR2 stops it (client_done).

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <fmt/format.h>

#include "troupe/bootstrap/bootstrap_coordinator.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/downing/caf_glue.hpp"
#include "troupe/downing/downing_actor.hpp"
#include "troupe/downing/downing_settings.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/management/management_service.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/runtime/stop_signal.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/singleton/singleton.hpp"
#include "troupe/test/journal_file.hpp"

using namespace troupe;
using troupe::test::monotonic_ns;

namespace {

constexpr std::string_view report_flag = "--report_interval=";
constexpr std::string_view management_flag = "--with_management";
constexpr std::string_view singleton_flag = "--singleton=";
constexpr std::string_view journal_flag = "--singleton_journal=";
constexpr std::string_view sharding_flag = "--sharding=";
constexpr std::string_view sharding_journal_flag = "--sharding_journal=";
constexpr std::string_view client_flag = "--sharding_client=";
constexpr std::string_view client_log_flag = "--sharding_client_log=";
constexpr std::string_view contacts_flag = "--contacts_file=";

/// Writes `text` and a newline with one write(2), under a lock: the
/// subscriber's thread and main's never interleave within a line.
void say(const std::string& text) {
  static std::mutex mtx;
  auto line = text + "\n";
  std::lock_guard guard{mtx};
  [[maybe_unused]] auto n = ::write(STDOUT_FILENO, line.data(), line.size());
}

int fail(const std::string& message) {
  std::fprintf(stderr, "cluster_node: %s\n", message.c_str());
  return 1;
}

std::string address_or_none(const std::optional<runtime::unique_address>& x) {
  return x ? runtime::to_string(*x) : std::string{"none"};
}

/// `event <kind> <subject>`: the kind is the first word of the event's
/// to_string, the subject its member's address (or the leader).
std::string event_line(const cluster::cluster_event& e) {
  auto text = cluster::to_string(e);
  auto kind = text.substr(0, text.find(' '));
  auto subject = std::visit(
    [](const auto& x) -> std::string {
      using event = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<event, cluster::leader_changed>)
        return address_or_none(x.leader);
      else if constexpr (std::is_same_v<event, cluster::role_leader_changed>)
        return address_or_none(x.leader) + " " + x.role;
      else
        return runtime::to_string(x.member.address);
    },
    e);
  return "event " + kind + " " + subject;
}

/// The events that lead from nothing to `s` (Akka's InitialStateAsEvents).
std::vector<cluster::cluster_event>
as_events(const cluster::current_cluster_state& s) {
  using cluster::member_status;
  std::vector<cluster::cluster_event> result;
  for (const auto& m : s.members) {
    switch (m.status) {
      case member_status::joining:
        result.emplace_back(cluster::member_joined{m});
        break;
      case member_status::weakly_up:
        result.emplace_back(cluster::member_weakly_up{m});
        break;
      case member_status::up:
        result.emplace_back(cluster::member_up{m});
        break;
      case member_status::leaving:
        result.emplace_back(cluster::member_left{m});
        break;
      case member_status::exiting:
        result.emplace_back(cluster::member_exited{m});
        break;
      case member_status::down:
        result.emplace_back(cluster::member_downed{m});
        break;
      case member_status::removed:
        break;
    }
  }
  for (const auto& m : s.unreachable)
    result.emplace_back(cluster::unreachable_member{m});
  if (s.leader)
    result.emplace_back(cluster::leader_changed{s.leader});
  return result;
}

template <class... Events>
caf::behavior printer_impl(std::variant<Events...>*) {
  return {
    [](const cluster::current_cluster_state& s) {
      for (const auto& e : as_events(s))
        say(event_line(e));
    },
    [](const Events& e) { say(event_line(cluster::cluster_event{e})); }...,
  };
}

/// The subscriber: prints every event it receives.
caf::behavior printer(caf::event_based_actor*) {
  return printer_impl(static_cast<cluster::cluster_event*>(nullptr));
}

std::string stats_line(const cluster::transport_metrics& m) {
  return fmt::format("stats bytes_in={} bytes_out={} messages_in={} "
                     "messages_out={}",
                     m.total.bytes_in, m.total.bytes_out, m.total.messages_in,
                     m.total.messages_out);
}

// ---- the singleton and its oracle -----------------------------------------

using effect_atom = caf::atom_constant<caf::atom("effect")>;

/// SIGUSR1 (leave) and SIGUSR2 (client start/stop) counts.
std::atomic<int> leave_signals{0};
std::atomic<int> client_signals{0};

extern "C" void on_user_signal(int sig) {
  if (sig == SIGUSR1)
    leave_signals.fetch_add(1);
  else
    client_signals.fetch_add(1);
}

void install_user_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_user_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR1, &sa, nullptr);
  ::sigaction(SIGUSR2, &sa, nullptr);
}

/// The contact endpoints of `--contacts_file`: re-read on every `poll`,
/// handed to the daemon when the text changed.
class contacts_file {
public:
  explicit contacts_file(std::string path) : path_(std::move(path)) {}

  void poll(const cluster::cluster_handle& h) {
    if (path_.empty())
      return;
    std::ifstream in{path_};
    if (!in)
      return;
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    if (text == last_)
      return;
    last_ = text;
    std::vector<cluster::endpoint> eps;
    std::string item;
    for (char c : text + ",") {
      if (c != ',' && c != '\n' && c != ' ') {
        item += c;
        continue;
      }
      if (item.empty())
        continue;
      auto ep = cluster::parse_seed_node(item);
      if (!ep) {
        std::fprintf(stderr, "cluster_node: --contacts_file %s: %s\n",
                     path_.c_str(), ep.error().message.c_str());
        return;
      }
      eps.push_back(*ep);
      item.clear();
    }
    say(fmt::format("contacts {}", eps.size()));
    h.set_contact_endpoints(std::move(eps));
  }

private:
  std::string path_;
  std::string last_;
};

/// A file appended to by several processes: one write(2) per line on an
/// O_APPEND descriptor, so lines never interleave. Without a path, writes
/// nothing.
class append_file {
public:
  bool open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return fd_ >= 0;
  }

  bool is_open() const noexcept {
    return fd_ >= 0;
  }

  /// Appends `line` and a newline.
  void write_line(std::string line) const {
    if (fd_ < 0)
      return;
    line += '\n';
    [[maybe_unused]] auto n = ::write(fd_, line.data(), line.size());
  }

private:
  int fd_ = -1;
};

/// The singleton's shared journal (see the file comment).
class journal {
public:
  bool open(const std::string& path) {
    return file_.open(path);
  }

  void write(std::string_view kind, const std::string& node,
             uint64_t incarnation, uint64_t token, uint64_t seq = 0,
             std::string_view target = {}) const {
    auto line = fmt::format("{} {} {} {} {} {}", kind, node, incarnation, token,
                            monotonic_ns(), seq);
    if (!target.empty())
      line += fmt::format(" {}", target);
    file_.write_line(std::move(line));
  }

private:
  append_file file_;
};

journal the_journal;

/// Runs `journal` once when `self` stops: from its exit handler (before it
/// terminates, for the stop message an exit), or else from its exit
/// functor (killed, or quit by itself).
template <class F>
void on_stop(caf::event_based_actor* self, F journal) {
  auto stop = [journal, stopped = std::make_shared<bool>(false)] {
    if (*stopped)
      return;
    *stopped = true;
    journal();
  };
  self->set_exit_handler([=](caf::exit_msg& m) {
    stop();
    self->quit(m.reason);
  });
  self->attach_functor(stop);
}

/// The singleton instance: journals its start, an effect every 50 ms while
/// its lease is alive, every client message, and its stop (from the exit
/// handler, i.e. before the manager sees it terminate).
caf::behavior singleton_instance(caf::event_based_actor* self,
                                 const singleton::instance_context& ctx) {
  auto node = runtime::to_string(ctx.node);
  auto inc = ctx.incarnation;
  auto token = ctx.fencing_token;
  the_journal.write("start", node, inc, token);
  say(fmt::format("event singleton_started {} {}", inc, token));
  on_stop(self, [=] {
    the_journal.write("stop", node, inc, token);
    say(fmt::format("event singleton_stopped {}", inc));
  });
  self->send(self, effect_atom::value);
  auto alive = ctx.check_alive;
  return {
    [=](effect_atom) {
      if (!alive || alive())
        the_journal.write("effect", node, inc, token);
      self->delayed_send(self, std::chrono::milliseconds{50},
                         effect_atom::value);
    },
    [=](const cluster::remote_ref&, uint64_t seq) {
      the_journal.write("recv", node, inc, token, seq);
    },
  };
}

/// The proxy client of SIGUSR2: sends the next number through the proxy,
/// journaling the target the proxy knew just before.
class proxy_client {
public:
  proxy_client(caf::actor_system& sys, singleton::singleton_proxy proxy,
               const runtime::unique_address& node)
    : self_(sys), proxy_(std::move(proxy)), node_(runtime::to_string(node)),
      seq_(uint64_t{node.port} * 1'000'000) {}

  void send_next() {
    std::string target = "none";
    self_
      ->request(proxy_.actor(), std::chrono::seconds{1},
                singleton::status_atom::value)
      .receive(
        [&](const singleton::proxy_status& st) {
          if (st.target.is_addressable())
            target = runtime::to_string(st.target.node);
        },
        [&](const caf::error&) { target = "unknown"; });
    ++seq_;
    the_journal.write("send", node_, 0, 0, seq_, target);
    proxy_.tell(seq_);
  }

  void done() const {
    the_journal.write("client_done", node_, 0, 0, seq_);
  }

private:
  caf::scoped_actor self_;
  singleton::singleton_proxy proxy_;
  std::string node_;
  uint64_t seq_;
};

// ---- sharding and its oracle ----------------------------------------------

/// What the sharding client sends to an entity, and what the entity answers.
struct shard_msg {
  uint64_t id = 0;
  cluster::remote_ref reply_to;
};

template <class Inspector>
auto inspect(Inspector& f, shard_msg& x) {
  return f(x.id, x.reply_to);
}

struct shard_ack {
  uint64_t id = 0;
  std::string entity;
  std::string node;
  uint64_t incarnation = 0;
};

template <class Inspector>
auto inspect(Inspector& f, shard_ack& x) {
  return f(x.id, x.entity, x.node, x.incarnation);
}

void add_sharding_test_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<shard_msg>("troupe.test.shard_msg");
  cfg.add_message_type<shard_ack>("troupe.test.shard_ack");
}

append_file sharding_journal;
append_file client_log;

/// `<ns> <rest>` into the sharding journal.
void journal_line(const std::string& rest) {
  sharding_journal.write_line(fmt::format("{} {}", monotonic_ns(), rest));
}

/// The next incarnation number of `entity` on this process (from 1).
uint64_t next_incarnation(const std::string& entity) {
  static std::mutex mtx;
  static std::map<std::string, uint64_t> counters;
  std::lock_guard guard{mtx};
  return ++counters[entity];
}

/// The entity: journals its start, every message before it acknowledges
/// it, and its stop (from the exit handler, or the exit functor when it is
/// killed).
caf::behavior sharded_entity(caf::event_based_actor* self,
                             const sharding::entity_context& ctx) {
  auto node = runtime::to_string(ctx.node);
  auto inc = next_incarnation(ctx.entity);
  auto who = fmt::format("{} {} {}", ctx.entity, node, inc);
  auto ack_prefix = shard_ack{0, ctx.entity, node, inc};
  auto remoting = ctx.remoting;
  journal_line("started " + who);
  on_stop(self, [=] { journal_line("stopped " + who); });
  return {
    [=](const shard_msg& m) {
      journal_line(fmt::format("handled {} {}", who, m.id));
      auto ack = ack_prefix;
      ack.id = m.id;
      remoting.send(m.reply_to, caf::make_message(std::move(ack)));
    },
  };
}

using poll_atom = caf::atom_constant<caf::atom("poll")>;

/// Journals the coordinator's life on this node as its singleton manager's
/// status shows it: asks every 10 ms; quits when the manager terminates
/// (during the node's shutdown, after its instance stopped).
caf::behavior coordinator_watch(caf::event_based_actor* self,
                                singleton::singleton_manager m,
                                std::string node) {
  struct state {
    uint64_t running = 0;
    uint64_t last_seen = 0;
  };
  auto st = std::make_shared<state>();
  auto stopped_line = [=] {
    if (st->running != 0)
      sharding_journal.write_line(fmt::format(
        "{} coordinator_stopped {} {}", st->last_seen, node, st->running));
    st->running = 0;
  };
  self->monitor(m.actor());
  self->set_down_handler([=](caf::down_msg&) {
    stopped_line();
    self->quit();
  });
  self->send(self, poll_atom::value);
  return {
    [=](poll_atom) {
      auto seen = [=](uint64_t inc) {
        if (inc != st->running) {
          stopped_line();
          if (inc != 0)
            journal_line(fmt::format("coordinator_started {} {}", node, inc));
          st->running = inc;
        }
        st->last_seen = monotonic_ns();
        self->delayed_send(self, std::chrono::milliseconds{10},
                           poll_atom::value);
      };
      self
        ->request(m.actor(), std::chrono::seconds{1},
                  singleton::status_atom::value)
        .then([=](const singleton::manager_status& x) { seen(x.incarnation); },
              [=](const caf::error&) { seen(0); });
    },
  };
}

/// The sharding client: sends shard_msg round robin to e0..e<n-1> and logs
/// every ack.
class sharding_client {
public:
  sharding_client(caf::actor_system& sys,
                  const cluster::remoting_handle& remoting,
                  sharding::shard_region region, uint64_t entities)
    : region_(std::move(region)), entities_(entities) {
    receiver_ = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
      auto log = [](const shard_ack& a) {
        client_log.write_line(fmt::format("acked {} {} {} {}", a.id, a.entity,
                                          a.node, a.incarnation));
      };
      return {
        [=](const cluster::remote_ref&, const shard_ack& a) { log(a); },
        [=](const shard_ack& a) { log(a); },
      };
    });
    reply_to_ = remoting.reply_ref(receiver_);
  }

  ~sharding_client() {
    caf::anon_send_exit(receiver_, caf::exit_reason::user_shutdown);
  }

  /// One tick's messages (a round per second at a tick every 10 ms).
  void send_batch() {
    auto batch = std::max<uint64_t>(1, entities_ / 100);
    for (uint64_t i = 0; i < batch; ++i) {
      ++last_id_;
      auto entity = fmt::format("e{}", (last_id_ - 1) % entities_);
      region_.tell(entity, shard_msg{last_id_, reply_to_});
    }
  }

private:
  sharding::shard_region region_;
  uint64_t entities_;
  caf::actor receiver_;
  cluster::remote_ref reply_to_;
  uint64_t last_id_ = 0;
};

} // namespace

int main(int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  runtime::install_stop_signal_handlers();
  install_user_signal_handlers();
  std::optional<runtime::timespan> report_interval;
  std::string singleton_name;
  std::string sharding_type;
  uint64_t client_entities = 0;
  bool with_management = false;
  std::string contacts_path;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg{argv[i]};
    if (arg == management_flag) {
      with_management = true;
      continue;
    }
    if (arg.rfind(singleton_flag, 0) == 0) {
      singleton_name = arg.substr(singleton_flag.size());
      continue;
    }
    if (arg.rfind(journal_flag, 0) == 0) {
      auto path = std::string{arg.substr(journal_flag.size())};
      if (!the_journal.open(path))
        return fail(fmt::format("bad --singleton_journal: cannot open {}: {}",
                                path, std::strerror(errno)));
      continue;
    }
    if (arg.rfind(sharding_flag, 0) == 0) {
      sharding_type = arg.substr(sharding_flag.size());
      continue;
    }
    if (arg.rfind(sharding_journal_flag, 0) == 0
        || arg.rfind(client_log_flag, 0) == 0) {
      auto journal = arg.rfind(sharding_journal_flag, 0) == 0;
      auto& file = journal ? sharding_journal : client_log;
      auto path = std::string{arg.substr(arg.find('=') + 1)};
      if (!file.open(path))
        return fail(fmt::format("bad {}: cannot open {}: {}",
                                arg.substr(0, arg.find('=')), path,
                                std::strerror(errno)));
      continue;
    }
    if (arg.rfind(contacts_flag, 0) == 0) {
      contacts_path = arg.substr(contacts_flag.size());
      continue;
    }
    if (arg.rfind(client_flag, 0) == 0) {
      auto text = std::string{arg.substr(client_flag.size())};
      char* end = nullptr;
      errno = 0;
      client_entities = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno != 0 || client_entities == 0
          || text[0] == '-')
        return fail(fmt::format("bad --sharding_client: {} is not a positive "
                                "number of entities",
                                text));
      continue;
    }
    if (arg.rfind(report_flag, 0) != 0) {
      args.emplace_back(arg);
      continue;
    }
    auto d = runtime::parse_duration(arg.substr(report_flag.size()));
    if (!d)
      return fail(fmt::format("bad --report_interval: {}", d.error().message));
    if (d->count() <= 0)
      return fail(fmt::format("bad --report_interval: {} is not positive",
                              arg.substr(report_flag.size())));
    report_interval = *d;
  }
  runtime::node_options opts;
  opts.modules = {lease::lease_module(), cluster::cluster_module(),
                  downing::downing_module(), singleton::singleton_module()};
  if (!sharding_type.empty()) {
    opts.modules.push_back(sharding::sharding_module());
    opts.modules.push_back(
      runtime::module{"sharding_test", {}, add_sharding_test_types});
  } else if (client_entities > 0) {
    return fail("bad --sharding_client: needs --sharding=TYPE");
  }
  if (with_management) {
    opts.modules.push_back(management::management_module());
    opts.modules.push_back(bootstrap::bootstrap_module());
  }
  opts.sources = runtime::sources_from_process(args, nullptr);
  auto node = runtime::node::start(std::move(opts));
  if (!node)
    return fail(node.error().message);
  // The resolver's settings are checked before any networking starts, so a
  // refused configuration never shows up as a half-started node.
  if (auto sbr = downing::downing_settings_from_config((*node)->cfg()); !sbr)
    return fail(sbr.error().message);
  auto remoting = cluster::remoting_handle::start(**node);
  if (!remoting)
    return fail(remoting.error().message);
  say(fmt::format("ready {}", runtime::to_string(remoting->local_address())));
  auto members = cluster::cluster_handle::start(**node, *remoting);
  if (!members)
    return fail(members.error().message);
  // The split brain resolver as every node runs it (keep_majority unless
  // `downing.*` says otherwise; `downing.active_strategy=off` for none).
  auto resolver = downing::downing_handle::start(**node, *members);
  if (!resolver)
    return fail(resolver.error().message);
  // The management API and Cluster Bootstrap, as cluster_system starts
  // them (only with --with_management: other tests run several nodes
  // without choosing management ports).
  std::unique_ptr<management::management_service> api;
  if (with_management) {
    auto m = management::management_service::start(**node, *members, *remoting);
    if (!m)
      return fail(m.error().message);
    api = std::move(*m);
    say(fmt::format("management {}", api->port()));
    auto b = bootstrap::bootstrap_handle::start(**node, *members, api->port());
    if (!b)
      return fail(b.error().message);
  }
  // The singleton's manager and proxy, as a service would start them.
  std::optional<singleton::singleton_proxy> proxy;
  if (!singleton_name.empty()) {
    auto manager = singleton::singleton_manager::start(
      **node, *members, *remoting, singleton_name, singleton_instance);
    if (!manager)
      return fail(manager.error().message);
    auto p = singleton::singleton_proxy::start(**node, *members, *remoting,
                                               singleton_name);
    if (!p)
      return fail(p.error().message);
    proxy = *p;
  }
  // The shard region, its coordinator's watch and the client.
  std::optional<sharding::shard_region> region;
  std::optional<sharding_client> shard_client;
  if (!sharding_type.empty()) {
    auto r = sharding::shard_region::start(**node, *members, *remoting,
                                           sharding_type, sharded_entity);
    if (!r)
      return fail(r.error().message);
    region = *r;
    if (auto m = region->coordinator_manager())
      (*node)->system().spawn(coordinator_watch, *m,
                              runtime::to_string(remoting->local_address()));
    if (client_entities > 0)
      shard_client.emplace((*node)->system(), *remoting, *region,
                           client_entities);
  }
  std::optional<proxy_client> client;
  int leaves_seen = 0;
  int client_toggles_seen = 0;
  contacts_file contacts{contacts_path};
  auto subscriber = (*node)->system().spawn(printer);
  members->subscribe(subscriber);
  (*node)->stop_on_shutdown(caf::actor_cast<caf::strong_actor_ptr>(subscriber));
  auto next_report = std::chrono::steady_clock::now()
                     + report_interval.value_or(runtime::timespan{0});
  while (!runtime::stop_requested()) {
    runtime::timespan nap = std::chrono::milliseconds{100};
    contacts.poll(*members);
    if (auto n = leave_signals.load(); n != leaves_seen) {
      leaves_seen = n;
      say("leaving");
      members->leave(remoting->local_address());
    }
    if (auto n = client_signals.load(); n != client_toggles_seen && proxy) {
      client_toggles_seen = n;
      if (client) {
        client->done();
        client.reset();
      } else {
        client.emplace((*node)->system(), *proxy, remoting->local_address());
      }
    }
    if (client) {
      client->send_next();
      nap = std::chrono::milliseconds{10};
    }
    if (shard_client) {
      shard_client->send_batch();
      nap = std::chrono::milliseconds{10};
    }
    if (report_interval) {
      auto now = std::chrono::steady_clock::now();
      if (now >= next_report) {
        say(stats_line(remoting->transport().metrics()));
        next_report += *report_interval;
        if (next_report < now) // overslept (suspended): do not catch up
          next_report = now + *report_interval;
      }
      nap = std::min(nap, std::chrono::duration_cast<runtime::timespan>(
                            next_report - std::chrono::steady_clock::now()));
    }
    runtime::sleep_unless_stopped(nap);
  }
  client.reset();
  shard_client.reset();
  say("stopping");
  // A signal's shutdown (unless the cluster started one: downed, removed,
  // leaving): hand off, leave, hand over, release.
  (*node)->coordinated_shutdown().run(runtime::shutdown_reason::signal);
  auto reason = (*node)->coordinated_shutdown().reason().value_or(
    runtime::shutdown_reason::signal);
  (*node)->shutdown();
  say("stopped");
  return runtime::exit_code(reason);
}
