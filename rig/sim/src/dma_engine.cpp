// The DMA engine and memory device models (rig/sim/dma_engine.hpp). Written from their
// register tables, reached only through BAR accesses and their Port.
#include "rig/sim/dma_engine.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace rig::sim {
namespace {

constexpr std::uint16_t test_vendor = 0x1234;  // QEMU's, which its own test devices use
constexpr std::uint64_t engine_bar_bytes = 16 << 10;
constexpr std::uint64_t memory_registers_bytes = 4 << 10;

constexpr std::uint64_t ones(unsigned width) { return width >= 8 ? ~0ull : (1ull << (8 * width)) - 1; }

}  // namespace

DmaEngine::DmaEngine(Threading threading, std::uint16_t device_id) : threading_(threading), device_id_(device_id) {}

DmaEngine::~DmaEngine() { detach(); }

Identity DmaEngine::identity() const {
    Identity self;
    self.vendor = test_vendor;
    self.device = device_id_;
    self.class_code = 0x088000;  // other system peripheral
    self.bars[0] = BarSpec{engine_bar_bytes, false, true};
    self.msix_vectors = 4;
    return self;
}

void DmaEngine::attach(Port& port) {
    std::lock_guard lock(mutex_);
    port_ = &port;
    stopping_ = false;
    if (threading_ == Threading::Own) thread_ = std::thread([this] { run(); });
}

void DmaEngine::detach() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    port_ = nullptr;
}

std::uint64_t DmaEngine::read(unsigned bar, std::uint64_t offset, unsigned width) {
    std::lock_guard lock(mutex_);
    if (bar != 0) return ones(width);
    ++accesses_;
    if (width == 8) {
        if (offset == source) return source_;
        if (offset == destination) return destination_;
        return ones(width);
    }
    if (width != 4) return ones(width);
    switch (offset) {
    case id: return id_value;
    case source: return static_cast<std::uint32_t>(source_);
    case source + 4: return static_cast<std::uint32_t>(source_ >> 32);
    case destination: return static_cast<std::uint32_t>(destination_);
    case destination + 4: return static_cast<std::uint32_t>(destination_ >> 32);
    case length: return length_;
    case go: return 0;
    case status: return static_cast<std::uint32_t>(status_);
    case vector: return vector_;
    case copies: return copies_;
    default: return ones(width);
    }
}

void DmaEngine::write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) {
    std::unique_lock lock(mutex_);
    if (bar != 0 || (width != 4 && width != 8)) return;
    ++accesses_;
    const auto low = static_cast<std::uint32_t>(value);
    if (width == 8) {
        if (offset == source) source_ = value;
        if (offset == destination) destination_ = value;
        return;
    }
    switch (offset) {
    case source: source_ = (source_ & ~0xffff'ffffull) | low; break;
    case source + 4: source_ = (source_ & 0xffff'ffffull) | (std::uint64_t{low} << 32); break;
    case destination: destination_ = (destination_ & ~0xffff'ffffull) | low; break;
    case destination + 4: destination_ = (destination_ & 0xffff'ffffull) | (std::uint64_t{low} << 32); break;
    case length: length_ = low; break;
    case vector: vector_ = low; break;
    case go:
        if (low != 1 || status_ == Status::Busy) break;
        status_ = Status::Busy;
        if (threading_ == Threading::Caller) {
            copy(lock);
        } else {
            started_ = true;
            wake_.notify_all();
        }
        break;
    default: break;
    }
}

void DmaEngine::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return started_ || stopping_; });
        if (stopping_) return;
        started_ = false;
        copy(lock);
    }
}

void DmaEngine::copy(std::unique_lock<std::mutex>& lock) {
    const std::uint64_t from = source_, to = destination_;
    const std::uint32_t n = length_;
    Port* port = port_;
    Status result = Status::Done;
    if (n > max_length) {
        result = Status::TooLong;
    } else if (port) {
        lock.unlock();  // a DMA may reach this engine's own registers
        std::vector<std::byte> buffer(n);
        const DmaStatus got = port->read(pci::DmaAddress{from}, buffer);
        if (got != DmaStatus::Ok) {
            result = got == DmaStatus::UnsupportedRequest ? Status::ReadUnsupported : Status::ReadAbort;
        } else {
            const DmaStatus put = port->write(pci::DmaAddress{to}, buffer);
            if (put != DmaStatus::Ok)
                result = put == DmaStatus::UnsupportedRequest ? Status::WriteUnsupported : Status::WriteAbort;
        }
        lock.lock();
    }
    status_ = result;
    ++copies_;
    const std::uint32_t raise = vector_;
    idle_.notify_all();
    if (raise != no_vector && port) {
        lock.unlock();
        port->interrupt(raise);
        lock.lock();
    }
}

void DmaEngine::reset() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return status_ != Status::Busy; });
    source_ = destination_ = 0;
    length_ = copies_ = 0;
    vector_ = no_vector;
    status_ = Status::Idle;
}

std::uint64_t DmaEngine::accesses() const {
    std::lock_guard lock(mutex_);
    return accesses_;
}

void MemoryDevice::Free::operator()(std::byte* p) const { std::free(p); }

MemoryDevice::MemoryDevice(std::uint64_t bytes, std::uint16_t device_id) : bytes_(bytes), device_id_(device_id) {
    // Page-aligned, as a BAR mapped into the process is.
    auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, bytes));
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    memory_.reset(p);
}

Identity MemoryDevice::identity() const {
    Identity id;
    id.vendor = test_vendor;
    id.device = device_id_;
    id.class_code = 0x030200;  // 3D controller, as a compute GPU
    id.bars[0] = BarSpec{bytes_, true, true};
    id.bars[2] = BarSpec{memory_registers_bytes, false, true};
    return id;
}

std::uint64_t MemoryDevice::read(unsigned bar, std::uint64_t offset, unsigned width) {
    std::lock_guard lock(mutex_);
    if (bar != 2) return ones(width);
    if (offset == 0 && width == 4) return id_value;
    if (offset == 8 && width == 8) return scratch_;
    return ones(width);
}

void MemoryDevice::write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) {
    std::lock_guard lock(mutex_);
    if (bar == 2 && offset == 8 && width == 8) scratch_ = value;
}

std::span<std::byte> MemoryDevice::memory(unsigned bar) {
    if (bar != 0) return {};
    return {memory_.get(), bytes_};
}

void MemoryDevice::reset() {
    std::lock_guard lock(mutex_);
    scratch_ = 0;
    std::memset(memory_.get(), 0, bytes_);
}

}  // namespace rig::sim
