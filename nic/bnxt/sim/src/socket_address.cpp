// UDP endpoints and their text (socket_address.hpp), through getaddrinfo with
// AI_NUMERICHOST | AI_NUMERICSERV (no name is resolved) and getnameinfo with NI_NUMERICHOST.
#include "socket_address.hpp"

#include <netdb.h>

#include <charconv>
#include <cstring>

namespace rig::bnxt::sim {

namespace {

rig::Result<SocketAddress> not_an_address(std::string_view text) {
    return rig::fail("'", text, "': not an IPv4 or IPv6 address and port (127.0.0.1:4791, [::1]:4791)");
}

}  // namespace

std::uint16_t SocketAddress::port() const {
    if (storage.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
    return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
}

bool SocketAddress::unspecified() const {
    if (storage.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(storage).sin_addr.s_addr == INADDR_ANY;
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr;
    return IN6_IS_ADDR_UNSPECIFIED(&a);
}

rig::Result<SocketAddress> parse_socket_address(std::string_view text) {
    std::string_view host, port;
    if (text.starts_with('[')) {
        const auto close = text.find("]:");
        if (close == std::string_view::npos) return not_an_address(text);
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string_view::npos) return not_an_address(text);
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return not_an_address(text);  // IPv6 without brackets
    }
    unsigned number = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (host.empty() || port.empty() || error != std::errc() || end != port.data() + port.size() || number > 65535)
        return not_an_address(text);
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_family = text.starts_with('[') ? AF_INET6 : AF_INET;
    addrinfo* found = nullptr;
    const std::string host_text(host), port_text(port);
    if (::getaddrinfo(host_text.c_str(), port_text.c_str(), &hints, &found) != 0 || found == nullptr)
        return not_an_address(text);
    SocketAddress a;
    std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
    a.length = found->ai_addrlen;
    ::freeaddrinfo(found);
    return a;
}

std::string to_string(const SocketAddress& address) {
    char host[NI_MAXHOST] = {};
    if (::getnameinfo(address.sockaddr(), address.length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
        return "(no address)";
    const std::string port = std::to_string(address.port());
    return address.storage.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

bool same_address(const sockaddr_storage& source, socklen_t length, const SocketAddress& address) {
    if (length < sizeof(sa_family_t) || source.ss_family != address.storage.ss_family) return false;
    if (source.ss_family == AF_INET) {
        const auto& s = reinterpret_cast<const sockaddr_in&>(source);
        const auto& a = reinterpret_cast<const sockaddr_in&>(address.storage);
        return length >= sizeof(sockaddr_in) && s.sin_port == a.sin_port && s.sin_addr.s_addr == a.sin_addr.s_addr;
    }
    const auto& s = reinterpret_cast<const sockaddr_in6&>(source);
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address.storage);
    return length >= sizeof(sockaddr_in6) && s.sin6_port == a.sin6_port && s.sin6_scope_id == a.sin6_scope_id &&
           std::memcmp(&s.sin6_addr, &a.sin6_addr, sizeof s.sin6_addr) == 0;
}

}  // namespace rig::bnxt::sim
