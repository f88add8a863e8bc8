// rig/sim/dma_engine.hpp: two small device models for tests and examples of the
// simulator: a DMA engine, and a device whose BAR is plain memory (as a GPU's is).
//
// DmaEngine copies `length` bytes from one bus address to another when told to, through
// its Port, on a thread of its own (Threading::Own) or at once on the thread that writes
// `go` (Threading::Caller, for tests that step it by hand). Its interface, BAR0 (16 KiB,
// 64-bit, registers; 32-bit accesses unless noted):
//   0x00 id           reads 0x52494730 ("RIG0")
//   0x08 source       64 bits (or two 32-bit halves): the bus address to read
//   0x10 destination  64 bits: the bus address to write
//   0x18 length       bytes to copy, at most 1 MiB
//   0x1c go           write 1: start a copy (ignored while one runs)
//   0x20 status       Status below; Done or a fault once a copy ends
//   0x24 vector       the MSI-X vector raised when a copy ends; 0xffffffff: none
//   0x28 copies       copies that ended, faulted or not
// It has 4 MSI-X vectors; the simulator places their table in BAR0's last page, which
// the engine does not decode. An access it does not decode reads all ones and is dropped.
// A Function Level Reset waits for a copy in flight to end, then clears every register.
//
// MemoryDevice: BAR0 of `bytes` (64-bit, prefetchable) is memory, zeroed at power-on and
// reset; BAR2 (4 KiB, 64-bit) has registers: 0x0 reads 0x4d454d30 ("MEM0"), 0x8 is a
// 64-bit scratch register.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "rig/sim/device.hpp"

namespace rig::sim {

class DmaEngine final : public Device {
public:
    static constexpr std::uint64_t id = 0x00;
    static constexpr std::uint64_t source = 0x08;
    static constexpr std::uint64_t destination = 0x10;
    static constexpr std::uint64_t length = 0x18;
    static constexpr std::uint64_t go = 0x1c;
    static constexpr std::uint64_t status = 0x20;
    static constexpr std::uint64_t vector = 0x24;
    static constexpr std::uint64_t copies = 0x28;
    static constexpr std::uint32_t id_value = 0x5249'4730;
    static constexpr std::uint32_t max_length = 1 << 20;
    static constexpr std::uint32_t no_vector = 0xffff'ffff;

    enum class Status : std::uint32_t {
        Idle = 0,
        Busy = 1,
        Done = 2,
        ReadUnsupported = 3,   // the read of the source got an Unsupported Request
        ReadAbort = 4,         // ... a Completer Abort
        WriteUnsupported = 5,  // the write of the destination got an Unsupported Request
        WriteAbort = 6,
        TooLong = 7,  // length above max_length
    };
    enum class Threading { Own, Caller };

    explicit DmaEngine(Threading threading = Threading::Own, std::uint16_t device_id = 0x5249);
    ~DmaEngine() override;

    Identity identity() const override;
    void attach(Port& port) override;
    void detach() override;
    std::uint64_t read(unsigned bar, std::uint64_t offset, unsigned width) override;
    void write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) override;
    std::span<std::byte> memory(unsigned) override { return {}; }
    void reset() override;

    // For tests: how many register accesses the engine has decoded.
    std::uint64_t accesses() const;

private:
    void run();                                     // the engine's thread
    void copy(std::unique_lock<std::mutex>& lock);  // one copy; the lock is released while it moves bytes

    Threading threading_;
    std::uint16_t device_id_;
    Port* port_ = nullptr;
    mutable std::mutex mutex_;
    std::condition_variable wake_;  // go, or detach
    std::condition_variable idle_;  // a copy ended
    std::uint64_t source_ = 0, destination_ = 0;
    std::uint32_t length_ = 0, vector_ = no_vector, copies_ = 0;
    Status status_ = Status::Idle;
    bool started_ = false, stopping_ = false;
    std::uint64_t accesses_ = 0;
    std::thread thread_;
};

class MemoryDevice final : public Device {
public:
    static constexpr std::uint32_t id_value = 0x4d45'4d30;

    explicit MemoryDevice(std::uint64_t bytes = 1 << 20, std::uint16_t device_id = 0x4d45);

    Identity identity() const override;
    void attach(Port&) override {}
    void detach() override {}
    std::uint64_t read(unsigned bar, std::uint64_t offset, unsigned width) override;
    void write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) override;
    std::span<std::byte> memory(unsigned bar) override;
    void reset() override;

private:
    struct Free {
        void operator()(std::byte* p) const;
    };
    std::uint64_t bytes_;
    std::uint16_t device_id_;
    std::unique_ptr<std::byte[], Free> memory_;
    std::mutex mutex_;
    std::uint64_t scratch_ = 0;
};

}  // namespace rig::sim
