// TCP streams and listeners with deadlines (stream.hpp).
//
// Every socket is non-blocking from its creation (SOCK_NONBLOCK, SOCK_CLOEXEC); a wait is
// poll(2) for the time left until the operation's deadline, retried on EINTR. Sends use
// MSG_NOSIGNAL, so a peer that went away is an EPIPE Result, not a SIGPIPE. Connected
// sockets set TCP_NODELAY: the exchanges are small lock-step messages, each of which
// should leave at once and in one segment.
#include "rig/bootstrap/stream.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rig/text.hpp"

namespace rig::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

// poll(2) one descriptor for `events` until the deadline: the revents, 0 at the deadline,
// -1 with errno on failure.
int wait_for(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, ms_left(deadline));
        if (n > 0) return p.revents;
        if (n == 0) {
            if (Clock::now() >= deadline) return 0;
            continue;  // woke early by rounding: wait the rest
        }
        if (errno != EINTR) return -1;
    }
}

std::string error_text(int error) { return std::strerror(error); }

// "10.0.0.1:18515", "[fe80::1]:18515"; an IPv4-mapped IPv6 address as the IPv4 it is (a
// dual-stack listener sees IPv4 peers so).
std::string format(const sockaddr_storage& address) {
    char text[INET6_ADDRSTRLEN] = "?";
    if (address.ss_family == AF_INET) {
        sockaddr_in a;
        std::memcpy(&a, &address, sizeof a);
        ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
        return std::string(text) + ":" + std::to_string(ntohs(a.sin_port));
    }
    if (address.ss_family == AF_INET6) {
        sockaddr_in6 a;
        std::memcpy(&a, &address, sizeof a);
        const auto port = std::to_string(ntohs(a.sin6_port));
        if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) {
            ::inet_ntop(AF_INET, &a.sin6_addr.s6_addr[12], text, sizeof text);
            return std::string(text) + ":" + port;
        }
        ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
        return "[" + std::string(text) + "]:" + port;
    }
    return "(an address of family " + std::to_string(address.ss_family) + ")";
}

std::string peer_of(int fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "(unknown peer)";
    return format(address);
}

std::string local_of(int fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "(unknown local address)";
    return format(address);
}

struct AddrInfo {
    addrinfo* list = nullptr;
    ~AddrInfo() {
        if (list) ::freeaddrinfo(list);
    }
};

Result<void> resolve(const Address& address, bool passive, AddrInfo& out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    const std::string port = std::to_string(address.port);
    const int r = ::getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(), port.c_str(), &hints, &out.list);
    if (r != 0) return fail(to_string(address), ": cannot resolve: ", ::gai_strerror(r));
    return {};
}

void set_nodelay(int fd) {
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // an optimisation only
}

}  // namespace

Result<Address> parse_address(std::string_view text, std::string_view default_host) {
    const std::string quoted = "\"" + std::string(text) + "\"";
    std::string_view host = default_host, port = text;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return fail("the address ", quoted, " has no closing bracket");
        host = text.substr(1, close - 1);
        if (close + 1 >= text.size() || text[close + 1] != ':') return fail("the address ", quoted, " has no port");
        port = text.substr(close + 2);
    } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string_view::npos)
            return fail("the address ", quoted, " needs brackets around its IPv6 host: [HOST]:PORT");
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535)
        return fail("the address ", quoted, " has no port number from 0 to 65535");
    return Address{std::string(host), static_cast<std::uint16_t>(value)};
}

std::string to_string(const Address& address) {
    const bool v6 = address.host.find(':') != std::string::npos;
    return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

// ---- Stream ----

Result<Stream> Stream::connect(const Address& to, Timeout timeout) {
    const auto deadline = Clock::now() + timeout;
    AddrInfo resolved;
    if (auto r = resolve(to, false, resolved); !r) return std::unexpected(std::move(r).error());
    std::string last = "no address";
    for (const addrinfo* a = resolved.list; a != nullptr; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last = "socket: " + error_text(errno);
            continue;
        }
        Stream stream(fd, "", "");
        int error = 0;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            error = errno;
            if (error == EINPROGRESS) {
                const int ready = wait_for(fd, POLLOUT, deadline);
                socklen_t length = sizeof error;
                if (ready == 0) error = ETIMEDOUT;
                else if (ready < 0) error = errno;
                else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
            }
        }
        if (error != 0) {
            last = error == ETIMEDOUT ? "no answer within " + text::duration(timeout) : error_text(error);
            continue;
        }
        set_nodelay(fd);
        stream.peer_ = peer_of(fd);
        stream.local_ = local_of(fd);
        return stream;
    }
    return fail(to_string(to), ": cannot connect: ", last);
}

Stream::Stream(Stream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), peer_(std::move(other.peer_)), local_(std::move(other.local_)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        peer_ = std::move(other.peer_);
        local_ = std::move(other.local_);
    }
    return *this;
}

Stream::~Stream() { close(); }

void Stream::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

