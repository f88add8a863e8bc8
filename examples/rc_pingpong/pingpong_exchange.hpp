// The TCP exchange of rdma-core's ibv_rc_pingpong (rdma-core v44.0, the version Debian 12
// ships; unchanged on its master since 2019): libibverbs/examples/rc_pingpong.c
// pp_client_exch_dest and pp_server_exch_dest, pingpong.c gid_to_wire_gid.
//
// The record (struct pingpong_dest as text): sprintf "%04x:%06x:%06x:%s" of LID, QPN, PSN
// and the GID as 32 lower-case hex digits, written with its NUL: sizeof
// "0000:000000:000000:00000000000000000000000000000000" = 52 bytes. gid_to_wire_gid prints
// each 32-bit word of the raw GID through htobe32 and "%08x", which on either byte order
// spells the 16 bytes in wire order: ::ffff:10.77.0.1 is "00000000000000000000ffff0a4d0001".
// A port without -g sends the all-zero GID, and its peer then connects without a GRH
// (pp_connect_ctx: is_global only where the GID's interface id is nonzero).
//
// The order (port 18515 unless -p):
//   client: connect; write its record; read the server's (one read(2) of 52 bytes);
//           write "done\0" (5 bytes); close; then it moves its QP to RTR and RTS.
//   server: accept one client; read its record (one read(2) that must return 52 bytes);
//           move its QP to RTR and RTS (on rxe: the ARP for the peer happens here); write
//           its record; read once, which must return exactly 5 bytes; close.
// Both read each message with one read(2), so each is written in one piece here.
// Neither checks what it parses: sscanf "%x:%x:%x:%s" takes what it finds, and the
// server does not look at the 5 bytes. This side checks every byte of what it reads.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <span>

#include "rig/bnxt/gid.hpp"
#include "rig/bootstrap/stream.hpp"
#include "rig/result.hpp"

namespace rc_pingpong::pingpong {

inline constexpr std::size_t record_bytes = 52;
inline constexpr std::array<char, 5> done = {'d', 'o', 'n', 'e', '\0'};

// struct pingpong_dest of rc_pingpong.c.
struct Dest {
    std::uint16_t lid = 0;  // 0 on RoCE
    std::uint32_t qpn = 0;  // 24 bits
    std::uint32_t psn = 0;  // 24 bits
    rig::bnxt::Gid gid{};   // wire order; all zero without -g
    friend bool operator==(const Dest&, const Dest&) = default;
};

// The 52 bytes of `dest`. Throws std::invalid_argument if the QPN or PSN is above 24 bits.
std::array<std::byte, record_bytes> encode(const Dest& dest);
// The Dest in `record`. Error naming the byte and field where it is not 52 bytes, a field
// is not hex digits of its width, a ':' is missing or the NUL does not end it.
rig::Result<Dest> decode(std::span<const std::byte> record);

// The client's side of the exchange on a connected stream: the server's Dest. Error
// naming the peer where a read or write fails (closed, reset, timed out) or its record or
// "done" is malformed. `timeout` bounds each read and write.
rig::Result<Dest> client_exchange(rig::bootstrap::Stream& stream, const Dest& mine, rig::bootstrap::Timeout timeout);

// The server's side: reads the client's Dest, calls `connect` with it (RTR, RTS) before it
// writes its own record, then reads the client's "done". Error as client_exchange, or
// connect's Error (after which nothing more is written; the client sees the close).
rig::Result<Dest> server_exchange(rig::bootstrap::Stream& stream, const Dest& mine,
                                  const std::function<rig::Result<void>(const Dest&)>& connect,
                                  rig::bootstrap::Timeout timeout);

}  // namespace rc_pingpong::pingpong
