// The TCP exchange of perftest's ib_send_bw and ib_read_bw over RC without rdma_cm
// (perftest 4.5-0.17, the version Debian 12 ships: src/perftest_communication.c,
// perftest_communication.h, send_bw.c, read_bw.c, perftest_parameters.c).
//
// Every exchange is lock-step (ctx_xchg_data_ethernet, ctx_hand_shake): the client writes
// its message, then reads the server's of the same size; the server reads, then writes.
// Each message is read with one read(2) that must return all of it (ethernet_read_data,
// ethernet_read_keys), so each is written here in one piece. The messages, in order:
//   1. version: 16 bytes, strncpy of the package version ("6.06", NUL-padded; AC_INIT of
//      4.5-0.17's configure.ac). A peer below 5.70 is refused (check_version_compatibility),
//      which also makes the 5.1, 5.31 and 5.32 conditions below always true.
//   2. cycle buffer: 4 bytes, big-endian (hton_int; sysconf(_SC_PAGESIZE), 4096); both
//      take the larger (check_sys_data).
//   3. cache line: 4 bytes, big-endian (64); both take the larger.
//   4. MTU: 2 bytes, sprintf "%d" of the ibv_mtu enumerator and its NUL ("3" = 1024);
//      both take the smaller where the peer's is a valid enumerator 1..5 (check_mtu).
//   5. QP records (ethernet_write_keys, 108 bytes on RoCE, whose gid_index is never -1):
//      sprintf KEY_PRINT_FMT_GID "%04x:%04x:%06x:%06x:%08x:%016llx:" + 16 x "%02x" joined
//      by ':' + ":%08x:" of LID, out_reads, QPN, PSN, rkey, vaddr, the GID's bytes in
//      wire order, SRQN, and the NUL. The same record is exchanged again at each of
//      ctx_hand_shake's synchronisation points, as below.
//   ib_send_bw (send_bw.c main, RUN_REGULAR, not duplex):
//      record (QP data); both connect (RTR, RTS); record; record (printed as "remote");
//      the client prepares its sends, the server posts its receives (ctx_set_recv_wqes);
//      record; the client sends its iterations while the server waits for that many
//      receive completions (run_iter_bw_server); then close.
//   ib_read_bw (read_bw.c main, RUN_REGULAR, not duplex):
//      record (QP data); both connect; record (printed as "remote"); record ("an
//      additional handshake ... after moving qp to RTR"); the client reads its iterations
//      from the server's vaddr and rkey while the server waits in the next record; record;
//      the bandwidth report, client to server (xchg_bw_reports, which the server prints);
//      then close.
//   close (ctx_close_connection): one more record, then each side writes "done\0" (5
//      bytes) and closes the socket. Neither reads the other's "done".
//   The bandwidth report (xchg_bw_reports): five more lock-step messages of 8 bytes each,
//      big-endian: size (unsigned long), iters (uint64_t for peers >= 5.33), then the
//      doubles bw_peak, bw_avg, msgRate_avg byte-swapped from the host's (hton_double),
//      i.e. big-endian IEEE 754. With --report-per-port four more doubles follow (not here).
// The QP attributes the records feed (perftest_resources.c ctx_modify_qp_to_rtr / _rts):
// max_dest_rd_atomic = its own out_reads, max_rd_atomic = the peer's out_reads; out_reads
// is 1 for ib_send_bw and the device's max_qp_rd_atom for ib_read_bw (ctx_set_out_reads);
// min_rnr_timer 12, timeout 14, retry_cnt 7, rnr_retry 7, GRH hop limit 0xFF. Both GIDs
// must be IPv4-mapped or neither (ctx_check_gid_compatibility). vaddr is where the peer's
// reads start: buf + num_of_qps x BUFF_SIZE(size, cycle_buffer), the second half of a
// buffer of max(size, cycle buffer) bytes per QP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "rig/bnxt/gid.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bootstrap/stream.hpp"
#include "rig/result.hpp"

