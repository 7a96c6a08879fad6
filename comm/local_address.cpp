// local_address_toward: getaddrinfo, then getsockname of a connected UDP socket.
#include "comm/local_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include "core/error.h"

namespace zt::comm {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { ::freeaddrinfo(info); }
};

// A port is needed to connect a UDP socket; nothing is sent to it.
constexpr const char* kAnyPort = "9";

}  // namespace

std::string local_address_toward(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), kAnyPort, &hints, &found); rc != 0) {
    throw CommError("cannot resolve '" + host + "': " + ::gai_strerror(rc));
  }
  const std::unique_ptr<addrinfo, AddrInfoDeleter> results(found);
  std::string last_error = "no address";
  for (const addrinfo* a = results.get(); a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = std::generic_category().message(errno);
      continue;
    }
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    const bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
    if (!ok) last_error = std::generic_category().message(errno);
    ::close(fd);
    if (!ok) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        local.ss_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
    if (::inet_ntop(local.ss_family, raw, text, sizeof text) != nullptr) return text;
    last_error = std::generic_category().message(errno);
  }
  throw CommError("no route from this machine to '" + host + "': " + last_error);
}

}  // namespace zt::comm
