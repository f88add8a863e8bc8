// The Model (nic.hpp): identity, BAR decode (docs/hsi.md §1.3, §1.4, §5.8.3), the inbox
// of events, stepping, and the worker thread. What the events do lives in the Firmware.
#include "rig/bnxt/sim/model.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "impl.hpp"
#include "rig/bnxt/hsi/doorbell.hpp"
#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::sim {

namespace hsi = rig::bnxt::hsi;
using detail::Event;

namespace {

constexpr std::uint64_t bar0_bytes = 64 * 1024;
constexpr std::uint64_t bar2_bytes = 128 * 1024;
constexpr std::uint64_t bar4_bytes = 16 * 1024;
constexpr std::size_t max_req_win_len = 128;  // what VER_GET reports (§3.6 model value)
constexpr std::uint32_t drain_group = 32;     // the worker tells drained this many frames at a time
// How long the worker spins for the next event before it sleeps: a hardware engine polls
// its queues, and a wakeup through the kernel costs more than the gaps of a transfer
// (an acknowledgement every 16 packets, a doorbell per work request).
constexpr auto spin_most = std::chrono::microseconds(50);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

std::uint64_t all_ones(unsigned width) {
    return width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
}

}  // namespace

Model::Impl::Impl(ModelOptions o)
    : options(std::move(o)),
      clock(options.clock ? *options.clock : steady),
      firmware(options, clock, counters, rx, faults, *this, neighbours) {}

void Model::Impl::post(Event event) {
    inbox.push_back(std::move(event));
    arrivals.fetch_add(1, std::memory_order_relaxed);
    inbox_cv.notify_all();
}

bool Model::Impl::handle(Event& event) {
    firmware.handle(event);
    const bool from_wire = event.is_from_wire();
    if (event.kind == Event::Kind::frame) recycle(std::move(event.frame));
    flush();
    return from_wire;
}

bool Model::Impl::step() {
    std::lock_guard step_lock(step_mutex);
    std::optional<Event> event;
    {
        std::lock_guard lock(inbox_mutex);
        if (!inbox.empty()) {
            event = std::move(inbox.front());
            inbox.pop_front();
        }
    }
    if (event && handle(*event)) drained(1);
    return end_step(event.has_value());
}

bool Model::Impl::end_step(bool handled) {
    bool worked = handled;
    if (!handled) {
        worked = firmware.fire_timers();
        flush();
    }
    const bool pending = firmware.timers_pending();
    std::lock_guard lock(inbox_mutex);
    timers_pending = pending;
    return worked;
}

void Model::Impl::run() {
    // Steps as step() does, but takes every event waiting at once: one lock for the lot,
    // handled in arrival order; timers fire, as in step(), only when no event waits.
    std::deque<Event> batch;
    for (;;) {
        bool worked = false;
        std::uint64_t seen = 0;  // arrivals when the batch was taken
        {
            std::lock_guard step_lock(step_mutex);
            {
                std::lock_guard lock(inbox_mutex);
                batch.swap(inbox);
                seen = arrivals.load(std::memory_order_relaxed);
            }
            std::uint32_t from_wire = 0;  // handled, told to drained in groups of drain_group
            for (std::size_t i = 0; i < batch.size(); ++i) {
                // The headers of the frame after next, written on the peer's core, are on
                // their way while this event is handled (one frame ahead is too late).
                if (i + 2 < batch.size() && !batch[i + 2].frame.empty()) {
                    __builtin_prefetch(batch[i + 2].frame.data());
                    __builtin_prefetch(batch[i + 2].frame.data() + 64);
                }
                Event& e = batch[i];
                if (handle(e) && ++from_wire == drain_group) {
                    drained(from_wire);
                    from_wire = 0;
                }
                pace();
            }
            if (from_wire > 0) drained(from_wire);
            worked = end_step(!batch.empty());
            batch.clear();
        }
        if (worked || arrives(seen)) continue;
        std::unique_lock lock(inbox_mutex);
        if (stop_requested) return;
        if (!inbox.empty()) continue;
        if (timers_pending) {
            // A timer compares against the injectable clock; look again within 1 ms.
            inbox_cv.wait_for(lock, std::chrono::milliseconds(1));
        } else {
            inbox_cv.wait(lock, [&] { return stop_requested || !inbox.empty(); });
        }
        if (stop_requested) return;
    }
}

