// rig/space.hpp: the virtual address space the GPUs of one vendor share
// (docs/api.md, "Space", is the contract).
//
// An address of a Space means the same memory on every GPU that maps it (and, for system
// memory a GPU allocates, in the process). A Space hands out ranges to holders: the open
// of a GPU holds the ranges its memory lies at, and another GPU that maps that memory at
// the same addresses holds them too. A range goes back once no holder holds it.
//
// Guarantees:
//  - alloc(space, holder, n, align) gives n addresses aligned to a = max(align, the
//    largest power of two not above n), inside [base, base + length), overlapping no
//    range held. It succeeds whenever the space has a free range of
//    2 * (max(n, 16) + a) addresses, and may fail on a smaller one that would fit.
//  - alloc and free take a time bounded independently of what the space holds
//    (segregated fits over power-of-two classes: space/src/fits.hpp).
//  - Constructing a Space allocates nothing; the first alloc does.
//  - The range is the holder's from the step that takes it: an exception that ends alloc
//    after that leaves the range to release(holder).
//  - Every operation may be called from several threads at once.
//
// Lifetimes: holds may outlive the Space object: while a holder holds a range of it, free
// and share keep working (nothing more can be allocated). The last copy of a Holder
// going away gives back every hold it still has, as release does. Any Hold may outlive
// everything else: free, share and address on it stay safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

namespace rig {

class Space;
class Hold;

namespace detail {
struct SpaceState;   // space/src/state.hpp
struct HolderState;  // space/src/state.hpp
struct Block;        // space/src/fits.hpp
struct Faults;       // space/src/state.hpp: test-only fault injection
struct SpaceAccess;  // space/src/testing.cpp
struct Steps;        // space/src/space.cpp

// Lets only rig_space make a Hold that names a range.
class HoldKey {
    HoldKey() = default;
    friend struct Steps;
};
}  // namespace detail

// A holder holds ranges of spaces. Copies share one holder (a moved-from Holder is a
// copy too: a Holder always names a holder).
class Holder {
public:
    Holder();  // holds no range; allocates its bookkeeping
    Holder(const Holder&) = default;
    Holder& operator=(const Holder&) = default;

private:
    friend std::optional<Hold> alloc(Space&, const Holder&, std::int64_t, std::int64_t);
    friend std::optional<Hold> share(const Holder&, const Hold&);
    friend void release(const Holder&);
    friend struct detail::Steps;
    std::shared_ptr<detail::HolderState> state_;
};

// One holder's hold on one range. Copies name the same hold; a Hold is a plain value
// (copying one costs no atomic operation). A default-constructed Hold names no range:
// free does nothing, share gives nullopt, and address throws std::invalid_argument.
class Hold {
public:
    Hold() = default;
    // For rig_space only: no one else can make a HoldKey.
    Hold(detail::HoldKey, detail::SpaceState* space, std::uint64_t life, detail::Block* node, std::uint64_t generation,
         std::int64_t address)
        : space_(space), life_(life), node_(node), generation_(generation), address_(address) {}

private:
    friend std::optional<Hold> alloc(Space&, const Holder&, std::int64_t, std::int64_t);
    friend std::int64_t address(const Hold&);
    friend std::optional<Hold> share(const Holder&, const Hold&);
    friend void free(const Hold&);
    // The space's state, which outlives every Hold (space/src/state.hpp), and which of
    // its lives and which of its nodes this hold is: a stale Hold fails these checks.
    detail::SpaceState* space_ = nullptr;  // null: names no range
    std::uint64_t life_ = 0;
    detail::Block* node_ = nullptr;
    std::uint64_t generation_ = 0;
    std::int64_t address_ = 0;
};

class Space {
public:
    // The `bytes` addresses from `base` on, all free. Throws std::invalid_argument if
    // base < 0, bytes < 0 or base + bytes overflows a std::int64_t.
    Space(std::int64_t base, std::int64_t bytes);
    ~Space();
    Space(const Space&) = delete;
    Space& operator=(const Space&) = delete;

    std::int64_t base() const { return base_; }
    std::int64_t length() const { return bytes_; }

private:
    friend std::optional<Hold> alloc(Space&, const Holder&, std::int64_t, std::int64_t);
    friend struct detail::SpaceAccess;
    friend struct detail::Steps;
    Space(std::int64_t base, std::int64_t bytes, std::shared_ptr<detail::Faults> faults);
    // The state, made by the first call (which may throw std::bad_alloc).
    detail::SpaceState& state();
    detail::SpaceState& make_state();

    std::int64_t base_;
    std::int64_t bytes_;
    std::shared_ptr<detail::Faults> faults_;  // null outside tests
    std::mutex creating_;
    std::uint64_t life_ = 0;                               // the state's life, set before published_
    std::atomic<detail::SpaceState*> published_{nullptr};  // the state once made; this Space owns it
};

// holder's hold on n free addresses of space, aligned as above; nullopt where the space
// has no room. Throws std::invalid_argument if n <= 0 or align is not a positive power
// of two; may throw std::bad_alloc, holding nothing, before it takes a range.
std::optional<Hold> alloc(Space& space, const Holder& holder, std::int64_t n, std::int64_t align = 4096);

// The first address of the hold's range (also after the hold was given back). Throws
// std::invalid_argument for a Hold that names no range.
std::int64_t address(const Hold& hold);

// holder's hold on the range of `hold`, which then goes back once neither holds it; or
// nullopt, holding nothing, if `hold` was given back (as by a release of its holder on
// another thread). May throw std::bad_alloc, holding nothing.
std::optional<Hold> share(const Holder& holder, const Hold& hold);

// Gives back the hold: its range goes back with the last hold on it. Freeing it again,
// or after release of its holder, does nothing.
void free(const Hold& hold);

// Gives back every hold of the holder, one at a time, so that a release called again
// after an exception ended one gives back the rest.
void release(const Holder& holder);

}  // namespace rig
