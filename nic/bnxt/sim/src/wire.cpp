// The Wire (wire.hpp): a link both Nics hold, and how frames cross it (impl.hpp): built in
// buffers the two ends share, sent per event in order under the link's mutex into the
// peer's inbox, and paused while the peer's receive backlog is full.
#include "rig/bnxt/sim/wire.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <stdexcept>

#include "impl.hpp"

namespace rig::bnxt::sim {

using detail::Event;

namespace {

// Spare frame buffers: a Nic keeps up to spare_most and takes spare_batch at a time from
// its link's pool, which keeps up to pool_most: as many as 16 reads of 1 MiB put on the
// wire at once (4096 frames of 4 KiB), so that a steady transfer allocates nothing.
constexpr std::size_t spare_batch = 256;
constexpr std::size_t spare_most = 1024;
constexpr std::size_t pool_most = 8192;
// The pool a Wire starts with, its memory committed, as a port's packet buffers are there
// from power-on: enough for a receiver to hold spare_most before it gives any back while
// its peer keeps sending. Without it the first transfer after the cable is plugged built
// every frame in new memory and paid a page fault per 4 KiB on the model's thread (20 to
// 30 ms for the first 16 MiB p2p_copy moved).
constexpr std::size_t pool_first = 2 * spare_most;

// Pause flow control (IEEE 802.1Qbb PFC, which RoCE's lossless fabrics run): a port whose
// receive buffer holds pause_at frames from the wire makes its peer stop sending until it
// has worked down to resume_at. Only the worker threads pause; frames and their order are
// the same either way.
constexpr std::uint32_t pause_at = 512;
constexpr std::uint32_t resume_at = 256;
constexpr auto pause_most = std::chrono::milliseconds(1);

// An event that makes more frames than this (a long read's responses) sends them as it
// goes, so that the peer takes the first while the rest are built: its transport timer
// sees progress, as it would on a wire.
constexpr std::size_t outbox_most = 64;

}  // namespace

Wire::Wire(Nic& a, Nic& b) : link_(std::make_shared<Link>()) {
    if (&a == &b) throw std::invalid_argument("bnxt Wire: both ends are the same NIC");
    link_->pool.resize(pool_first);
    for (detail::Frame& f : link_->pool) {
        f.resize(detail::max_frame_bytes);
        std::fill(f.begin(), f.end(), std::byte{0});  // commits the pages now
        f.clear();
    }
    Nic::Impl* ends[2] = {a.impl_.get(), b.impl_.get()};
    std::scoped_lock plugs(ends[0]->link_mutex, ends[1]->link_mutex);
    for (auto* e : ends) {
        if (!e->link) continue;
        std::lock_guard l(e->link->mutex);
        if (e->link->ends[e->link_end] == e) throw std::invalid_argument("bnxt Wire: a NIC is plugged already");
    }
    std::lock_guard l(link_->mutex);
    for (unsigned i = 0; i < 2; ++i) {
        ends[i]->link = link_;
        ends[i]->link_end = i;
        link_->ends[i] = ends[i];
    }
}

Wire::~Wire() {
    std::lock_guard l(link_->mutex);
    link_->ends = {};
}

std::shared_ptr<Wire::Link> Nic::Impl::plugged(unsigned& end) {
    std::lock_guard lock(link_mutex);
    end = link_end;
    return link;
}

detail::Frame Nic::Impl::frame() {
    if (spare.empty()) {
        unsigned end = 0;
        if (auto l = plugged(end)) {
            std::lock_guard lock(l->mutex);
            const auto batch = l->pool.end() - static_cast<std::ptrdiff_t>(std::min(spare_batch, l->pool.size()));
            spare.insert(spare.end(), std::make_move_iterator(batch), std::make_move_iterator(l->pool.end()));
            l->pool.erase(batch, l->pool.end());
        }
    }
    if (spare.empty()) {
        ++counters.frame_buffers_made;
        return {};
    }
    detail::Frame f = std::move(spare.back());
    spare.pop_back();
    f.clear();
    return f;
}

void Nic::Impl::recycle(detail::Frame frame) {
    if (frame.capacity() == 0) return;
    spare.push_back(std::move(frame));
    if (spare.size() < spare_most) return;
    // The peer may be the one that builds the frames this Nic takes: half to the pool.
    unsigned end = 0;
    if (auto l = plugged(end)) {
        std::lock_guard lock(l->mutex);
        while (spare.size() > spare_most / 2 && l->pool.size() < pool_most) {
            l->pool.push_back(std::move(spare.back()));
            spare.pop_back();
        }
    }
    spare.resize(std::min(spare.size(), spare_most / 2));
}

void Nic::Impl::send(detail::Frame frame, To to) {
    if (to == To::self) {
        outbox_self.push_back(std::move(frame));
    } else if (faults.take_frame_drop()) {
        ++counters.frames_dropped;
        recycle(std::move(frame));
        return;
    } else {
        outbox_wire.push_back(std::move(frame));
    }
    if (outbox_self.size() + outbox_wire.size() >= outbox_most) flush();
}

void Nic::Impl::deliver(std::vector<detail::Frame>& frames, std::uint64_t from) {
    {
        std::lock_guard lock(inbox_mutex);
        for (detail::Frame& f : frames) inbox.push_back(Event{Event::Kind::frame, from, {}, std::move(f)});
        counters.frames_received += frames.size();
        arrivals.fetch_add(frames.size(), std::memory_order_relaxed);
    }
    // Woken after the inbox's lock is let go, so the worker does not wake only to wait
    // for that lock.
    inbox_cv.notify_all();
    frames.clear();
}

void Nic::Impl::flush() {
    if (!outbox_self.empty()) deliver(outbox_self, 0);
    if (outbox_wire.empty()) return;
    unsigned end = 0;
    if (auto l = plugged(end)) {
        std::lock_guard lock(l->mutex);  // the peer outlives this: it unplugs under l->mutex
        Impl* peer = l->ends[1 - end];
        if (l->ends[end] == this && peer != nullptr) {
            const auto n = static_cast<std::uint32_t>(outbox_wire.size());
            peer_full = peer->wire_backlog.fetch_add(n) + n >= pause_at;
            counters.frames_sent += n;
            peer->deliver(outbox_wire, Event::from_wire);
            return;
        }
    }
    counters.frames_dropped += outbox_wire.size();  // unplugged
    for (detail::Frame& f : outbox_wire) recycle(std::move(f));
    outbox_wire.clear();
}

void Nic::Impl::drained(std::uint32_t frames) {
    const std::uint32_t before = wire_backlog.fetch_sub(frames);
    if (before < resume_at || before - frames >= resume_at) return;
    // Down to resume_at: a peer that paused may go on (under the link's mutex, which its
    // wait holds while it looks at the backlog, so the wakeup is not lost).
    unsigned end = 0;
    if (auto l = plugged(end)) {
        std::lock_guard lock(l->mutex);
        l->resumed.notify_all();
    }
}

void Nic::Impl::pace() {
    if (!peer_full) return;
    peer_full = false;
    unsigned end = 0;
    auto l = plugged(end);
    if (!l) return;
    std::unique_lock lock(l->mutex);
    // A peer stepped by hand drains only when stepped, and two ports each holding the
    // other's frames must not both wait: neither pauses then. The wait is bounded too.
    auto go_on = [&] {
        const Impl* peer = l->ends[1 - end];
        return !peer || !peer->worker_running || peer->wire_backlog < resume_at || wire_backlog >= pause_at;
    };
    l->resumed.wait_for(lock, pause_most, go_on);
}

}  // namespace rig::bnxt::sim
