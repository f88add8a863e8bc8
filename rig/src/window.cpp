// Window accesses (rig/pci/window.hpp): one volatile load or store of the access's
// width where the process maps the range, the transport otherwise. Bounds and alignment
// are checked on every access: a caller bug, thrown before the bus sees it.
#include "rig/pci/window.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "rig/text.hpp"

namespace rig::pci {
namespace {

template <class T>
T load(const std::byte* p) {
    return *reinterpret_cast<const volatile T*>(p);
}

template <class T>
void store(std::byte* p, T value) {
    *reinterpret_cast<volatile T*>(p) = value;
}

template <class T>
T load_ordered(std::byte* p, std::memory_order order) {
    return std::atomic_ref<T>(*reinterpret_cast<T*>(p)).load(order);
}

template <class T>
void store_ordered(std::byte* p, T value, std::memory_order order) {
    std::atomic_ref<T>(*reinterpret_cast<T*>(p)).store(value, order);
}

}  // namespace

Window Window::mapped(std::byte* base, std::uint64_t bytes) {
    if (base == nullptr && bytes != 0)
        throw std::invalid_argument("Window::mapped: null base for " + text::bytes(bytes));
    Window w;
    w.base_ = base;
    w.bytes_ = bytes;
    return w;
}

Window Window::remote(std::shared_ptr<Transport> transport, std::uint64_t address, std::uint64_t bytes) {
    if (!transport) throw std::invalid_argument("Window::remote: no transport");
    Window w;
    w.transport_ = std::move(transport);
    w.address_ = address;
    w.bytes_ = bytes;
    return w;
}

// The message of a refused access, built only on the way to the throw.
[[noreturn, gnu::cold, gnu::noinline]] static void refuse_access(std::uint64_t offset, std::uint64_t bytes,
                                                                 unsigned align, std::uint64_t window_bytes) {
    if (offset > window_bytes || bytes > window_bytes - offset)
        throw std::invalid_argument("window access of " + text::bytes(bytes) + " at offset " + text::hex(offset) +
                                    " is outside the window of " + text::bytes(window_bytes));
    throw std::invalid_argument("window access of " + std::to_string(align) + " bytes at offset " + text::hex(offset) +
                                " is not aligned to its width");
}

// Inline in every access (the hot paths of drivers run through here): compares only,
// the message out of line. `align` is a power of two.
[[gnu::always_inline]] inline void Window::check(std::uint64_t offset, std::uint64_t bytes, unsigned align) const {
    if (offset > bytes_ || bytes > bytes_ - offset || (offset & (align - 1)) != 0) [[unlikely]]
        refuse_access(offset, bytes, align, bytes_);
}

template <class T>
T Window::read_width(std::uint64_t offset) const {
    check(offset, sizeof(T), sizeof(T));
    if (base_) return load<T>(base_ + offset);
    return static_cast<T>(transport_->read(address_ + offset, sizeof(T)));
}

template <class T>
void Window::write_width(std::uint64_t offset, T value) const {
    check(offset, sizeof(T), sizeof(T));
    if (base_) return store<T>(base_ + offset, value);
    transport_->write(address_ + offset, sizeof(T), value);
}

std::uint8_t Window::read8(std::uint64_t offset) const { return read_width<std::uint8_t>(offset); }
std::uint16_t Window::read16(std::uint64_t offset) const { return read_width<std::uint16_t>(offset); }
std::uint32_t Window::read32(std::uint64_t offset) const { return read_width<std::uint32_t>(offset); }
std::uint64_t Window::read64(std::uint64_t offset) const { return read_width<std::uint64_t>(offset); }
void Window::write8(std::uint64_t offset, std::uint8_t value) const { write_width(offset, value); }
void Window::write16(std::uint64_t offset, std::uint16_t value) const { write_width(offset, value); }
void Window::write32(std::uint64_t offset, std::uint32_t value) const { write_width(offset, value); }
void Window::write64(std::uint64_t offset, std::uint64_t value) const { write_width(offset, value); }

std::uint8_t Window::read8(std::uint64_t offset, std::memory_order order) const {
    check(offset, 1, 1);
    if (base_) return load_ordered<std::uint8_t>(base_ + offset, order);
    return static_cast<std::uint8_t>(transport_->read(address_ + offset, 1));
}

std::uint32_t Window::read32(std::uint64_t offset, std::memory_order order) const {
    check(offset, 4, 4);
    if (base_) return load_ordered<std::uint32_t>(base_ + offset, order);
    return static_cast<std::uint32_t>(transport_->read(address_ + offset, 4));
}

void Window::write8(std::uint64_t offset, std::uint8_t value, std::memory_order order) const {
    check(offset, 1, 1);
    if (base_) return store_ordered<std::uint8_t>(base_ + offset, value, order);
    transport_->write(address_ + offset, 1, value);
}

void Window::write32(std::uint64_t offset, std::uint32_t value, std::memory_order order) const {
    check(offset, 4, 4);
    if (base_) return store_ordered<std::uint32_t>(base_ + offset, value, order);
    transport_->write(address_ + offset, 4, value);
}

void Window::read(std::uint64_t offset, std::span<std::byte> out) const {
    check(offset, out.size(), 1);
    if (out.empty()) return;
    if (base_) {
        std::memcpy(out.data(), base_ + offset, out.size());
        return;
    }
    transport_->read(address_ + offset, out);
}

void Window::write(std::uint64_t offset, std::span<const std::byte> in) const {
    check(offset, in.size(), 1);
    if (in.empty()) return;
    if (base_) {
        std::memcpy(base_ + offset, in.data(), in.size());
        return;
    }
    transport_->write(address_ + offset, in);
}

Window Window::sub(std::uint64_t offset, std::uint64_t bytes) const {
    check(offset, bytes, 1);
    Window w = *this;
    if (base_) w.base_ = base_ + offset;
    else w.address_ = address_ + offset;
    w.bytes_ = bytes;
    return w;
}

std::optional<std::string> Window::failed() const {
    if (transport_) return transport_->failed();
    return std::nullopt;
}

}  // namespace rig::pci
