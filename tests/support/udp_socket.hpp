// A plain UDP socket of a test's own on 127.0.0.1: the far end of a datagram cable. It
// receives what the cable lets out and sends datagrams into it. Not thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rig::test {

class UdpSocket {
public:
    // Bound to an ephemeral port of 127.0.0.1, with a receive buffer of `receive_buffer`
    // bytes where given (net.core.rmem_max caps it).
    explicit UdpSocket(int receive_buffer = 0) : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("test socket");
        if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
        socklen_t n = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
        port_ = ntohs(a.sin_port);
    }
    ~UdpSocket() { close(); }
    UdpSocket(const UdpSocket&) = delete;
    UdpSocket& operator=(const UdpSocket&) = delete;

    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    // Every datagram that arrives until none came for `quiet`.
    std::vector<std::vector<std::byte>> receive_all(std::chrono::milliseconds quiet = std::chrono::milliseconds(200)) {
        std::vector<std::vector<std::byte>> got;
        pollfd p{fd_, POLLIN, 0};
        while (::poll(&p, 1, static_cast<int>(quiet.count())) == 1) {
            std::vector<std::byte> d(9000);
            const ssize_t n = ::recv(fd_, d.data(), d.size(), 0);
            if (n < 0) break;
            d.resize(static_cast<std::size_t>(n));
            got.push_back(std::move(d));
        }
        return got;
    }

    // One datagram to `address` ("A.B.C.D:PORT").
    void send_to(const std::string& address, const std::vector<std::byte>& datagram) {
        const auto colon = address.rfind(':');
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
        ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
        ASSERT_EQ(::sendto(fd_, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
                  static_cast<ssize_t>(datagram.size()));
    }

private:
    int fd_;
    std::uint16_t port_ = 0;
};

}  // namespace rig::test
