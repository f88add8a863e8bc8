// rig/pci/window.hpp: a window onto a range of a machine's addresses: a BAR, or DMA memory.
//
// Only a Window touches device registers (docs/design.md): drivers hold no raw BAR
// pointer. A window is one of two kinds, and a driver never learns which:
//  - mapped: the range is mapped into this process; an access of 1, 2, 4 or 8 bytes is
//    one volatile load or store of that width (a doorbell is one 8-byte store, docs/hsi.md
//    §5.8.1), and a span is copied with memcpy;
//  - remote: each access goes through the machine's Transport (a simulated machine calls
//    the device model; a network transport sends it to another machine).
// Once the transport has failed, reads give all ones and writes are dropped, as a PCI
// Express device that fell off the bus behaves; failed() says why.
//
// A Window is a view: copying one copies the view, not the memory. The Function that
// mapped it owns the mapping and gives it back on unmap, free_dma or release; an access
// after that is a caller bug the window cannot always detect (a mapped one would fault).
// Thread safety: accesses from several threads are as safe as the hardware makes them;
// the view itself is immutable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace rig::pci {

// The accesses to a machine's addresses that a remote window makes. A transport gives
// each window an address range of its own choosing; offsets are added to its base.
// Every access is of 1, 2, 4 or 8 bytes at an address aligned to its width, or a span.
// After the transport failed, read gives all ones and write does nothing.
// Implementations must be safe to call from several threads at once.
class Transport {
public:
    virtual ~Transport() = default;
    virtual std::uint64_t read(std::uint64_t address, unsigned width) = 0;
    virtual void write(std::uint64_t address, unsigned width, std::uint64_t value) = 0;
    virtual void read(std::uint64_t address, std::span<std::byte> out) = 0;
    virtual void write(std::uint64_t address, std::span<const std::byte> in) = 0;
    // Why the machine can no longer be reached, once it cannot; it stays failed.
    virtual std::optional<std::string> failed() const = 0;
};

class Window {
public:
    Window() = default;  // an empty window: size 0, every access out of bounds

    // A window onto `bytes` bytes of this process mapped at `base`.
    static Window mapped(std::byte* base, std::uint64_t bytes);
    // A window onto `bytes` bytes at `address` of a transport's machine.
    static Window remote(std::shared_ptr<Transport> transport, std::uint64_t address, std::uint64_t bytes);

    std::uint64_t size() const { return bytes_; }
    bool is_mapped() const { return base_ != nullptr; }
    // The process address of byte 0 where the window is mapped, else nullptr.
    std::byte* data() const { return base_; }
    // The transport's address of byte 0 of a remote window (0 for a mapped one).
    std::uint64_t address() const { return address_; }

    // Accesses at a byte offset. Each throws std::invalid_argument (naming the offset
    // and the window's size) if the bytes do not lie in the window or, for 2/4/8 bytes,
    // the offset is not aligned to the width.
    std::uint8_t read8(std::uint64_t offset) const;
    std::uint16_t read16(std::uint64_t offset) const;
    std::uint32_t read32(std::uint64_t offset) const;
    std::uint64_t read64(std::uint64_t offset) const;
    void write8(std::uint64_t offset, std::uint8_t value) const;
    void write16(std::uint64_t offset, std::uint16_t value) const;
    void write32(std::uint64_t offset, std::uint32_t value) const;
    void write64(std::uint64_t offset, std::uint64_t value) const;
    void read(std::uint64_t offset, std::span<std::byte> out) const;
    void write(std::uint64_t offset, std::span<const std::byte> in) const;

    // Ordered accesses for DMA memory shared with a device: the valid or phase byte of a
    // ring entry is read with std::memory_order_acquire before the rest of the entry
    // (docs/design.md, "Rings keep one order"). On a mapped window they are atomic
    // (std::atomic_ref), so that ThreadSanitizer sees a device model's release store; on
    // a remote window the transport orders them.
    std::uint8_t read8(std::uint64_t offset, std::memory_order order) const;
    std::uint32_t read32(std::uint64_t offset, std::memory_order order) const;
    void write8(std::uint64_t offset, std::uint8_t value, std::memory_order order) const;
    void write32(std::uint64_t offset, std::uint32_t value, std::memory_order order) const;

    // The same memory as this window, from byte `offset` on, `bytes` long.
    // Throws std::invalid_argument if that range does not lie in the window.
    Window sub(std::uint64_t offset, std::uint64_t bytes) const;

    // Why the machine behind a remote window can no longer be reached; nullopt for a
    // mapped window and while the transport works.
    std::optional<std::string> failed() const;

    // Whether two windows view the same range of the same memory.
    friend bool operator==(const Window& a, const Window& b) {
        return a.base_ == b.base_ && a.address_ == b.address_ && a.bytes_ == b.bytes_ && a.transport_ == b.transport_;
    }

private:
    void check(std::uint64_t offset, std::uint64_t bytes, unsigned align) const;
    template <class T>
    T read_width(std::uint64_t offset) const;
    template <class T>
    void write_width(std::uint64_t offset, T value) const;

    std::byte* base_ = nullptr;
    std::shared_ptr<Transport> transport_;
    std::uint64_t address_ = 0;
    std::uint64_t bytes_ = 0;
};

}  // namespace rig::pci
