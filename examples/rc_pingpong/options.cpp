// rig_rc_pingpong's command line (options.hpp), with CLI11.
#include "options.hpp"

#include <arpa/inet.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>

namespace rc_pingpong {

std::optional<std::uint64_t> parse_number(const std::string& text) {
    if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
    if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
    return v;
}

rig::Result<rig::bnxt::Mtu> parse_mtu(const std::string& text, const char* option) {
    const auto v = parse_number(text);
    for (auto m : {rig::bnxt::Mtu::Mtu256, rig::bnxt::Mtu::Mtu512, rig::bnxt::Mtu::Mtu1024, rig::bnxt::Mtu::Mtu2048,
                   rig::bnxt::Mtu::Mtu4096})
        if (v && *v == rig::bnxt::bytes(m)) return m;
    return rig::fail(option, " ", text, ": not 256, 512, 1024, 2048 or 4096");
}

rig::Result<Cable> parse_cable(const std::string& text) {
    const auto colon = text.find(':');
    const auto local = colon == std::string::npos ? std::nullopt : parse_number(text.substr(0, colon));
    if (!local || *local > 65535) return rig::fail("--cable ", text, ": not LOCAL_PORT:REMOTE_HOST:REMOTE_PORT");
    auto remote = rig::bootstrap::parse_address(text.substr(colon + 1));
    if (!remote || remote->host.empty()) return rig::fail("--cable ", text, ": not LOCAL_PORT:REMOTE_HOST:REMOTE_PORT");
    return Cable{static_cast<std::uint16_t>(*local), std::move(*remote)};
}

rig::Result<std::array<std::uint8_t, 4>> parse_ip(const std::string& text) {
    std::array<std::uint8_t, 4> ip{};
    if (::inet_pton(AF_INET, text.c_str(), ip.data()) != 1) return rig::fail("--ip ", text, ": not an IPv4 address");
    return ip;
}

namespace {

struct Texts {
    std::string port, size, mtu, rx_depth, iters, gid_index, cable, ip;
    std::vector<std::string> positional;
};

void declare(CLI::App& app, Texts& t) {
    app.add_option("-p,--port", t.port, "listen on/connect to port <port> (default 18515)");
    app.add_option("-s,--size", t.size, "size of message to exchange (default 4096)");
    app.add_option("-m,--mtu", t.mtu, "path MTU (default 1024)");
    app.add_option("-r,--rx-depth", t.rx_depth, "number of receives to post at a time (default 500)");
    app.add_option("-n,--iters", t.iters, "number of exchanges (default 1000)");
    app.add_option("-g,--gid-idx", t.gid_index, "local port gid index");
    app.add_option("--cable", t.cable, "the port's datagram cable: LOCAL_PORT:REMOTE_HOST:REMOTE_PORT (UDP)");
    app.add_option("--ip", t.ip, "the port's IPv4 address (default 10.77.0.1)");
    app.add_option("host", t.positional, "the server to connect to (none: be the server)");
}

// The number of `option` from 0 to `max`, as take() reads it.
template <class T>
rig::Result<void> take(const std::string& text, const char* option, std::uint64_t max, T& out) {
    return rc_pingpong::take(text, option, 0, max, "not a number from 0 to " + std::to_string(max), out);
}

}  // namespace

std::string usage(const char* argv0) {
    CLI::App app{"rig's driver on a simulated bnxt NIC speaking ibv_rc_pingpong's protocol", argv0};
    Texts t;
    declare(app, t);
    return app.help();
}

rig::Result<Options> parse(int argc, const char* const* argv, bool* help) {
    if (help) *help = false;
    CLI::App app{"rig's driver on a simulated bnxt NIC speaking ibv_rc_pingpong's protocol",
                 argc > 0 ? argv[0] : "rig_rc_pingpong"};
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
    if (auto r = take(t.port, "-p", 65535, o.port); !r) return std::unexpected(std::move(r).error());
    if (auto r = take(t.size, "-s", 0xffffffff, o.size); !r) return std::unexpected(std::move(r).error());
    if (auto r = take(t.rx_depth, "-r", 0xffffffff, o.rx_depth); !r) return std::unexpected(std::move(r).error());
    if (auto r = take(t.iters, "-n", 0xffffffff, o.iters); !r) return std::unexpected(std::move(r).error());
    if (auto r = take(t.gid_index, "-g", 0x7fffffff, o.gid_index); !r) return std::unexpected(std::move(r).error());
    if (!t.mtu.empty()) {
        auto m = parse_mtu(t.mtu, "-m");
        if (!m) return std::unexpected(std::move(m).error());
        o.mtu = *m;
    }
    if (t.positional.size() > 1) return rig::fail("one server host at most, not ", std::to_string(t.positional.size()));
    if (!t.positional.empty()) o.server = t.positional[0];
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

}  // namespace rc_pingpong
