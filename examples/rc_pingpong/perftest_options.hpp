// rig_perftest's command line: the options of perftest's ib_send_bw and ib_read_bw
// (perftest 4.5-0.17, src/perftest_parameters.c parser and usage) that apply to one RC
// queue pair on rig, and rig's own.
//
//   rig_perftest ib_send_bw|ib_read_bw [options]        server: waits for one client
//   rig_perftest ib_send_bw|ib_read_bw [options] HOST   client: connects to the server at HOST
//     -p, --port=PORT         TCP port of the exchange (default 18515)
//     -s, --size=SIZE         bytes of each message (default 65536), 1..2^31
//     -n, --iters=ITERS       messages (default 1000), 5..100000000 as perftest takes them
//     -m, --mtu=SIZE          path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)
//     -x, --gid-index=INDEX   the GID index whose GID the records carry (default 0, as perftest)
//     --cable LOCAL_PORT:REMOTE_HOST:REMOTE_PORT   the port's datagram cable (UDP)
//     --ip ADDR               the port's IPv4 address (default 10.77.0.1)
// Numbers are read as strtol(3) reads them with base 0, as perftest does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "options.hpp"
#include "perftest_exchange.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/result.hpp"

namespace rc_pingpong::perftest {

struct Options {
    Program program = Program::SendBw;
    std::uint16_t port = default_port;
    std::uint32_t size = 65536;  // DEF_SIZE_BW
    std::uint32_t iters = 1000;  // DEF_ITERS
    rig::bnxt::Mtu mtu = rig::bnxt::Mtu::Mtu1024;
    std::uint32_t gid_index = 0;  // DEF_GID_INDEX
    std::optional<std::string> server;
    std::optional<Cable> cable;
    std::array<std::uint8_t, 4> ip{10, 77, 0, 1};
};

// The options of argv, or an Error saying which is wrong and why, in perftest's words
// where it has them ("Iteration num should be between 5 and 100000000"); "--help" is an
// Error holding the usage text, with `help` set.
rig::Result<Options> parse(int argc, const char* const* argv, bool* help = nullptr);
std::string usage(const char* argv0);

}  // namespace rc_pingpong::perftest
