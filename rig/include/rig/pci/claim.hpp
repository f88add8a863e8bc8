// rig/pci/claim.hpp: memory a device reaches, held against its owner's free (docs/bugs.md,
// B18).
//
// A driver that registers memory with a device for DMA (a NIC's Region over a GPU's BAR
// runs, or over pages of the process) claims it for as long as the device may reach it;
// the memory's owner (a GPU driver) asks before it gives the memory back, and refuses to
// while a claim covers any of it. Without this, freed GPU memory handed out again at the
// same address is written by a receive into the old region, and the receive completes
// OK. As the kernel keeps a page a device holds (a pin's page reference, a p2pdma page's
// reference on its provider's pgmap), memory whose last handle goes while it is claimed
// is kept (Claims::keep) until the last claim over it goes.
//
// Two address spaces hold claims: the bus addresses of one machine (Machine::claims(),
// shared by every copy of the Machine, Machine::local() included), and the process's
// own addresses (process_claims()), which are one space whichever machine's device
// pinned them.
//
// Thread safety: every member may be called from several threads at once. A kept
// object is destroyed on the thread that drops the last claim over it, with no lock of
// Claims held.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rig::pci {

class Claims;

// Bytes [first, first + bytes) of one of the two address spaces (a bus address or a
// process address, as the Claims it is asked of says).
struct Span {
    std::uint64_t first = 0;
    std::uint64_t bytes = 0;
    friend bool operator==(const Span&, const Span&) = default;
};

// Who holds a claim, in words ("the device region of 64 KiB of NIC 0000:03:00.0"), and
// the part of the claim's spans that overlaps what was asked about.
struct Claimant {
    std::string by;
    Span span;
};

// One claim, given up by its destructor or drop(). Move-only; a default Claim holds
// nothing.
class Claim {
public:
    Claim() = default;
    Claim(Claim&& other) noexcept;
    Claim& operator=(Claim&& other) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { drop(); }
    void drop();
    explicit operator bool() const { return claims_ != nullptr; }

private:
    friend class Claims;
    Claim(std::shared_ptr<Claims> claims, std::uint64_t id) : claims_(std::move(claims)), id_(id) {}
    std::shared_ptr<Claims> claims_;
    std::uint64_t id_ = 0;
};

class Claims : public std::enable_shared_from_this<Claims> {
public:
    // Claims `spans` for `by` until the returned Claim goes. Spans of 0 bytes are left out.
    Claim claim(std::span<const Span> spans, std::string by);
    // The first claim (oldest first) over any byte of `span`, or nullopt.
    std::optional<Claimant> claimed(Span span) const;
    // Keeps `object` alive while a claim covers any byte of `spans`, then lets it go;
    // lets it go at once where none does.
    void keep(std::span<const Span> spans, std::shared_ptr<void> object);
    // How many objects keep holds now.
    std::size_t kept() const;

private:
    friend class Claim;
    struct Entry {
        std::uint64_t id;
        std::vector<Span> spans;
        std::string by;
    };
    struct Kept {
        std::vector<Span> spans;
        std::shared_ptr<void> object;
    };
    void drop(std::uint64_t id);
    bool covered_locked(std::span<const Span> spans) const;

    mutable std::mutex mutex_;
    std::uint64_t next_ = 1;
    std::vector<Entry> entries_;
    std::vector<Kept> kept_;
};

// The claims on the process's own addresses.
Claims& process_claims();

}  // namespace rig::pci
