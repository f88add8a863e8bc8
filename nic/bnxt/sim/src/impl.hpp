// impl.hpp: what a Nic is made of (nic.hpp): the BAR0 register file and the inbox that
// BAR writes and wire frames fill, the step that empties it into the Firmware, the
// worker thread, and the wire link. Private to rig_bnxt_sim.
//
// Frames: the Firmware builds each frame in a spare buffer and sends it into the outbox;
// when the event that made them is done (or 64 are waiting), the outbox goes over the
// wire (or into this Nic's own inbox) at once, in order, under one lock and with one
// wakeup. A receiver gives the buffers of frames it has taken back to spares; spares
// beyond what a Nic keeps go to the link's pool, and a Nic without spares takes from it,
// a batch at a time.
//
// Locks: `inbox_mutex` guards the inbox, the register file and the BAR-side counters
// (bar_width_faults, bar_unmapped, frames_received); `step_mutex` guards the Firmware,
// the outbox, the spares and every other counter; `link_mutex` guards which link the Nic
// is plugged into. Orders: a step takes step_mutex, then inbox_mutex briefly; a BAR
// access takes inbox_mutex only; frames leaving take link_mutex (released), then the
// link's mutex, then the peer's inbox_mutex; plugging takes both link_mutexes, then the
// link's mutex.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "firmware.hpp"
#include "rig/bnxt/sim/wire.hpp"

namespace rig::bnxt::sim {

struct Wire::Link {
    std::mutex mutex;
    std::array<Nic::Impl*, 2> ends{};
    std::vector<detail::Frame> pool;  // spare frame buffers of both ends
    std::condition_variable resumed;  // with `mutex`: an end's wire backlog fell to resume_at
};

struct Nic::Impl final : detail::Transmitter {
    explicit Impl(Options o);

    // detail::Transmitter, inside a step.
    detail::Frame frame() override;
    void send(detail::Frame frame, To to) override;

    bool step();          // one event (or a due timer), with its frames sent
    void run();
    // The worker, out of work: whether an event arrived (arrivals moved past `seen`) within
    // the spin it allows itself before it sleeps on inbox_cv.
    bool arrives(std::uint64_t seen) const;
    void post(detail::Event event);  // with inbox_mutex held
    // Inside a step: the event's effects, then its frames out and its buffer back. true
    // where it was a frame from the wire (for drained).
    bool handle(detail::Event& event);
    // After the events of a step (handled: there were some) or none: fires the due
    // timers where there were none, and records whether timers wait; whether it worked.
    bool end_step(bool handled);
    void flush();
    // Puts `frames` into this Nic's inbox as frame events of origin `from` (Event::value),
    // counted, and wakes the worker; leaves `frames` empty.
    void deliver(std::vector<detail::Frame>& frames, std::uint64_t from);
    void recycle(detail::Frame frame);
    std::shared_ptr<Wire::Link> plugged(unsigned& end);
    // The worker's pause while the peer's backlog is full (pause flow control, nic.cpp).
    void pace();
    void drained(std::uint32_t frames);  // frames from the wire were handled

    Options options;
    SteadyClock steady;
    const Clock& clock;
    testing::Counters counters;
    detail::FaultPlan faults;

    std::mutex inbox_mutex;
    std::condition_variable inbox_cv;
    std::deque<detail::Event> inbox;
    // Events put into the inbox so far: the worker watches it, without the lock, while it
    // spins before it sleeps (run).
    std::atomic<std::uint64_t> arrivals{0};
    bool stop_requested = false;
    bool timers_pending = false;
    std::array<std::uint32_t, 64> window{};   // BAR0 0x000..0x0FF
    std::array<std::uint32_t, 4> mailbox{};   // BAR0 0x600..0x60F
    bool mailbox_dirty = false;
    std::uint32_t cmdq_prod = 0;              // BAR0 0x60C after the latch

    // Frames from the wire delivered into the inbox and not yet handled (the receive
    // buffer that pause flow control watches); whether the worker thread runs.
    alignas(64) std::atomic<std::uint32_t> wire_backlog{0};  // its own cache line: both ends write it
    std::atomic<bool> worker_running{false};

    std::mutex step_mutex;
    bool peer_full = false;  // the last frames out found the peer's backlog at pause_at
    std::vector<detail::Frame> outbox_wire;
    std::vector<detail::Frame> outbox_self;
    std::vector<detail::Frame> spare;
    detail::Firmware firmware;
    rig::sim::Port* port = nullptr;
    std::thread worker;

    std::mutex link_mutex;
    std::shared_ptr<Wire::Link> link;
    unsigned link_end = 0;
};

}  // namespace rig::bnxt::sim
