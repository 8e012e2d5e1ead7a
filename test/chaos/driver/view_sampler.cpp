// The driver's membership sampler (view_sampler.hpp).

#include "view_sampler.hpp"

#include <mutex>

#include <fmt/format.h>

namespace troupe::chaos {

/// A round's samples, filled on the io thread.
struct view_sampler::round_state {
  std::mutex mutex;
  std::vector<view_sample> samples;
  size_t outstanding = 0;
};

view_sampler::view_sampler(const std::filesystem::path& file,
                           std::chrono::milliseconds timeout)
  : file_(file), timeout_(timeout), state_(std::make_shared<round_state>()) {}

view_sampler::~view_sampler() {
  engine_.shutdown();
}

namespace {

// The sample's view or error from the outcome of its GET.
void record(view_sample& s, const std::string& url,
            runtime::expected<runtime::http_response> r) {
  if (!r) {
    s.error = r.error().message;
    return;
  }
  if (r->status != 200) {
    s.error = fmt::format("GET {}: HTTP {}: {}", url, r->status,
                          r->body.substr(0, 200));
    return;
  }
  auto answer = parse_members_answer(r->body);
  if (auto* why = std::get_if<std::string>(&answer))
    s.error
      = fmt::format("GET {}: the answer is not a members view: {}", url, *why);
  else
    s.view = std::get<members_answer>(std::move(answer));
}

} // namespace

uint64_t view_sampler::start_round(const std::vector<view_target>& targets,
                                   bool final) {
  if (out_ != 0 || targets.empty())
    return 0;
  out_ = ++rounds_;
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    state_->samples.clear();
    state_->outstanding = targets.size();
    for (auto& t : targets) {
      view_sample s;
      s.round = out_;
      s.final = final;
      s.node = t.node;
      s.pid = t.pid;
      s.start = t.start;
      state_->samples.push_back(std::move(s));
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    runtime::http_request req;
    req.url = targets[i].management_url + "/cluster/members";
    req.timeout = timeout_;
    auto sent = mono_now_ns();
    {
      std::lock_guard<std::mutex> guard{state_->mutex};
      state_->samples[i].sent_ns = sent;
    }
    engine_.start(req, [state = state_, i, url = req.url](auto r) {
      auto now = mono_now_ns();
      std::lock_guard<std::mutex> guard{state->mutex};
      auto& s = state->samples[i];
      s.mono_ns = now;
      record(s, url, std::move(r));
      --state->outstanding;
    });
  }
  return out_;
}

uint64_t view_sampler::poll() {
  if (out_ == 0)
    return 0;
  std::vector<view_sample> done;
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    if (state_->outstanding > 0)
      return 0;
    done.swap(state_->samples);
  }
  for (auto& s : done)
    file_.append(view_line(s));
  return std::exchange(out_, 0);
}

} // namespace troupe::chaos
