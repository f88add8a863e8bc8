// The ping-pong of SENDs of rdma-core's ibv_rc_pingpong (v44.0,
// libibverbs/examples/rc_pingpong.c main and parse_single_wc), on rig's driver.
//
// One buffer of `size` bytes serves both ways: every receive is posted into it and every
// send is sent from it, so a pong carries the ping it answers. Before the exchange
// rx_depth receives are posted (post_receives). Then the client sends first; each side
// posts its next send only once its previous send has completed and a receive has
// arrived (pending = RECV | SEND, cleared as they complete), until it has sent and
// received `iters` messages. When the receives outstanding fall to 1 or fewer, they are
// posted again up to rx_depth. A send of at most Limits::max_inline_data bytes is inline
// (IBV_SEND_INLINE, as rc_pingpong uses it where the QP's max_inline_data allows).
//
// The closing lines, printed by the caller (report), are rc_pingpong's, computed as it
// computes them (in float microseconds from gettimeofday):
//   "%lld bytes in %.2f seconds = %.2f Mbit/sec"   (bytes = 2 x size x iters)
//   "%d iters in %.2f seconds = %.2f usec/iter"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/result.hpp"

namespace rc_pingpong {

inline constexpr std::uint64_t recv_wrid = 1;  // PINGPONG_RECV_WRID
inline constexpr std::uint64_t send_wrid = 2;  // PINGPONG_SEND_WRID

enum class Role : std::uint8_t { Server, Client };

struct Loop {
    std::uint32_t size = 4096;
    std::uint32_t iters = 1000;
    std::uint32_t rx_depth = 500;
    Role role = Role::Server;
    std::uint32_t max_inline = 0;  // the NIC's Limits::max_inline_data: sends this short go inline
    // The longest a wait for the next completion may last before the run fails (the peer
    // vanished without the queue pair learning it: a side with no send outstanding).
    std::chrono::milliseconds stall = std::chrono::seconds(120);
};

// Posts `n` receives of the whole buffer; how many were posted (pp_post_recv).
std::uint32_t post_receives(rig::bnxt::Qp& qp, const rig::bnxt::Region& buffer, std::uint32_t size, std::uint32_t n);

// The ping-pong on a connected `qp` whose sends and receives complete on `cq`, with
// loop.rx_depth receives already posted into `buffer`: the microseconds from the first
// send to the last completion. Error in rc_pingpong's words where a completion fails
// ("Failed status TRANSPORT_RETRY_CNT_ERR (10) for wr_id 2": the CQE's status and code),
// a receive or send cannot be posted, or no completion came within loop.stall.
rig::Result<double> ping_pong(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer, const Loop& loop);

// rc_pingpong's two closing lines for `usec` microseconds, each ending in '\n'.
std::string report(std::uint32_t size, std::uint32_t iters, double usec);

}  // namespace rc_pingpong
