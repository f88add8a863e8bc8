// tests/nic/bnxt/sim/fake_bus.hpp: a rig::sim::Port for the model's unit tests: DMA
// addresses backed by plain memory, holes between allocations (an access there answers
// Unsupported Request, as an IOMMU without a mapping does), ranges a test makes refuse
// with a chosen status (a peer BAR the route does not forward: Completer Abort), MSI-X
// counters and an optional log of writes. The test reads and writes the same memory as
// "the CPU" through peek/poke. Thread-safe: the model may run on its own thread.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "rig/sim/device.hpp"

namespace rig::bnxt::sim::test {

using rig::sim::DmaStatus;

class FakeBus final : public rig::sim::Port {
public:
    explicit FakeBus(std::uint64_t base = 0x0000'0001'0000'0000, std::string name = "0000:41:00.0")
        : next_(base), name_(std::move(name)) {}

    // `bytes` (rounded up to 4 KiB) of zeroed memory at a fresh address aligned to `align`,
    // with an unmapped 4 KiB hole after it.
    std::uint64_t alloc(std::uint64_t bytes, std::uint64_t align = 4096) {
        std::lock_guard lock(mutex_);
        const std::uint64_t size = (bytes + 4095) & ~std::uint64_t{4095};
        const std::uint64_t at = (next_ + align - 1) & ~(align - 1);
        regions_[at] = std::vector<std::byte>(size);
        next_ = at + size + 4096;
        return at;
    }

    // Accesses overlapping [address, address + bytes) answer `status`.
    void refuse(std::uint64_t address, std::uint64_t bytes, DmaStatus status) {
        std::lock_guard lock(mutex_);
        refused_.push_back({address, bytes, status});
    }
    void clear_refusals() {
        std::lock_guard lock(mutex_);
        refused_.clear();
    }

    // The CPU's view of the same memory; throws on an address nothing backs.
    void poke(std::uint64_t address, std::span<const std::byte> in) {
        std::lock_guard lock(mutex_);
        if (!copy(address, in.size(),
                  [&](std::byte* p, std::size_t off, std::size_t n) { std::memcpy(p, in.data() + off, n); }))
            throw std::out_of_range("FakeBus::poke outside memory");
    }
    void peek(std::uint64_t address, std::span<std::byte> out) {
        std::lock_guard lock(mutex_);
        if (!copy(address, out.size(),
                  [&](std::byte* p, std::size_t off, std::size_t n) { std::memcpy(out.data() + off, p, n); }))
            throw std::out_of_range("FakeBus::peek outside memory");
    }
    std::vector<std::byte> peek(std::uint64_t address, std::size_t n) {
        std::vector<std::byte> out(n);
        peek(address, out);
        return out;
    }
    std::uint64_t get(std::uint64_t address, unsigned width) {
        std::array<std::byte, 8> b{};
        peek(address, std::span(b).first(width));
        std::uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(b[i])} << (8 * i);
        return v;
    }
    void put(std::uint64_t address, unsigned width, std::uint64_t value) {
        std::array<std::byte, 8> b{};
        for (unsigned i = 0; i < width; ++i) b[i] = static_cast<std::byte>(value >> (8 * i));
        poke(address, std::span(b).first(width));
    }

    unsigned interrupts(unsigned vector) {
        std::lock_guard lock(mutex_);
        return vector < irq_.size() ? irq_[vector] : 0;
    }

    struct Write {
        std::uint64_t address;
        std::size_t bytes;
    };
    void log_writes(bool on) {
        std::lock_guard lock(mutex_);
        logging_ = on;
        log_.clear();
    }
    std::vector<Write> writes() {
        std::lock_guard lock(mutex_);
        return log_;
    }
    std::uint64_t faults() {
        std::lock_guard lock(mutex_);
        return faults_;
    }

    DmaStatus read(pci::DmaAddress address, std::span<std::byte> out) override {
        std::lock_guard lock(mutex_);
        if (auto s = refused(address.value, out.size())) return *s;
        if (!copy(address.value, out.size(),
                  [&](std::byte* p, std::size_t off, std::size_t n) { std::memcpy(out.data() + off, p, n); })) {
            ++faults_;
            return DmaStatus::UnsupportedRequest;
        }
        return DmaStatus::Ok;
    }
    DmaStatus write(pci::DmaAddress address, std::span<const std::byte> in) override {
        std::lock_guard lock(mutex_);
        if (auto s = refused(address.value, in.size())) return *s;
        if (!copy(address.value, in.size(),
                  [&](std::byte* p, std::size_t off, std::size_t n) { std::memcpy(p, in.data() + off, n); })) {
            ++faults_;
            return DmaStatus::UnsupportedRequest;
        }
        if (logging_) log_.push_back({address.value, in.size()});
        return DmaStatus::Ok;
    }
    void interrupt(unsigned vector) override {
        std::lock_guard lock(mutex_);
        if (vector >= irq_.size()) irq_.resize(vector + 1);
        ++irq_[vector];
    }
    const std::string& bus() const override { return name_; }

private:
    struct Refusal {
        std::uint64_t address, bytes;
        DmaStatus status;
    };
    std::optional<DmaStatus> refused(std::uint64_t a, std::size_t n) {
        for (const auto& r : refused_)
            if (a < r.address + r.bytes && r.address < a + n) {
                ++faults_;
                return r.status;
            }
        return std::nullopt;
    }
    // Calls f(pointer, offset in the access, bytes) for each region piece; false on a gap.
    template <class F>
    bool copy(std::uint64_t a, std::size_t n, F f) {
        // A request that faults moves nothing (device.hpp): look before copying.
        if (!walk(a, n, [](std::byte*, std::size_t, std::size_t) {})) return false;
        return walk(a, n, f);
    }
    template <class F>
    bool walk(std::uint64_t a, std::size_t n, F f) {
        std::size_t done = 0;
        while (done < n) {
            auto it = regions_.upper_bound(a + done);
            if (it == regions_.begin()) return false;
            --it;
            const std::uint64_t off = a + done - it->first;
            if (off >= it->second.size()) return false;
            const std::size_t take = std::min<std::size_t>(n - done, it->second.size() - off);
            f(it->second.data() + off, done, take);
            done += take;
        }
        return true;
    }

    std::mutex mutex_;
    std::uint64_t next_;
    std::string name_;
    std::map<std::uint64_t, std::vector<std::byte>> regions_;
    std::vector<Refusal> refused_;
    std::vector<unsigned> irq_;
    bool logging_ = false;
    std::vector<Write> log_;
    std::uint64_t faults_ = 0;
};

}  // namespace rig::bnxt::sim::test
