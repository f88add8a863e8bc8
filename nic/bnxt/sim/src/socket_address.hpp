// socket_address.hpp: a UDP endpoint of a DatagramCable (datagram.hpp) as the socket calls
// take it, and its text: "192.0.2.1:4791" or "[2001:db8::1]:4791" (RFC 3986 section 3.2.2
// brackets an IPv6 literal; a zone follows its '%', as in "[fe80::1%eth0]:4791"). Numeric
// addresses only: nothing is looked up. Private to rig_bnxt_sim.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "rig/result.hpp"

namespace rig::bnxt::sim {

struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;

    ::sockaddr* sockaddr() { return reinterpret_cast<::sockaddr*>(&storage); }
    const ::sockaddr* sockaddr() const { return reinterpret_cast<const ::sockaddr*>(&storage); }
    std::uint16_t port() const;
    bool unspecified() const;  // 0.0.0.0 or ::
};

// Error: "'TEXT': not an IPv4 or IPv6 address and port (...)", naming the text.
rig::Result<SocketAddress> parse_socket_address(std::string_view text);
std::string to_string(const SocketAddress& address);
// Whether a source a socket call filled in (`length` bytes of `source`) is `address`:
// family, port and address (and an IPv6 zone) alike.
bool same_address(const sockaddr_storage& source, socklen_t length, const SocketAddress& address);

}  // namespace rig::bnxt::sim
