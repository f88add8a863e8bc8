// rig/bnxt/detail/ring.hpp (internal: not installed, rig_bnxt_internal): ring arithmetic, the one place the driver counts positions on
// its rings (docs/design.md: "ring arithmetic gets its own file"). Tests reach it through
// rig_bnxt_internal to pin it at every wrap boundary (docs/bugs.md B21: drivers of this NIC broke exactly here).
//
// The rules (docs/hsi.md §0, §5.1, §5.5.4, §5.8.2):
//  - A ring of `size` entries is indexed modulo size. SQ, RQ and CQ sizes need not be
//    powers of two (Linux uses the requested size + 1); CMDQ, CREQ and NQ sizes are.
//  - The epoch is the number of wraps of an index to 0, modulo 2: 0 on the first pass,
//    1 after the first wrap, 0 after the second. Producer doorbells (SQ, RQ) and
//    consumer doorbells (CQ, NQ, CREQ) carry the epoch of the index they carry. The
//    parity is taken of the wrap count itself, `wraps & 1`, not of a shifted bit (B21 (a)).
//  - A consumer of a device-written ring expects entries whose valid/toggle bit equals
//    its phase, which starts at 1 and flips on every wrap: phase = 1 - epoch.
//  - A requester CQE names the send-queue index after the WQE it completes, modulo
//    sq_size (§5.5.1); completed_until turns it into the driver's running count.
#pragma once

#include <cstdint>

#include "rig/bnxt/hsi/doorbell.hpp"

namespace rig::bnxt::detail {

class RingPosition {
public:
    constexpr explicit RingPosition(std::uint32_t size) : size_(size) {}

    constexpr std::uint32_t size() const { return size_; }
    constexpr std::uint32_t index() const { return index_; }
    // Wraps to index 0 so far, modulo 2 (§5.8.2).
    constexpr std::uint32_t epoch() const { return epoch_; }
    // The valid/toggle value a consumer expects at index() (§0, §5.5.4).
    constexpr std::uint32_t phase() const { return epoch_ ^ 1u; }

    // Moves one entry on (the hot path: no division).
    constexpr void advance() {
        if (++index_ == size_) {
            index_ = 0;
            epoch_ ^= 1u;
        }
    }
    // Moves `n` entries on (any n, several wraps included).
    constexpr void advance(std::uint32_t n) {
        const std::uint64_t next = std::uint64_t{index_} + n;
        const std::uint64_t wraps = next / size_;
        index_ = static_cast<std::uint32_t>(next % size_);
        epoch_ ^= static_cast<std::uint32_t>(wraps & 1u);
    }

    // The doorbell of queue `xid` carrying this position (§5.8.1).
    constexpr std::uint64_t doorbell(hsi::DbType type, std::uint32_t xid) const {
        return hsi::encode(type, xid, index_, epoch_);
    }

    friend constexpr bool operator==(const RingPosition&, const RingPosition&) = default;

private:
    std::uint32_t size_;
    std::uint32_t index_ = 0;
    std::uint32_t epoch_ = 0;
};

// The running count of send-queue WQEs completed once a requester CQE with
// `sq_cons_idx` arrives, given `retired` WQEs completed before it, on a send queue of
// `size` WQEs (§5.5.1: the CQE completes every WQE from the consumer up to, not
// including, sq_cons_idx % size). Since at most size - 1 WQEs are outstanding, the
// distance is 1 .. size - 1; 0 (a CQE completing nothing) gives `retired` back.
constexpr std::uint64_t completed_until(std::uint64_t retired, std::uint32_t sq_cons_idx, std::uint32_t size) {
    const std::uint32_t from = static_cast<std::uint32_t>(retired % size);
    const std::uint32_t to = sq_cons_idx % size;
    const std::uint32_t distance = to >= from ? to - from : to + size - from;
    return retired + distance;
}

// §7.3 step 3/4 worked by hand: a send queue of 64 WQEs after 64 posts is at index 0
// with epoch 1; its doorbell for QP 7 is 0x0400'0007'0100'0000.
static_assert([] {
    RingPosition p(64);
    p.advance(64);
    return p.index() == 0 && p.epoch() == 1 && p.doorbell(hsi::DbType::SQ, 7) == 0x0400'0007'0100'0000;
}());
static_assert(completed_until(63, 1, 64) == 65 && completed_until(5, 5, 64) == 5);

}  // namespace rig::bnxt::detail
