// rig/bootstrap/stream.hpp: a TCP connection between two processes, for connection setup
// (docs/design.md, "connection setup"): one side listens on an address, the other connects.
//
// Every operation that waits takes a timeout and waits with poll(2) against a deadline
// computed once from std::chrono::steady_clock; nothing sleeps. A read or write of n bytes
// must finish within its timeout as a whole, so a peer that sends one byte an hour does not
// hold a reader forever. Errors are Results whose message starts with the peer's address
// ("127.0.0.1:18515", "[::1]:18515") and says what happened, in bytes: "closed the
// connection after 3 of the 52 bytes of the remote address". Descriptors are owned: a
// Stream or Listener closes its socket when destroyed, on every path.
//
// Nothing here knows about RDMA: the framed messages of rig's own protocol (peer.hpp) and
// the fixed-size text records of rdma-core's and perftest's tools both travel on a Stream.
//
// Thread safety: one thread at a time per object.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rig/result.hpp"

namespace rig::bootstrap {

using Timeout = std::chrono::milliseconds;

// A host (a name, an IPv4 address or an IPv6 address without brackets; empty: every local
// address, for listening) and a TCP port.
struct Address {
    std::string host;
    std::uint16_t port = 0;
    friend bool operator==(const Address&, const Address&) = default;
};

// "HOST:PORT", "[IPV6]:PORT", or "PORT" alone, whose host is `default_host`. Error naming
// the text where the port is missing, not a number or above 65535, a bracket is unclosed,
// or an IPv6 address is not in brackets.
Result<Address> parse_address(std::string_view text, std::string_view default_host = {});
// "10.0.0.1:18515", "[::1]:18515", ":18515" for every local address.
std::string to_string(const Address& address);

class Stream {
public:
    // Connects to the first of `to`'s resolved addresses that accepts within the timeout
    // (IPv4 and IPv6 alike). Error naming host and port where the name does not resolve or
    // no address accepts (the last address's reason: "Connection refused", a timeout).
    static Result<Stream> connect(const Address& to, Timeout timeout);

    Stream(Stream&& other) noexcept;
    Stream& operator=(Stream&& other) noexcept;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();

    // The other end, "127.0.0.1:40312" or "[::1]:40312": every error message starts with it.
    const std::string& peer() const { return peer_; }
    // This end, in the same form: the local address and port the connection uses.
    const std::string& local() const { return local_; }

    // Writes all of `bytes`, `what` naming them for errors ("the local address"). The bytes
    // leave in one send(2) where the socket buffer takes them: the tools of rdma-core and
    // perftest read each message with one read(2). Error where the peer reset or closed
    // the connection, or the bytes were not all taken within the timeout.
    Result<void> write(std::span<const std::byte> bytes, Timeout timeout, std::string_view what);
    // Reads exactly out.size() bytes. Error where the peer closes first or resets the
    // connection (saying how many of the bytes arrived), or they do not all arrive within
    // the timeout.
    Result<void> read(std::span<std::byte> out, Timeout timeout, std::string_view what);
    // Reads what has arrived, at least one byte and at most out.size(), waiting up to the
    // timeout for the first; 0 where the peer closed the connection. Error on a reset or
    // where nothing arrives within the timeout.
    Result<std::size_t> read_some(std::span<std::byte> out, Timeout timeout, std::string_view what);
    // Whether a byte (or the peer's close) arrives within `wait`, without taking it.
    // Error only where poll(2) fails.
    Result<bool> readable(Timeout wait) const;

    // Closes the connection now (the destructor does it otherwise).
    void close();
    bool closed() const { return fd_ < 0; }

private:
    friend class Listener;
    Stream(int fd, std::string peer, std::string local) : fd_(fd), peer_(std::move(peer)), local_(std::move(local)) {}
    int fd_ = -1;
    std::string peer_, local_;
};

class Listener {
public:
    // Listens on `at` (an empty host: every local address, IPv6 and IPv4 where the system
    // has both; port 0: one the system chooses, see port()). SO_REUSEADDR is set, as
    // rdma-core's and perftest's servers set it. Error naming the address where it does
    // not resolve, or the bind or listen fails ("Address already in use").
    static Result<Listener> listen(const Address& at);

    Listener(Listener&& other) noexcept;
    Listener& operator=(Listener&& other) noexcept;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    ~Listener();

    std::uint16_t port() const { return port_; }
    // Where it listens, "127.0.0.1:18515" or "[::]:18515", for messages.
    const std::string& address() const { return address_; }

    // The next peer that connects. Error naming the listening address where none connects
    // within the timeout.
    Result<Stream> accept(Timeout timeout);

private:
    Listener(int fd, std::uint16_t port, std::string address) : fd_(fd), port_(port), address_(std::move(address)) {}
    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::string address_;
};

}  // namespace rig::bootstrap