bool Model::Impl::arrives(std::uint64_t seen) const {
    const auto until = std::chrono::steady_clock::now() + spin_most;
    do {
        for (int i = 0; i < 64; ++i) {
            if (arrivals.load(std::memory_order_relaxed) != seen) return true;
            cpu_relax();
        }
        std::this_thread::yield();  // a thread with work on this core goes first
    } while (std::chrono::steady_clock::now() < until);
    return false;
}

Model::Model(ModelOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Model::~Model() {
    stop();
    unsigned end = 0;
    if (auto l = impl_->plugged(end)) {
        std::lock_guard lock(l->mutex);
        if (l->ends[end] == impl_.get()) l->ends[end] = nullptr;
    }
}

rig::sim::Identity Model::identity() const {
    rig::sim::Identity id;
    id.vendor = hsi::pci_vendor_broadcom;
    id.device = hsi::pci_device_bcm57508;
    id.class_code = hsi::pci_class_ethernet;
    id.bars[hsi::bar_registers] = {bar0_bytes, false, true};
    id.bars[hsi::bar_doorbells] = {bar2_bytes, false, true};
    id.bars[hsi::bar_other] = {bar4_bytes, false, true};
    id.msix_vectors = impl_->options.msix_vectors;
    return id;
}

void Model::attach(rig::sim::Port& port) {
    std::lock_guard step_lock(impl_->step_mutex);
    impl_->port = &port;
    impl_->firmware.attach(&port);
}

void Model::detach() {
    stop();
    std::lock_guard step_lock(impl_->step_mutex);
    impl_->port = nullptr;
    impl_->firmware.attach(nullptr);
}

namespace {

// A register read as the hardware answers it (under the inbox mutex).
std::uint64_t read_register(Model::Impl& m, unsigned bar, std::uint64_t offset, unsigned width) {
    if (bar == hsi::bar_other && offset + width <= bar4_bytes) return 0;  // nothing modelled there
    if (bar != hsi::bar_registers) {
        // BAR2 holds write-only doorbells (B23: a read gives garbage on hardware).
        ++m.counters.bar_unmapped;
        return all_ones(width);
    }
    if (width != hsi::bar0::register_bytes || offset % 4 != 0) {
        ++m.counters.bar_width_faults;
        return all_ones(width);
    }
    if (offset < hsi::bar0::hwrm_window_bytes) return m.window[offset / 4];
    if (offset == hsi::bar0::hwrm_trigger || offset == hsi::bar0::cmdq_trigger) return 0;
    if (offset == hsi::bar0::fw_status) return hsi::fw_status::healthy;  // booted at once
    if (offset >= hsi::bar0::cmdq_mailbox && offset < hsi::bar0::cmdq_mailbox + hsi::bar0::cmdq_mailbox_bytes) {
        if (offset == hsi::bar0::cmdq_prod && !m.mailbox_dirty) return m.cmdq_prod;
        return m.mailbox[(offset - hsi::bar0::cmdq_mailbox) / 4];
    }
    ++m.counters.bar_unmapped;
    return all_ones(width);
}

}  // namespace

std::uint64_t Model::read(unsigned bar, std::uint64_t offset, unsigned width) {
    auto& m = *impl_;
    std::lock_guard lock(m.inbox_mutex);
    const std::uint64_t value = read_register(m, bar, offset, width);
    std::array<std::byte, 8> bytes;
    rig::little_endian::store(std::span(bytes), rig::little_endian::Le64(value));
    m.faults.tamper(testing::Written::register_read, bytes);  // testing::Faults::tamper: a hostile device
    const std::uint64_t tampered =
        rig::little_endian::load<rig::little_endian::Le64>(std::span<const std::byte>(bytes));
    return width >= 8 ? tampered : tampered & ((std::uint64_t{1} << (8 * width)) - 1);
}

void Model::write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) {
    auto& m = *impl_;
    std::lock_guard lock(m.inbox_mutex);
    if (bar == hsi::bar_other && offset + width <= bar4_bytes) return;
    if (bar == hsi::bar_doorbells) {
        // §5.8.3: any 8-byte-aligned offset of the doorbell pages; §5.8.1: one 8-byte store.
        if (offset < hsi::bar2::doorbell_page_pf || offset >= bar2_bytes) {
            ++m.counters.bar_unmapped;  // the L2 doorbell area: not modelled
            return;
        }
        if (width != hsi::bar2::doorbell_bytes || offset % 8 != 0) {
            ++m.counters.bar_width_faults;
            return;
        }
        m.post(Event{Event::Kind::doorbell, value, {}, {}, offset});
        return;
    }
    if (bar != hsi::bar_registers) {
        ++m.counters.bar_unmapped;
        return;
    }
    if (width != hsi::bar0::register_bytes || offset % 4 != 0) {
        ++m.counters.bar_width_faults;
        return;
    }
    const auto v = static_cast<std::uint32_t>(value);
    if (offset < hsi::bar0::hwrm_window_bytes) {
        m.window[offset / 4] = v;
    } else if (offset == hsi::bar0::hwrm_trigger) {
        if (v != 1) return;
        // §3.1: the firmware takes max_req_win_len bytes of the window; longer requests
        // use short mode.
        detail::Bytes request(max_req_win_len);
        for (std::size_t i = 0; i < max_req_win_len; ++i)
            request[i] = static_cast<std::byte>(m.window[i / 4] >> (8 * (i % 4)));
        m.post(Event{Event::Kind::hwrm, 0, std::move(request), {}});
    } else if (offset >= hsi::bar0::cmdq_mailbox && offset < hsi::bar0::cmdq_prod) {
        m.mailbox[(offset - hsi::bar0::cmdq_mailbox) / 4] = v;
        m.mailbox_dirty = true;
    } else if (offset == hsi::bar0::cmdq_prod) {
        if (m.mailbox_dirty) {
            // §4.2: the 4th mailbox dword latches cmdq_init.
            m.mailbox[3] = v;
            m.mailbox_dirty = false;
            detail::Bytes init(16);
            for (std::size_t i = 0; i < 16; ++i) init[i] = static_cast<std::byte>(m.mailbox[i / 4] >> (8 * (i % 4)));
            m.post(Event{Event::Kind::cmdq_init, 0, std::move(init), {}});
        }
        m.cmdq_prod = v;
    } else if (offset == hsi::bar0::cmdq_trigger) {
        if (v == hsi::cmdq_prod::trigger_value) m.post(Event{Event::Kind::cmdq_trigger, m.cmdq_prod, {}, {}});
    } else if (offset == hsi::bar0::fw_status) {
        // read-only
    } else {
        ++m.counters.bar_unmapped;
    }
}

