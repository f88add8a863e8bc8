// tests/nic/bnxt/sim/transport.hpp: two models whose RC transport runs over a cable with
// faults (cable.hpp): a Wire stepped by hand (each run the same for its seeds) or two
// datagram cables on 127.0.0.1 with the models on their threads; and the transfers the
// transport tests run through them, SENDs into posted receives or RDMA READs, every CQE
// and every byte checked as it comes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pair.hpp"
#include "rig/bnxt/sim/datagram.hpp"

namespace rig::bnxt::sim::test {

using End = Cable::End;

inline constexpr std::uint8_t ERR = 6;                         // QUERY_QP state, §4.6.9
inline constexpr std::uint8_t transport_retry_exceeded = 0xA;  // CQE TRANSPORT_RETRY_CNT_ERR, §5.5.1

enum class Op { send, read };

struct Case {
    std::string name;
    Op op = Op::send;
    std::uint64_t bytes = 0;  // per message
    unsigned count = 0;       // messages
    std::uint8_t mtu_code = 2;
    Cable::Faults faults;       // both directions (the second end's seed one more)
    unsigned outstanding = 32;  // messages posted and not complete, at most
};

// What a transfer met.
struct Outcome {
    std::uint64_t rounds = 0;            // times the clocks were moved past the local ACK timeout
    Cable::FaultCounters first, second;  // A's frames, B's frames
};

// IBA 9.7.6.1.1: the local ACK timeout of MODIFY_QP's timeout field, 4.096 us x 2^timeout.
inline std::chrono::nanoseconds local_ack_timeout(std::uint8_t timeout) {
    return std::chrono::nanoseconds(std::int64_t{4096} << timeout);
}

class TransportTest : public Pair {
protected:
    // Opens the Pair (timeout: MODIFY_QP's; A takes up to 16 READs outstanding) over the
    // Wire (threaded false) or two datagram cables, with c.faults on the cable(s).
    void start(const Case& c, bool threaded, std::uint8_t timeout = 14);
    // Runs the models until `done`: by hand, settling both and, when neither has work
    // left, moving both clocks past the local ACK timeout; on threads, moving them on
    // whenever 20 ms pass without `done`. A hang guard fails the test after a bound.
    void run_until(const std::function<bool()>& done, Outcome& out);
    // c.count messages of c.bytes, each its own bytes and place, posted in bursts (up to
    // c.outstanding) with one SQ doorbell each; then nothing more may complete.
    Outcome transfer(const Case& c);
    // What holds for every transfer, whatever the seeds: every frame counted once on
    // each side of the cable; every lost request sent again; no retries on a clean cable.
    void check_counters(const Case& c, const Outcome& out);
    // The frames end `sender` (0: A, 1: B) handed to its cable, and what became of them.
    Cable::FaultCounters faults_of(unsigned sender);

    std::uint8_t timeout_ = 14;
    bool threaded_ = false;
    std::unique_ptr<DatagramCable> datagrams_[2];
};

// The cases of the fault matrix: SEND and READ of 1 B and 4 KiB x 500, and of 16 MiB, at
// 1% and 10% loss, 1% duplication and reordering within 8 frames. Those of Size::slow:
// the 16 MiB READs at 10% loss and with reordering, which ask again for the rest of the
// message at each lost or overtaken response (go-back-N: some 900,000 responses, seconds
// each even in a release build).
enum class Size { small, large, slow };
std::vector<Case> fault_cases(Size size);
std::string case_name(const ::testing::TestParamInfo<Case>& info);

}  // namespace rig::bnxt::sim::test
