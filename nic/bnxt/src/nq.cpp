// The notification queue (docs/hsi.md §5.6): where an armed CQ announces its next
// CQE, and whose MSI-X vector wakes Cq::wait.
//
// The rule: a waiter counts its CQ's notifications, arms the CQ (CQ_ARMALL), and waits
// until the count grows. One waiter at a time (the leader) arms the NQ (NQ_ARM with the
// consumer index) and sleeps in Function::interrupt on the NQ's vector, at most `slice`
// at a time; on waking it takes every new NQ entry, counting each CQ's notifications and
// re-enabling that CQ's arming (CQ_ARMENA, as Linux does), releases the entries (an NQ
// doorbell) and wakes the other waiters, who look at their counts and, if theirs did not
// grow, take the lead in turn. Every wait is bounded by the caller's deadline.
#include <algorithm>
#include <array>

#include "doorbell.hpp"
#include "rig/little_endian.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

// The longest a waiter sleeps before it looks at its deadline and the function again.
constexpr std::chrono::milliseconds slice{100};

std::uint64_t count(const Nq& nq, std::uint64_t handle) {
    const auto it = nq.counts.find(handle);
    return it == nq.counts.end() ? 0 : it->second.notifications;
}

}  // namespace

void drain_nq_locked(Nic::State& nic) {
    Nq& nq = nic.nq;
    if (nq.entries == 0) return;
    const pci::Window& ring = nq.ring.memory.window();
    bool consumed = false;
    for (;;) {
        const std::uint64_t offset = std::uint64_t{nq.cons.index()} * hsi::nq::entry_bytes;
        const std::uint8_t v = ring.read8(offset + hsi::nq::v_offset, std::memory_order_acquire);
        if (hsi::nq::v.of(v) != nq.cons.phase()) break;
        std::array<std::byte, hsi::nq::entry_bytes> bytes;
        ring.read(offset, bytes);
        nq.cons.advance();
        consumed = true;
        const auto entry = little_endian::load<hsi::NqCn>(bytes);
        if (hsi::nq::type.of(entry.type) != static_cast<std::uint8_t>(hsi::NqType::CQ_NOTIFICATION)) continue;
        const std::uint64_t handle = std::uint64_t{entry.cq_handle_high} << 32 | entry.cq_handle_low;
        if (auto it = nq.counts.find(handle); it != nq.counts.end()) {
            ++it->second.notifications;
            ring_doorbell(nic.doorbells, hsi::encode(hsi::DbType::CQ_ARMENA, it->second.cq_id, 0, 0));
        }
    }
    if (consumed) ring_doorbell(nic.doorbells, nq.cons.doorbell(hsi::DbType::NQ, nq.ring_id));
}

void wait_nq(Nic::State& nic, std::uint64_t handle, std::uint64_t seen, std::chrono::nanoseconds deadline) {
    Nq& nq = nic.nq;
    std::unique_lock lock(nq.mutex);
    for (;;) {
        drain_nq_locked(nic);
        if (count(nq, handle) > seen || nic.fn.failed()) return;
        const auto now = nic.clock->now();
        if (now >= deadline) return;
        const auto left = std::min<std::chrono::nanoseconds>(deadline - now, slice);
        if (nq.leader) {
            nq.cv.wait_for(lock, left);
            continue;
        }
        nq.leader = true;
        ring_doorbell(nic.doorbells, nq.cons.doorbell(hsi::DbType::NQ_ARM, nq.ring_id));
        lock.unlock();
        (void)nic.fn.interrupt(nq.vector, left);
        lock.lock();
        nq.leader = false;
        nq.cv.notify_all();
    }
}

}  // namespace rig::bnxt
