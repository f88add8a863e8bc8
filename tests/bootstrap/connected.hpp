// Two ends of one TCP connection on 127.0.0.1, for the bootstrap tests.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "rig/bootstrap/stream.hpp"

namespace rig::test {

struct Connected {
    bootstrap::Stream client, server;  // client connected to server's listener
    std::uint16_t port = 0;            // the listener's
};

inline Connected connected(const std::string& host = "127.0.0.1") {
    auto listener = bootstrap::Listener::listen({host, 0});
    if (!listener) throw std::runtime_error(listener.error());
    auto client = bootstrap::Stream::connect({host, listener->port()}, std::chrono::seconds(5));
    if (!client) throw std::runtime_error(client.error());
    auto server = listener->accept(std::chrono::seconds(5));
    if (!server) throw std::runtime_error(server.error());
    return {std::move(*client), std::move(*server), listener->port()};
}

inline std::span<const std::byte> bytes(std::string_view text) { return std::as_bytes(std::span(text)); }
inline std::string text_of(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// Writes `text` whole on `stream` or fails the test.
inline void put(bootstrap::Stream& stream, std::string_view text) {
    auto r = stream.write(bytes(text), std::chrono::seconds(5), "the test's bytes");
    ASSERT_TRUE(r) << r.error();
}

}  // namespace rig::test
