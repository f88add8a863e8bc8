// perftest's data phases on rig's driver (perftest_run.hpp).
#include "perftest_run.hpp"

#include <array>
#include <cstdio>

namespace rc_pingpong::perftest {
namespace {

constexpr const char* result_line =
    "---------------------------------------------------------------------------------------\n";

double now_usec() {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

// Waits for the next completions; Error where none came within the stall or one failed.
rig::Result<std::size_t> next(rig::bnxt::Cq& cq, std::span<rig::bnxt::Completion> out, const Transfer& t,
                              const char* side, std::uint32_t completed) {
    auto n = cq.wait(out, t.stall);
    if (!n) return rig::fail("Poll CQ failed: ", n.error());
    if (*n == 0)
        return rig::fail("no completion at ", side, " in ", std::to_string(t.stall.count()), " ms (",
                         std::to_string(completed), " of ", std::to_string(t.iters), " done)");
    for (std::size_t i = 0; i < *n; ++i)
        if (!out[i].ok())
            return rig::fail("Completion with error at ", side, ": Failed status ", rig::bnxt::to_string(out[i].status),
                             " (", std::to_string(out[i].code), ") for wr_id ", std::to_string(out[i].id));
    return *n;
}

}  // namespace

rig::Result<double> send_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer, const Transfer& t) {
    std::array<rig::bnxt::Completion, 64> wc;
    std::uint32_t posted = 0, completed = 0;
    const double start = now_usec();
    while (completed < t.iters) {
        while (posted < t.iters && posted - completed < t.depth) {
            if (!qp.post(rig::bnxt::Send{.region = &buffer, .bytes = t.size, .id = posted}))
                return rig::fail("Couldn't post send: scnt=", std::to_string(posted));
            ++posted;
        }
        auto n = next(cq, wc, t, "client", completed);
        if (!n) return std::unexpected(std::move(n).error());
        completed += static_cast<std::uint32_t>(*n);
    }
    return now_usec() - start;
}

bool post_receives(rig::bnxt::Qp& qp, const rig::bnxt::Region& buffer, const Transfer& t, std::uint32_t& posted) {
    posted = 0;
    for (const std::uint32_t n = std::min(rx_depth, t.iters); posted < n; ++posted)
        if (!qp.post(rig::bnxt::Recv{.region = &buffer, .bytes = t.size, .id = posted})) return false;
    return true;
}

rig::Result<double> receive_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer,
                                const Transfer& t, std::uint32_t posted) {
    std::array<rig::bnxt::Completion, 64> wc;
    std::uint32_t completed = 0;
    double start = 0;
    while (completed < t.iters) {
        auto n = next(cq, wc, t, "server", completed);
        if (!n) return std::unexpected(std::move(n).error());
        if (completed == 0) start = now_usec();
        completed += static_cast<std::uint32_t>(*n);
        for (std::size_t i = 0; i < *n && posted < t.iters; ++i, ++posted)
            if (!qp.post(rig::bnxt::Recv{.region = &buffer, .bytes = t.size, .id = posted}))
                return rig::fail("Couldn't post recv: rcnt=", std::to_string(completed));
    }
    return now_usec() - start;
}

rig::Result<double> read_all(rig::bnxt::Qp& qp, rig::bnxt::Cq& cq, const rig::bnxt::Region& buffer,
                             rig::bnxt::Remote remote, const Transfer& t) {
    std::array<rig::bnxt::Completion, 64> wc;
    std::uint32_t posted = 0, completed = 0;
    const double start = now_usec();
    while (completed < t.iters) {
        while (posted < t.iters && posted - completed < t.depth) {
            if (!qp.post(rig::bnxt::Read{.region = &buffer, .bytes = t.size, .remote = remote, .id = posted}))
                return rig::fail("Couldn't post send: scnt=", std::to_string(posted));
            ++posted;
        }
        auto n = next(cq, wc, t, "client", completed);
        if (!n) return std::unexpected(std::move(n).error());
        completed += static_cast<std::uint32_t>(*n);
    }
    return now_usec() - start;
}

BwReport report(const Transfer& t, double usec) {
    BwReport r;
    r.size = t.size;
    r.iters = t.iters;
    const double seconds = usec / 1e6;
    r.bw_avg = seconds > 0 ? static_cast<double>(t.size) * t.iters / seconds / 1048576.0 : 0;
    r.bw_peak = r.bw_avg;
    r.msg_rate_avg = usec > 0 ? t.iters / usec : 0;
    return r;
}

std::string address_lines(const char* side, Program program, const QpRecord& record) {
    // perftest_communication.c ctx_print_pingpong_data: BASIC_ADDR_FMT, READ_FMT for READ,
    // RDMA_FMT for READ and WRITE, then PERF_GID_FMT of the GID's bytes in decimal.
    char text[512];
    int n = std::snprintf(text, sizeof text, " %s address: LID %#04x QPN %#06x PSN %#06x", side, record.lid, record.qpn,
                          record.psn);
    if (program == Program::ReadBw)
        n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), " OUT %#04x RKey %#08x VAddr %#016llx",
                           record.out_reads, record.rkey, static_cast<unsigned long long>(record.vaddr));
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "\n GID: ");
    for (std::size_t i = 0; i < record.gid.size(); ++i)
        n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n),
                           i + 1 < record.gid.size() ? "%02d:" : "%02d\n", record.gid[i]);
    return text;
}

std::string result_lines(const BwReport& r) {
    char row[256];
    std::snprintf(row, sizeof row, " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n",
                  static_cast<unsigned long>(r.size), static_cast<unsigned long>(r.iters), r.bw_peak, r.bw_avg,
                  r.msg_rate_avg);
    return std::string(result_line) +
           " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n" + row + result_line;
}

}  // namespace rc_pingpong::perftest