namespace rc_pingpong::perftest {

inline constexpr std::uint16_t default_port = 18515;  // DEF_PORT
inline constexpr std::size_t version_bytes = 16;      // MAX_VERSION
inline constexpr std::size_t record_bytes = 108;      // KEY_MSG_SIZE_GID
inline constexpr const char* our_version = "6.06";    // the version whose exchange this speaks
inline constexpr double oldest_version = 5.70;        // check_version_compatibility
inline constexpr std::array<char, 5> done = {'d', 'o', 'n', 'e', '\0'};

enum class Side { Client, Server };     // the client has a server name on its command line
enum class Program { SendBw, ReadBw };  // ib_send_bw, ib_read_bw

// struct pingpong_dest as ethernet_write_keys prints it.
struct QpRecord {
    std::uint16_t lid = 0;
    std::uint16_t out_reads = 1;
    std::uint32_t qpn = 0;  // 24 bits
    std::uint32_t psn = 0;  // 24 bits
    std::uint32_t rkey = 0;
    std::uint64_t vaddr = 0;
    rig::bnxt::Gid gid{};
    std::uint32_t srqn = 0;
    friend bool operator==(const QpRecord&, const QpRecord&) = default;
};

// What check_sys_data exchanges.
struct SysData {
    std::uint32_t cycle_buffer = 4096;  // bytes
    std::uint32_t cache_line = 64;      // bytes
    friend bool operator==(const SysData&, const SysData&) = default;
};

// struct bw_report_data's exchanged fields.
struct BwReport {
    std::uint64_t size = 0;  // bytes per message
    std::uint64_t iters = 0;
    double bw_peak = 0, bw_avg = 0, msg_rate_avg = 0;
    friend bool operator==(const BwReport&, const BwReport&) = default;
};

// Codecs of each message. decode_* Error names the byte and field that is wrong.
std::array<std::byte, record_bytes> encode(const QpRecord& record);  // throws if QPN or PSN > 24 bits
rig::Result<QpRecord> decode_record(std::span<const std::byte> bytes);
std::array<std::byte, version_bytes> encode_version(std::string_view version);  // throws if longer than 16
// The version text (up to the first NUL) and its number as atof reads it. Error where it
// does not start with a decimal number.
struct Version {
    std::string text;
    double number = 0;
};
rig::Result<Version> decode_version(std::span<const std::byte> bytes);
std::array<std::byte, 2> encode_mtu(rig::bnxt::Mtu mtu);
rig::Result<rig::bnxt::Mtu> decode_mtu(std::span<const std::byte> bytes);  // "1".."5" and NUL

// One side of a connection to a perftest peer: the lock-step exchanges in the order the
// programs run them. `timeout` bounds each read and write. Every Error names the peer.
class Session {
public:
    Session(rig::bootstrap::Stream& stream, Side side, rig::bootstrap::Timeout timeout)
        : stream_(&stream), side_(side), timeout_(timeout) {}

    // 1: the peer's version. Error where it is older than 5.70.
    rig::Result<Version> versions(std::string_view mine = our_version);
    // 2 and 3: the values both sides use (the larger of each).
    rig::Result<SysData> sys_data(SysData mine);
    // 4: the MTU both sides use (the smaller).
    rig::Result<rig::bnxt::Mtu> mtu(rig::bnxt::Mtu mine);
    // One ctx_hand_shake: the peer's record.
    rig::Result<QpRecord> hand_shake(const QpRecord& mine);
    // The five report messages: the peer's report.
    rig::Result<BwReport> bw_reports(const BwReport& mine);
    // ctx_close_connection: a last record, then "done\0"; the peer's "done", if it still
    // arrives, is taken and checked. A reset or close around the two "done"s is no Error.
    rig::Result<void> close(const QpRecord& mine);

    // What the first exchanges settled, and the records of both sides.
    struct Agreed {
        Version peer;
        SysData sys;
        rig::bnxt::Mtu mtu = rig::bnxt::Mtu::Mtu1024;
        QpRecord mine, remote;
    };
    using MakeRecord = std::function<rig::Result<QpRecord>(const Agreed&)>;
    using Connect = std::function<rig::Result<void>(const Agreed&)>;
    using Prepare = std::function<rig::Result<void>()>;
    // 1-4, then the records up to the data phase of `program`, as the header lists them, in
    // perftest's order: `record` makes this side's QP record once 1-4 are settled (where
    // perftest creates its buffer and QP: the vaddr must name max(size, cycle buffer)
    // bytes the peer may read); `connect` moves the QP to RTR and RTS after the first
    // record; `prepare` (ib_send_bw only: post receives or prepare sends) runs before the
    // record that precedes the data. Error naming the peer where a message fails, its
    // version is too old, its GID is of the other IP version, or a callback's Error.
    rig::Result<Agreed> setup(Program program, SysData sys, rig::bnxt::Mtu mtu, const MakeRecord& record,
                              const Connect& connect, const Prepare& prepare = {});
    // After the data phase: ib_read_bw's record and report, then close for both tests.
    // The peer's report for ib_read_bw (the client's, as the server prints it), else a
    // report of zeros.
    rig::Result<BwReport> finish(Program program, const QpRecord& mine, const BwReport& report = {});

private:
    // One lock-step message of the same size each way, `what` naming it.
    rig::Result<void> exchange(std::span<const std::byte> mine, std::span<std::byte> theirs, std::string_view what);
    rig::bootstrap::Stream* stream_;
    Side side_;
    rig::bootstrap::Timeout timeout_;
};

}  // namespace rc_pingpong::perftest
