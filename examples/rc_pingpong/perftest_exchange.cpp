// perftest's TCP exchange (perftest_exchange.hpp).
#include "perftest_exchange.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "record.hpp"
#include "rig/text.hpp"

namespace rc_pingpong::perftest {
namespace {

constexpr const char* what_record = "the remote QP record";

// Field offsets of KEY_PRINT_FMT_GID: each field is followed by ':'.
struct Field {
    std::size_t at, digits;
    const char* name;
};
constexpr Field head[] = {{0, 4, "LID"},  {5, 4, "out_reads"}, {10, 6, "QPN"},
                          {17, 6, "PSN"}, {24, 8, "rkey"},     {33, 16, "vaddr"}};
constexpr std::size_t gid_at = 50;  // 16 x "xx:" from here
constexpr Field srqn{98, 8, "SRQN"};
constexpr std::size_t nul_at = 107;

template <std::size_t N>
std::array<std::byte, N> big_endian(std::uint64_t v) {
    std::array<std::byte, N> out;
    for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<std::byte>(v >> (8 * (N - 1 - i)));
    return out;
}
template <std::size_t N>
std::uint64_t from_big_endian(const std::array<std::byte, N>& in) {
    std::uint64_t v = 0;
    for (std::byte b : in) v = v << 8 | std::to_integer<std::uint64_t>(b);
    return v;
}

// ipv6_addr_v4mapped of perftest_communication.c: ::ffff:a.b.c.d, or the IPv4-encoded
// multicast ff0e::ffff:a.b.c.d.
bool v4mapped(const rig::bnxt::Gid& g) {
    const bool tail = std::all_of(g.begin() + 2, g.begin() + 10, [](std::uint8_t b) { return b == 0; }) &&
                      g[10] == 0xff && g[11] == 0xff;
    return tail && ((g[0] == 0 && g[1] == 0) || (g[0] == 0xff && g[1] == 0x0e));
}

}  // namespace

std::array<std::byte, record_bytes> encode(const QpRecord& r) {
    if (r.qpn > 0xffffff || r.psn > 0xffffff)
        throw std::invalid_argument("rc_pingpong::perftest::encode: a QPN or PSN above 24 bits");
    char text[record_bytes];
    const auto& g = r.gid;
    const int n = std::snprintf(
        text, sizeof text,
        "%04x:%04x:%06x:%06x:%08x:%016llx:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:"
        "%02x:%02x:%02x:%08x:",
        r.lid, r.out_reads, r.qpn, r.psn, r.rkey, static_cast<unsigned long long>(r.vaddr), g[0], g[1], g[2], g[3],
        g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], r.srqn);
    if (n != static_cast<int>(record_bytes) - 1)
        throw std::logic_error("rc_pingpong::perftest::encode: the record is not 107 characters");
    std::array<std::byte, record_bytes> out;
    std::memcpy(out.data(), text, record_bytes);
    return out;
}

rig::Result<QpRecord> decode_record(std::span<const std::byte> bytes) {
    const Record r(bytes, what_record);
    if (auto s = r.size(record_bytes); !s) return std::unexpected(std::move(s).error());
    std::uint64_t v[std::size(head)] = {};
    for (std::size_t i = 0; i < std::size(head); ++i) {
        auto x = r.hex(head[i].at, head[i].digits, head[i].name);
        if (!x) return std::unexpected(std::move(x).error());
        v[i] = *x;
        if (auto c = r.expect(head[i].at + head[i].digits, ':'); !c) return std::unexpected(std::move(c).error());
    }
    QpRecord q{static_cast<std::uint16_t>(v[0]),
               static_cast<std::uint16_t>(v[1]),
               static_cast<std::uint32_t>(v[2]),
               static_cast<std::uint32_t>(v[3]),
               static_cast<std::uint32_t>(v[4]),
               v[5],
               {},
               0};
    for (std::size_t i = 0; i < q.gid.size(); ++i) {
        auto b = r.hex(gid_at + 3 * i, 2, "GID");
        if (!b) return std::unexpected(std::move(b).error());
        q.gid[i] = static_cast<std::uint8_t>(*b);
        if (auto c = r.expect(gid_at + 3 * i + 2, ':'); !c) return std::unexpected(std::move(c).error());
    }
    auto s = r.hex(srqn.at, srqn.digits, srqn.name);
    if (!s) return std::unexpected(std::move(s).error());
    q.srqn = static_cast<std::uint32_t>(*s);
    if (auto c = r.expect(srqn.at + srqn.digits, ':'); !c) return std::unexpected(std::move(c).error());
    if (auto c = r.expect(nul_at, '\0'); !c) return std::unexpected(std::move(c).error());
    return q;
}

