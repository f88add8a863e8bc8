// rig/space.hpp: the virtual address space the GPUs of one vendor share
// (seeds/004_0318ac043ebcf50a.txt is the contract).
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
//  - alloc and free take a time bounded independently of what the space holds.
//  - Constructing a Space allocates nothing; the first alloc does.
//  - The range is the holder's from the step that takes it: an exception that ends alloc
//    after that leaves the range to release(holder).
//  - Every operation may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace rig {

class Space;

// A holder holds ranges of spaces. Copies share one holder.
class Holder {
public:
    Holder();
    struct State;

private:
    friend class Space;
    friend class Hold;
    friend std::optional<class Hold> share(const Holder&, const class Hold&);
    friend void release(const Holder&);
    std::shared_ptr<State> state_;
};

// One holder's hold on one range. Copies name the same hold.
class Hold {
public:
    struct State;

private:
    friend class Space;
    friend std::int64_t address(const Hold&);
    friend std::optional<Hold> share(const Holder&, const Hold&);
    friend void free(const Hold&);
    std::shared_ptr<State> state_;
};

class Space {
public:
    // The `bytes` addresses from `base` on, all free. Throws std::invalid_argument if
    // base < 0, bytes < 0 or base + bytes overflows a std::int64_t.
    Space(std::int64_t base, std::int64_t bytes);
    ~Space();
    Space(const Space&) = delete;
    Space& operator=(const Space&) = delete;

    std::int64_t base() const;
    std::int64_t length() const;

    struct State;

private:
    friend std::optional<Hold> alloc(Space&, const Holder&, std::int64_t, std::int64_t);
    std::shared_ptr<State> state_;
};

// holder's hold on n free addresses of space, aligned as above; nullopt where the space
// has no room. Throws std::invalid_argument if n <= 0 or align is not a positive power
// of two.
std::optional<Hold> alloc(Space& space, const Holder& holder, std::int64_t n, std::int64_t align = 4096);

// The first address of the hold's range.
std::int64_t address(const Hold& hold);

// holder's hold on the range of `hold`, which then goes back once neither holds it; or
// nullopt, holding nothing, if `hold` was given back (as by a release of its holder on
// another thread).
std::optional<Hold> share(const Holder& holder, const Hold& hold);

// Gives back the hold: its range goes back with the last hold on it. Freeing it again,
// or after release of its holder, does nothing.
void free(const Hold& hold);

// Gives back every hold of the holder, one at a time, so that a release called again
// after an exception ended one gives back the rest.
void release(const Holder& holder);

}  // namespace rig
