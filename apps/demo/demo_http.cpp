#include "demo_http.hpp"

#include <future>
#include <memory>

namespace troupe::demo {

std::vector<runtime::expected<runtime::http_response>>
http_getter::call_all(std::vector<runtime::http_request> requests) {
  using result = runtime::expected<runtime::http_response>;
  std::vector<std::future<result>> futures;
  for (auto& req : requests) {
    auto p = std::make_shared<std::promise<result>>();
    futures.push_back(p->get_future());
    engine_.start(std::move(req),
                  [p](result r) mutable { p->set_value(std::move(r)); });
  }
  std::vector<result> results;
  for (auto& f : futures)
    results.push_back(f.get()); // the engine answers each exactly once
  return results;
}

std::vector<runtime::expected<runtime::http_response>>
http_getter::get_all(const std::vector<std::string>& urls,
                     runtime::timespan timeout) {
  std::vector<runtime::http_request> requests;
  for (auto& url : urls) {
    runtime::http_request req;
    req.url = url;
    req.timeout = timeout;
    requests.push_back(std::move(req));
  }
  return call_all(std::move(requests));
}

runtime::expected<runtime::http_response>
http_getter::get(const std::string& url, runtime::timespan timeout) {
  return std::move(get_all({url}, timeout).front());
}

} // namespace troupe::demo