std::array<std::byte, version_bytes> encode_version(std::string_view version) {
    if (version.size() > version_bytes)
        throw std::invalid_argument("rc_pingpong::perftest::encode_version: above 16 bytes");
    std::array<std::byte, version_bytes> out{};  // strncpy pads with NULs
    std::memcpy(out.data(), version.data(), version.size());
    return out;
}

rig::Result<Version> decode_version(std::span<const std::byte> bytes) {
    Version v;
    for (std::byte b : bytes) {
        if (b == std::byte{0}) break;
        v.text += static_cast<char>(b);
    }
    const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.number);
    if (ec != std::errc{} || end == v.text.data())
        return rig::fail("the version \"", v.text, "\" does not start with a number");
    return v;
}

std::array<std::byte, 2> encode_mtu(rig::bnxt::Mtu mtu) {
    return {static_cast<std::byte>('1' + static_cast<unsigned>(mtu)), std::byte{0}};  // IBV_MTU_256 = 1
}

rig::Result<rig::bnxt::Mtu> decode_mtu(std::span<const std::byte> bytes) {
    const auto c = bytes.size() == 2 ? std::to_integer<unsigned char>(bytes[0]) : 0;
    if (c < '1' || c > '5' || bytes[1] != std::byte{0}) {
        std::string shown;
        for (std::byte b : bytes) shown += (shown.empty() ? "" : " ") + rig::text::hex(std::to_integer<unsigned>(b), 2);
        return rig::fail("the MTU (", shown, ") is not an ibv_mtu from \"1\" (256) to \"5\" (4096) with its NUL");
    }
    return static_cast<rig::bnxt::Mtu>(c - '1');
}

// ---- Session ----

rig::Result<void> Session::exchange(std::span<const std::byte> mine, std::span<std::byte> theirs,
                                    std::string_view what) {
    const std::string mine_what = "this side's " + std::string(what), theirs_what = "the peer's " + std::string(what);
    if (side_ == Side::Client) {
        if (auto w = stream_->write(mine, timeout_, mine_what); !w) return w;
        return stream_->read(theirs, timeout_, theirs_what);
    }
    if (auto r = stream_->read(theirs, timeout_, theirs_what); !r) return r;
    return stream_->write(mine, timeout_, mine_what);
}

rig::Result<Version> Session::versions(std::string_view mine) {
    std::array<std::byte, version_bytes> theirs;
    if (auto r = exchange(encode_version(mine), theirs, "version"); !r) return std::unexpected(std::move(r).error());
    auto v = decode_version(theirs);
    if (!v) return rig::fail(stream_->peer(), ": ", v.error());
    if (v->number < oldest_version)
        return rig::fail(stream_->peer(), ": speaks perftest ", v->text,
                         "; perftest is not compatible with versions older than 5.70");
    return v;
}

rig::Result<SysData> Session::sys_data(SysData mine) {
    std::array<std::byte, 4> cycle, line;
    if (auto r = exchange(big_endian<4>(mine.cycle_buffer), cycle, "cycle buffer size"); !r)
        return std::unexpected(std::move(r).error());
    if (auto r = exchange(big_endian<4>(mine.cache_line), line, "cache line size"); !r)
        return std::unexpected(std::move(r).error());
    return SysData{std::max(mine.cycle_buffer, static_cast<std::uint32_t>(from_big_endian(cycle))),
                   std::max(mine.cache_line, static_cast<std::uint32_t>(from_big_endian(line)))};
}

rig::Result<rig::bnxt::Mtu> Session::mtu(rig::bnxt::Mtu mine) {
    std::array<std::byte, 2> theirs;
    if (auto r = exchange(encode_mtu(mine), theirs, "MTU"); !r) return std::unexpected(std::move(r).error());
    auto m = decode_mtu(theirs);
    if (!m) return rig::fail(stream_->peer(), ": ", m.error());
    return std::min(mine, *m);
}

rig::Result<QpRecord> Session::hand_shake(const QpRecord& mine) {
    std::array<std::byte, record_bytes> theirs;
    if (auto r = exchange(encode(mine), theirs, "QP record"); !r) return std::unexpected(std::move(r).error());
    auto q = decode_record(theirs);
    if (!q) return rig::fail(stream_->peer(), ": ", q.error());
    return q;
}

