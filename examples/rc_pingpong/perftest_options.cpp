// rig_perftest's command line (perftest_options.hpp), with CLI11.
#include "perftest_options.hpp"

#include <CLI/CLI.hpp>

namespace rc_pingpong::perftest {
namespace {

constexpr const char* about = "rig's driver on a simulated bnxt NIC speaking perftest's ib_send_bw / ib_read_bw";

struct Texts {
    std::string port, size, iters, mtu, gid_index, cable, ip;
    std::vector<std::string> positional;
};

void declare(CLI::App& app, Texts& t) {
    app.add_option("-p,--port", t.port, "Listen on/connect to port <port> (default 18515)");
    app.add_option("-s,--size", t.size, "Size of message to exchange (default 65536)");
    app.add_option("-n,--iters", t.iters, "Number of exchanges (at least 5, default 1000)");
    app.add_option("-m,--mtu", t.mtu, "MTU size : 256 - 4096 (default 1024)");
    app.add_option("-x,--gid-index", t.gid_index, "Test uses GID with GID index (default 0)");
    app.add_option("--cable", t.cable, "the port's datagram cable: LOCAL_PORT:REMOTE_HOST:REMOTE_PORT (UDP)");
    app.add_option("--ip", t.ip, "the port's IPv4 address (default 10.77.0.1)");
    app.add_option("test", t.positional,
                   "ib_send_bw or ib_read_bw, then the server to connect to (none: be the server)");
}

}  // namespace

std::string usage(const char* argv0) {
    CLI::App app{about, argv0};
    Texts t;
    declare(app, t);
    return app.help();
}

rig::Result<Options> parse(int argc, const char* const* argv, bool* help) {
    if (help) *help = false;
    CLI::App app{about, argc > 0 ? argv[0] : "rig_perftest"};
    Texts t;
    declare(app, t);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        if (help) *help = true;
        return rig::fail(app.help());
    } catch (const CLI::ParseError& e) {
        return rig::fail(e.what());
    }
    Options o;
    if (t.positional.empty() || (t.positional[0] != "ib_send_bw" && t.positional[0] != "ib_read_bw"))
        return rig::fail("the first argument names the test: ib_send_bw or ib_read_bw");
    o.program = t.positional[0] == "ib_send_bw" ? Program::SendBw : Program::ReadBw;
    if (t.positional.size() > 2)
        return rig::fail("one server host at most, not ", std::to_string(t.positional.size() - 1));
    if (t.positional.size() == 2) o.server = t.positional[1];
    if (auto r = take(t.port, "-p", 0, 65535, "not a port", o.port); !r) return std::unexpected(std::move(r).error());
    // perftest_parameters.c: CHECK_VALUE_UNS(size, 1, MAX_SIZE) for RC, MAX_SIZE 2^31.
    if (auto r =
            take(t.size, "-s", 1, std::uint64_t{1} << 31, "Message Size should be between 1 and 2147483648", o.size);
        !r)
        return std::unexpected(std::move(r).error());
    if (auto r = take(t.iters, "-n", 5, 100000000, "Iteration num should be between 5 and 100000000", o.iters); !r)
        return std::unexpected(std::move(r).error());
    if (auto r = take(t.gid_index, "-x", 0, 255, "GID index should be between 0 and 255", o.gid_index); !r)
        return std::unexpected(std::move(r).error());
    if (!t.mtu.empty()) {
        auto m = parse_mtu(t.mtu, "-m");
        if (!m) return std::unexpected(std::move(m).error());
        o.mtu = *m;
    }
    if (!t.cable.empty()) {
        auto c = parse_cable(t.cable);
        if (!c) return std::unexpected(std::move(c).error());
        o.cable = std::move(*c);
    }
    if (!t.ip.empty()) {
        auto ip = parse_ip(t.ip);
        if (!ip) return std::unexpected(std::move(ip).error());
        o.ip = *ip;
    }
    return o;
}

}  // namespace rc_pingpong::perftest