Result<void> Stream::write(std::span<const std::byte> bytes, Timeout timeout, std::string_view what) {
    if (fd_ < 0) throw std::invalid_argument("rig::bootstrap::Stream::write: the stream is closed");
    const auto deadline = Clock::now() + timeout;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return fail(peer_, ": writing ", what, ": ", error_text(errno));
        const int ready = wait_for(fd_, POLLOUT, deadline);
        if (ready < 0) return fail(peer_, ": writing ", what, ": poll: ", error_text(errno));
        if (ready == 0)
            return fail(peer_, ": only ", std::to_string(done), " of the ", std::to_string(bytes.size()), " bytes of ",
                        what, " were taken within ", text::duration(timeout));
    }
    return {};
}

Result<void> Stream::read(std::span<std::byte> out, Timeout timeout, std::string_view what) {
    if (fd_ < 0) throw std::invalid_argument("rig::bootstrap::Stream::read: the stream is closed");
    const auto deadline = Clock::now() + timeout;
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = ::recv(fd_, out.data() + done, out.size() - done, 0);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0) {
            if (done == 0) return fail(peer_, ": closed the connection before ", what);
            return fail(peer_, ": closed the connection after ", std::to_string(done), " of the ",
                        std::to_string(out.size()), " bytes of ", what);
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return fail(peer_, ": reading ", what, ": ", error_text(errno));
        const int ready = wait_for(fd_, POLLIN, deadline);
        if (ready < 0) return fail(peer_, ": reading ", what, ": poll: ", error_text(errno));
        if (ready == 0) {
            if (done == 0) return fail(peer_, ": ", what, " did not arrive within ", text::duration(timeout));
            return fail(peer_, ": only ", std::to_string(done), " of the ", std::to_string(out.size()), " bytes of ",
                        what, " arrived within ", text::duration(timeout));
        }
    }
    return {};
}

Result<std::size_t> Stream::read_some(std::span<std::byte> out, Timeout timeout, std::string_view what) {
    if (fd_ < 0) throw std::invalid_argument("rig::bootstrap::Stream::read_some: the stream is closed");
    if (out.empty()) return 0;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        const ssize_t n = ::recv(fd_, out.data(), out.size(), 0);
        if (n >= 0) return static_cast<std::size_t>(n);
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return fail(peer_, ": reading ", what, ": ", error_text(errno));
        const int ready = wait_for(fd_, POLLIN, deadline);
        if (ready < 0) return fail(peer_, ": reading ", what, ": poll: ", error_text(errno));
        if (ready == 0) return fail(peer_, ": ", what, " did not arrive within ", text::duration(timeout));
    }
}

Result<bool> Stream::readable(Timeout wait) const {
    if (fd_ < 0) throw std::invalid_argument("rig::bootstrap::Stream::readable: the stream is closed");
    const int ready = wait_for(fd_, POLLIN, Clock::now() + wait);
    if (ready < 0) return fail(peer_, ": poll: ", error_text(errno));
    return ready != 0;
}

// ---- Listener ----

Result<Listener> Listener::listen(const Address& at) {
    AddrInfo resolved;
    if (auto r = resolve(at, true, resolved); !r) return std::unexpected(std::move(r).error());
    // Every local address: the IPv6 wildcard first, dual-stack, so IPv4 peers reach it too.
    std::vector<const addrinfo*> order;
    for (const addrinfo* a = resolved.list; a != nullptr; a = a->ai_next) order.push_back(a);
    std::stable_partition(order.begin(), order.end(), [](const addrinfo* a) { return a->ai_family == AF_INET6; });
    if (!at.host.empty()) order.resize(std::min<std::size_t>(order.size(), 1));
    std::string last = "no address";
    for (const addrinfo* a : order) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last = "socket: " + error_text(errno);
            continue;
        }
        Listener listener(fd, 0, "");
        const int one = 1, zero = 0;
        (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (a->ai_family == AF_INET6 && at.host.empty())
            (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
            last = "bind: " + error_text(errno);
            continue;
        }
        if (::listen(fd, 16) != 0) {
            last = "listen: " + error_text(errno);
            continue;
        }
        sockaddr_storage bound{};
        socklen_t length = sizeof bound;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
            last = "getsockname: " + error_text(errno);
            continue;
        }
        listener.address_ = format(bound);
        listener.port_ =
            static_cast<std::uint16_t>(std::stoul(listener.address_.substr(listener.address_.rfind(':') + 1)));
        return listener;
    }
    return fail(to_string(at), ": cannot listen: ", last);
}

Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_), address_(std::move(other.address_)) {}

Listener& Listener::operator=(Listener&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        port_ = other.port_;
        address_ = std::move(other.address_);
    }
    return *this;
}

Listener::~Listener() {
    if (fd_ >= 0) ::close(fd_);
}

Result<Stream> Listener::accept(Timeout timeout) {
    if (fd_ < 0) throw std::invalid_argument("rig::bootstrap::Listener::accept: the listener was moved from");
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            set_nodelay(fd);
            return Stream(fd, peer_of(fd), local_of(fd));
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return fail(address_, ": accept: ", error_text(errno));
        const int ready = wait_for(fd_, POLLIN, deadline);
        if (ready < 0) return fail(address_, ": accept: poll: ", error_text(errno));
        if (ready == 0) return fail(address_, ": no peer connected within ", text::duration(timeout));
    }
}

}  // namespace rig::bootstrap