rig::Result<BwReport> Session::bw_reports(const BwReport& mine) {
    const std::uint64_t values[5] = {mine.size, mine.iters, std::bit_cast<std::uint64_t>(mine.bw_peak),
                                     std::bit_cast<std::uint64_t>(mine.bw_avg),
                                     std::bit_cast<std::uint64_t>(mine.msg_rate_avg)};
    static constexpr const char* names[5] = {"report's size", "report's iters", "report's bw_peak", "report's bw_avg",
                                             "report's msgRate_avg"};
    std::uint64_t theirs[5] = {};
    for (int i = 0; i < 5; ++i) {
        std::array<std::byte, 8> in;
        if (auto r = exchange(big_endian<8>(values[i]), in, names[i]); !r) return std::unexpected(std::move(r).error());
        theirs[i] = from_big_endian(in);
    }
    return BwReport{theirs[0], theirs[1], std::bit_cast<double>(theirs[2]), std::bit_cast<double>(theirs[3]),
                    std::bit_cast<double>(theirs[4])};
}

rig::Result<void> Session::close(const QpRecord& mine) {
    if (auto q = hand_shake(mine); !q) return std::unexpected(std::move(q).error());
    // perftest writes its "done" and closes without reading ours: its close may reset the
    // connection before our "done" leaves or its own arrives, as perftest's own write of
    // it may fail (ctx_close_connection reports that and goes on). Only other bytes, or a
    // peer that neither sends nor closes, are wrong.
    (void)stream_->write(std::as_bytes(std::span(done)), timeout_, "\"done\"");
    std::array<std::byte, done.size()> got;
    std::size_t n = 0;
    while (n < got.size()) {
        auto ready = stream_->readable(timeout_);
        if (!ready) return std::unexpected(std::move(ready).error());
        if (!*ready)
            return rig::fail(stream_->peer(), ": neither sent \"done\" nor closed within ",
                             rig::text::duration(timeout_));
        auto r = stream_->read_some(std::span(got).subspan(n), timeout_, "\"done\"");
        if (!r || *r == 0) break;  // reset or closed
        n += *r;
    }
    if (std::memcmp(got.data(), done.data(), n) != 0)
        return rig::fail(stream_->peer(), ": sent other bytes than \"done\\0\" at the end");
    return {};
}

rig::Result<Session::Agreed> Session::setup(Program program, SysData sys, rig::bnxt::Mtu mtu, const MakeRecord& record,
                                            const Connect& connect, const Prepare& prepare) {
    Agreed a;
    auto v = versions();
    if (!v) return std::unexpected(std::move(v).error());
    a.peer = std::move(*v);
    auto s = sys_data(sys);
    if (!s) return std::unexpected(std::move(s).error());
    a.sys = *s;
    auto m = this->mtu(mtu);
    if (!m) return std::unexpected(std::move(m).error());
    a.mtu = *m;
    auto mine = record(a);
    if (!mine) return std::unexpected(std::move(mine).error());
    a.mine = *mine;
    auto remote = hand_shake(a.mine);
    if (!remote) return std::unexpected(std::move(remote).error());
    a.remote = *remote;
    if (v4mapped(a.mine.gid) != v4mapped(a.remote.gid))
        return rig::fail(stream_->peer(), ": its GID ", rig::bnxt::to_string(a.remote.gid),
                         " is not of the IP version of this side's ", rig::bnxt::to_string(a.mine.gid),
                         " (perftest: \"Found Incompatibility issue with GID types\")");
    if (auto c = connect(a); !c) return std::unexpected(std::move(c).error());
    for (int i = 0; i < 2; ++i)
        if (auto q = hand_shake(a.mine); !q) return std::unexpected(std::move(q).error());
    if (program == Program::ReadBw) return a;
    if (prepare)
        if (auto p = prepare(); !p) return std::unexpected(std::move(p).error());
    if (auto q = hand_shake(a.mine); !q) return std::unexpected(std::move(q).error());
    return a;
}

rig::Result<BwReport> Session::finish(Program program, const QpRecord& mine, const BwReport& report) {
    BwReport theirs;
    if (program == Program::ReadBw) {
        if (auto q = hand_shake(mine); !q) return std::unexpected(std::move(q).error());
        auto r = bw_reports(report);
        if (!r) return r;
        theirs = *r;
    }
    if (auto c = close(mine); !c) return std::unexpected(std::move(c).error());
    return theirs;
}

}  // namespace rc_pingpong::perftest
