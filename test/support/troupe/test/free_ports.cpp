#include "troupe/test/free_ports.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace troupe::test {

std::vector<uint16_t> free_ports(size_t n) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  auto close_all = [&] {
    for (int fd : fds)
      ::close(fd);
  };
  for (size_t i = 0; i < n; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      auto why = std::strerror(errno);
      close_all();
      throw std::runtime_error(fmt::format("free_ports: socket: {}", why));
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      auto why = std::strerror(errno);
      close_all();
      throw std::runtime_error(
        fmt::format("free_ports: bind 127.0.0.1:0: {}", why));
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  close_all();
  return ports;
}

} // namespace troupe::test