std::span<std::byte> Model::memory(unsigned) { return {}; }

void Model::reset() {
    auto& m = *impl_;
    std::lock_guard step_lock(m.step_mutex);
    std::lock_guard lock(m.inbox_mutex);
    for (const Event& e : m.inbox)
        if (e.is_from_wire()) --m.wire_backlog;
    m.inbox.clear();
    m.window = {};
    m.mailbox = {};
    m.mailbox_dirty = false;
    m.cmdq_prod = 0;
    m.firmware.power_on();
}

void Model::start() {
    auto& m = *impl_;
    {
        std::lock_guard step_lock(m.step_mutex);
        if (!m.port) throw std::logic_error("bnxt model: start before attach");
    }
    std::lock_guard lock(m.inbox_mutex);
    if (m.worker.joinable()) return;
    m.stop_requested = false;
    m.worker_running = true;
    m.worker = std::thread([&m] { m.run(); });
}

void Model::stop() {
    auto& m = *impl_;
    {
        std::lock_guard lock(m.inbox_mutex);
        if (!m.worker.joinable()) return;
        m.stop_requested = true;
        m.inbox_cv.notify_all();
    }
    m.worker.join();
    std::lock_guard lock(m.inbox_mutex);
    m.worker = std::thread();
    m.worker_running = false;
    m.stop_requested = false;
}

bool Model::running() const {
    std::lock_guard lock(impl_->inbox_mutex);
    return impl_->worker.joinable();
}

bool Model::step() { return impl_->step(); }

std::size_t Model::settle(std::size_t max_steps) {
    std::size_t n = 0;
    while (n < max_steps && impl_->step()) ++n;
    return n;
}

const ModelOptions& Model::options() const { return impl_->options; }

RxCounters Model::rx_counters() const {
    std::lock_guard step_lock(impl_->step_mutex);
    return impl_->rx;
}

rig::Result<std::array<std::uint8_t, 6>> Model::resolve(std::span<const std::uint8_t, 16> gid,
                                                        std::chrono::milliseconds timeout) {
    if (timeout < std::chrono::milliseconds(1))
        throw std::invalid_argument("rig::bnxt::sim::Model::resolve: a timeout of at least 1 ms");
    detail::Gid g{};
    std::copy(gid.begin(), gid.end(), g.begin());
    return impl_->resolve(g, timeout);
}

}  // namespace rig::bnxt::sim
