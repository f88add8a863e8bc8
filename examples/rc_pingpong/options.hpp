// rig_rc_pingpong's command line: ibv_rc_pingpong's options (rdma-core v44.0,
// libibverbs/examples/rc_pingpong.c main and usage) that apply to rig, and rig's own.
//
//   rig_rc_pingpong [options]          server: waits for one client
//   rig_rc_pingpong [options] HOST     client: connects to the server at HOST
//     -p, --port=PORT         TCP port of the exchange (default 18515; above 65535 refused)
//     -s, --size=SIZE         bytes of each message (default 4096)
//     -m, --mtu=SIZE          path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)
//     -r, --rx-depth=DEPTH    receives posted at a time (default 500)
//     -n, --iters=ITERS       ping-pongs (default 1000)
//     -g, --gid-idx=INDEX     the GID index whose GID the record carries (default: none,
//                             the all-zero GID, as ibv_rc_pingpong sends without -g)
//     --cable LOCAL_PORT:REMOTE_HOST:REMOTE_PORT   the port's datagram cable (UDP)
//     --ip ADDR               the port's IPv4 address (default 10.77.0.1)
// Numbers are read as strtoul(3) reads them with base 0 (0x10, 010, 16), as rc_pingpong does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "rig/bnxt/nic.hpp"
#include "rig/bootstrap/stream.hpp"
#include "rig/result.hpp"

namespace rc_pingpong {

struct Cable {
    std::uint16_t local_port = 0;    // UDP port this side's frames leave from and arrive at
    rig::bootstrap::Address remote;  // where they go
    friend bool operator==(const Cable&, const Cable&) = default;
};

struct Options {
    std::uint16_t port = 18515;
    std::uint32_t size = 4096;
    rig::bnxt::Mtu mtu = rig::bnxt::Mtu::Mtu1024;
    std::uint32_t rx_depth = 500;
    std::uint32_t iters = 1000;
    int gid_index = -1;                 // -1: no -g
    std::optional<std::string> server;  // a client's server host; none on a server
    std::optional<Cable> cable;
    std::array<std::uint8_t, 4> ip{10, 77, 0, 1};
};

// Pieces of both programs' command lines (this one's and perftest_options.hpp's). A
// number as strtoul(text, NULL, 0) reads it, but whole ("12x", "-1" and "" are none).
std::optional<std::uint64_t> parse_number(const std::string& text);
// 256..4096; Error "OPTION TEXT: not 256, 512, 1024, 2048 or 4096".
rig::Result<rig::bnxt::Mtu> parse_mtu(const std::string& text, const char* option);
// LOCAL_PORT:REMOTE_HOST:REMOTE_PORT; Error naming the text.
rig::Result<Cable> parse_cable(const std::string& text);
// A dotted IPv4 address; Error naming the text.
rig::Result<std::array<std::uint8_t, 4>> parse_ip(const std::string& text);
// An option's number into `out` where `text` is given (`out` unchanged where it is ""):
// Error "OPTION TEXT: WORDS" where it is no number or lies outside [low, high].
template <class T>
rig::Result<void> take(const std::string& text, const char* option, std::uint64_t low, std::uint64_t high,
                       const std::string& words, T& out) {
    if (text.empty()) return {};
    const auto v = parse_number(text);
    if (!v || *v < low || *v > high) return rig::fail(option, " ", text, ": ", words);
    out = static_cast<T>(*v);
    return {};
}

// The options of argv, or an Error saying which option is wrong and why ("-m 1000: not
// 256, 512, 1024, 2048 or 4096"); "--help" is an Error holding the usage text, with
// `help` set.
rig::Result<Options> parse(int argc, const char* const* argv, bool* help = nullptr);
// The usage text.
std::string usage(const char* argv0);

}  // namespace rc_pingpong
