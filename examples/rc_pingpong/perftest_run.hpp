// The data phases of perftest's ib_send_bw and ib_read_bw (perftest 4.5-0.17,
// src/perftest_resources.c run_iter_bw, run_iter_bw_server; send_bw.c, read_bw.c) on
// rig's driver, one RC queue pair, and the lines perftest prints about them.
//
//   ib_send_bw client: `iters` SENDs of `size` bytes from the buffer's start, at most
//     `depth` outstanding (tx_depth).
//   ib_send_bw server: with min(rx_depth, iters) receives posted before the last
//     synchronisation, takes `iters` receives, posting one more for each that completes
//     while fewer than `iters` were posted.
//   ib_read_bw client: `iters` RDMA READs of `size` bytes from the peer's vaddr and rkey
//     into the buffer's start, at most `depth` outstanding (the queue pair's
//     max_rd_atomic bounds how many are on the wire).
//   ib_read_bw server: nothing; the client reads its buffer.
// Every work request is signalled (perftest signals every cq_mod-th; the wire is the
// same). Each returns the microseconds from its first post (the server: its first
// completion) to its last completion.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "perftest_exchange.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/result.hpp"

namespace rc_pingpong::perftest {

inline constexpr std::uint32_t tx_depth = 128;  // DEF_TX_BW
inline constexpr std::uint32_t rx_depth = 512;  // DEF_RX_SEND

struct Transfer {
    std::uint32_t size = 65536;
    std::uint32_t iters = 1000;
    std::uint32_t depth = tx_depth;
    // The longest a wait for the next completion may last before the run fails.
    std::chrono::milliseconds stall = std::chrono::seconds(120);
};

// Error in perftest's words where a completion fails ("Completion with error at client:
// Failed status TRANSPORT_RETRY_CNT_ERR (10) for wr_id 5"), a post is refused, or no
// completion came within transfer.stall.
rig::Result<double> send_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer, const Transfer& t);
// Posts the receives ib_send_bw's server posts before the data (ctx_set_recv_wqes): how
// many, min(rx_depth, iters); false if the queue refused one.
bool post_receives(rig::bnxt::Qp& qp, const rig::bnxt::Region& buffer, const Transfer& t, std::uint32_t& posted);
rig::Result<double> receive_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer,
                                const Transfer& t, std::uint32_t posted);
rig::Result<double> read_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer,
                             rig::bnxt::Remote remote, const Transfer& t);

// The report of a run of `usec` microseconds: perftest's MB/sec are 2^20 bytes a second;
// rig measures the run as a whole, so the peak is the average.
BwReport report(const Transfer& t, double usec);
// ctx_print_pingpong_data's line for `side` ("local", "remote") of `program`, with the
// GID line (perftest prints it where a GID index is set), each ending in '\n'.
std::string address_lines(const char* side, Program program, const QpRecord& record);
// The result table: RESULT_LINE, RESULT_FMT, the REPORT_FMT row of `r`, RESULT_LINE.
std::string result_lines(const BwReport& r);

}  // namespace rc_pingpong::perftest
