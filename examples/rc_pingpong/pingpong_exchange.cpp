// ibv_rc_pingpong's TCP exchange (pingpong_exchange.hpp).
#include "pingpong_exchange.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "record.hpp"

namespace rc_pingpong::pingpong {
namespace {

constexpr const char* what = "the remote address";
// Offsets of the fields of "%04x:%06x:%06x:%s".
constexpr std::size_t lid_at = 0, qpn_at = 5, psn_at = 12, gid_at = 19, nul_at = 51;

rig::Result<void> expect_done(std::span<const std::byte> got, const std::string& peer) {
    if (std::memcmp(got.data(), done.data(), done.size()) == 0) return {};
    std::string shown;
    for (std::byte b : got) {
        const auto c = std::to_integer<unsigned char>(b);
        shown += c >= 0x20 && c < 0x7f
                     ? std::string(1, static_cast<char>(c))
                     : "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + std::string(1, "0123456789abcdef"[c & 15]);
    }
    return rig::fail(peer, ": sent \"", shown, "\", not \"done\\0\"");
}

}  // namespace

std::array<std::byte, record_bytes> encode(const Dest& dest) {
    if (dest.qpn > 0xffffff || dest.psn > 0xffffff)
        throw std::invalid_argument("rc_pingpong::pingpong::encode: a QPN or PSN above 24 bits");
    char text[record_bytes + 1];  // snprintf's NUL is the record's last byte
    int n = std::snprintf(text, sizeof text, "%04x:%06x:%06x:", dest.lid, dest.qpn, dest.psn);
    for (std::uint8_t b : dest.gid) n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%02x", b);
    std::array<std::byte, record_bytes> out;
    std::memcpy(out.data(), text, record_bytes);
    return out;
}

rig::Result<Dest> decode(std::span<const std::byte> bytes) {
    const Record r(bytes, what);
    if (auto s = r.size(record_bytes); !s) return std::unexpected(std::move(s).error());
    // Byte by byte in order, so the error names the first wrong one.
    std::uint64_t field[3] = {};
    constexpr struct {
        std::size_t at, digits;
        const char* name;
    } fields[] = {{lid_at, 4, "LID"}, {qpn_at, 6, "QPN"}, {psn_at, 6, "PSN"}};
    for (std::size_t i = 0; i < 3; ++i) {
        auto v = r.hex(fields[i].at, fields[i].digits, fields[i].name);
        if (!v) return std::unexpected(std::move(v).error());
        field[i] = *v;
        if (auto c = r.expect(fields[i].at + fields[i].digits, ':'); !c) return std::unexpected(std::move(c).error());
    }
    Dest d{static_cast<std::uint16_t>(field[0]),
           static_cast<std::uint32_t>(field[1]),
           static_cast<std::uint32_t>(field[2]),
           {}};
    for (std::size_t i = 0; i < d.gid.size(); ++i) {
        auto b = r.hex(gid_at + 2 * i, 2, "GID");
        if (!b) return std::unexpected(std::move(b).error());
        d.gid[i] = static_cast<std::uint8_t>(*b);
    }
    if (auto c = r.expect(nul_at, '\0'); !c) return std::unexpected(std::move(c).error());
    return d;
}

rig::Result<Dest> client_exchange(rig::bootstrap::Stream& stream, const Dest& mine, rig::bootstrap::Timeout timeout) {
    if (auto w = stream.write(encode(mine), timeout, "the local address"); !w)
        return std::unexpected(std::move(w).error());
    std::array<std::byte, record_bytes> theirs;
    if (auto r = stream.read(theirs, timeout, what); !r) return std::unexpected(std::move(r).error());
    auto dest = decode(theirs);
    if (!dest) return rig::fail(stream.peer(), ": ", dest.error());
    if (auto w = stream.write(std::as_bytes(std::span(done)), timeout, "\"done\""); !w)
        return std::unexpected(std::move(w).error());
    return dest;
}

rig::Result<Dest> server_exchange(rig::bootstrap::Stream& stream, const Dest& mine,
                                  const std::function<rig::Result<void>(const Dest&)>& connect,
                                  rig::bootstrap::Timeout timeout) {
    std::array<std::byte, record_bytes> theirs;
    if (auto r = stream.read(theirs, timeout, what); !r) return std::unexpected(std::move(r).error());
    auto dest = decode(theirs);
    if (!dest) return rig::fail(stream.peer(), ": ", dest.error());
    if (auto c = connect(*dest); !c) return std::unexpected(std::move(c).error());
    if (auto w = stream.write(encode(mine), timeout, "the local address"); !w)
        return std::unexpected(std::move(w).error());
    std::array<std::byte, done.size()> end;
    if (auto r = stream.read(end, timeout, "\"done\""); !r) return std::unexpected(std::move(r).error());
    if (auto d = expect_done(end, stream.peer()); !d) return std::unexpected(std::move(d).error());
    return dest;
}

}  // namespace rc_pingpong::pingpong
