// space/src/space.cpp: rig::Space, its holders and holds (rig/space.hpp), on the books of
// state.hpp and the allocation rule of fits.hpp.
//
// Steps, each under the space's lock once (state.hpp):
//  - alloc: find the holder's membership (made on first use), make sure the pool has the
//    nodes a take may need (allocating outside the lock), then in one step take the range
//    and link its block, which is also its first hold (fits.hpp), into the holder's ring.
//    The range is the holder's from that step on; an exception after it (the test's
//    `took` fault) leaves it to release.
//  - share: the same, except the step checks that the shared hold is still live and links
//    a share node holding its range instead of taking one.
//  - free: if the hold is live, unlink it, bump its node's generation (making every copy
//    of the Hold stale), and give the range back to the fits once its last hold goes.
//  - release: one hold per step, each under the lock anew, so an exception between two
//    steps (the `gave_back` fault) leaves the rest for the next release.
// Cost: an alloc and a free are two lock exchanges and the work between them. A locked
// exchange costs about 6 ns on the 2-core build machine however little it guards (12 of
// the ~21 ns an alloc + free takes in bench_space), and first waits for every earlier
// store to drain; so the hot paths keep their stores few, above all stores to other
// cache lines: a range's first hold is its block, the pool keeps no count, a free block
// keeps its node and its list while it stays in its class (fits.hpp), and the returned
// Hold is made in place (built in a local and copied out, it cost a store-forwarding
// stall per alloc: 43 ns against 27). alloc and free are fast paths of loads, checks and
// the step, which GCC compiles with no calls and little stack; everything rare (a first
// use, a lock held elsewhere, a pool to grow, a test's faults, an uncommon carve) is out
// of line in Steps, so it costs the fast path nothing.
#include "rig/space.hpp"

#include "rig/text.hpp"
#include "state.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace rig {

using detail::Block;
using detail::Blocks;
using detail::Books;
using detail::Fits;
using detail::Membership;
using detail::SpaceState;
using testing::SpaceStep;

namespace {

// Under the space's lock: unlinks a live hold (a held block's first hold, or a share:
// fits.hpp) from its holder's ring, makes every Hold naming it stale, and gives its range
// back with the last hold on it.
[[gnu::always_inline]] inline void give_back(Books& books, Block* hold) {
    hold->prev->next = hold->next;
    hold->next->prev = hold->prev;
    ++hold->generation;
    Block* range = hold;
    if (hold->bytes == 0) {  // a share
        range = hold->after;
        books.fits.blocks().give_back(hold);
    }
    if (range->holds == 1) books.fits.give_back(range);
    else --range->holds;
}

// Under the space's lock: links a hold into a holder's ring.
[[gnu::always_inline]] inline void link(Membership& membership, Block* hold) {
    hold->prev = &membership.holds;
    hold->next = membership.holds.next;
    membership.holds.next->prev = hold;
    membership.holds.next = hold;
}

// Under the space's lock: free's step, for the hold (life, node, generation).
[[gnu::always_inline]] inline void give_back_if_live(SpaceState& state, std::uint64_t life, Block* node,
                                                     std::uint64_t generation) {
    if (state.life == life && node->generation == generation) give_back(*state.books, node);
}

// Called with `lock` held, returns with it held and `nodes` nodes in the pool. A chunk is
// made with the lock let go; if that throws, the lock is not held and nothing has changed.
// The caller owns the space, so its books stay meanwhile.
[[gnu::noinline, gnu::cold]] void grow(detail::SpinLock& lock, Books& books, std::size_t nodes) {
    do {
        lock.unlock();
        auto chunk = books.make<Blocks::Chunk>();
        lock.lock();
        books.fits.blocks().add(std::move(chunk));
    } while (!books.fits.blocks().has(nodes));
}

// One hold of the membership given back, under the lock; false if it had none.
bool give_back_one(Membership& membership) {
    std::lock_guard lock(membership.space->lock);
    if (membership.holds.next == &membership.holds) return false;
    give_back(*membership.space->books, membership.holds.next);
    return true;
}

// alloc's std::invalid_argument, out of the hot path.
[[noreturn, gnu::cold, gnu::noinline]] void reject(std::int64_t n, std::int64_t align) {
    if (n <= 0)
        throw std::invalid_argument("rig::alloc: " + std::to_string(n) +
                                    " addresses asked; the count must be positive");
    throw std::invalid_argument("rig::alloc: alignment " + std::to_string(align) + " is not a positive power of two");
}

// The shells of dead spaces, for later spaces (state.hpp). Constant-initialized and
// trivially destructible, so it is there for every Space and Hold, static ones included.
class ShellCache {
public:
    SpaceState* take() {
        std::lock_guard lock(lock_);
        SpaceState* shell = cached_;
        if (shell != nullptr) cached_ = shell->next_cached;
        return shell;
    }
    void put(SpaceState* shell) {
        std::lock_guard lock(lock_);
        shell->next_cached = cached_;
        cached_ = shell;
    }

private:
    detail::SpinLock lock_;
    SpaceState* cached_ = nullptr;
};

constinit ShellCache shell_cache;

}  // namespace

namespace detail {

struct Steps {
    static HoldKey key() { return {}; }

    // The end of alloc, with the lock held and `range` just taken: the step links it into
    // the membership's ring (its block is its first hold), so that from here on it is the
    // holder's; then the lock goes and the hold is named.
    [[gnu::always_inline]] static std::optional<Hold> hold(SpaceState& state, std::uint64_t life,
                                                           Membership& membership, Block* range) {
        link(membership, range);
        const std::uint64_t generation = range->generation;
        const auto address = static_cast<std::int64_t>(range->start);
        state.lock.unlock();
        return std::optional<Hold>(std::in_place, key(), &state, life, range, generation, address);
    }

    // alloc after its fast path (there): also makes the space's state and the holder's
    // membership on first use, waits for the lock, grows the pool and calls the test's
    // faults.
    [[gnu::noinline]] static std::optional<Hold> alloc(Space& space, const Holder& holder, std::uint64_t bytes,
                                                       std::uint64_t aligned_to) {
        SpaceState& state = space.state();
        Membership* membership = holder.state_->in(state, space.life_);  // not null: the Space owns the state
        Books& books = *state.books;
        // The lock by hand: nothing between lock and unlock throws but grow, which returns
        // without the lock when it throws.
        state.lock.lock();
        if (!books.fits.blocks().has(Fits::spare_blocks)) grow(state.lock, books, Fits::spare_blocks);
        std::optional<Hold> made = take(state, *membership, bytes, aligned_to);
        if (made) books.at(SpaceStep::took);
        return made;
    }

    // alloc's fast path, with the lock held, for a pool to grow first.
    [[gnu::noinline]] static std::optional<Hold> alloc_growing(SpaceState& state, Membership& membership,
                                                               std::uint64_t bytes, std::uint64_t aligned_to) {
        grow(state.lock, *state.books, Fits::spare_blocks);
        return take(state, membership, bytes, aligned_to);
    }

    // With the lock held and the pool's spare nodes there: takes a range and holds it, or
    // lets the lock go and gives nothing.
    static std::optional<Hold> take(SpaceState& state, Membership& membership, std::uint64_t bytes,
                                    std::uint64_t aligned_to) {
        Block* range = state.books->fits.take(bytes, aligned_to);
        if (range == nullptr) {
            state.lock.unlock();
            return std::nullopt;
        }
        return hold(state, state.life, membership, range);
    }

    // alloc's fast path for a block that does not split low (fits.hpp), out of line.
    [[gnu::noinline]] static std::optional<Hold> alloc_carving(SpaceState& state, Membership& membership, Block* block,
                                                               std::uint64_t bytes, std::uint64_t aligned_to) {
        return hold(state, state.life, membership, state.books->fits.carve(block, bytes, aligned_to));
    }

    // free of a hold whose space's lock another thread holds.
    [[gnu::noinline]] static void free(SpaceState& state, std::uint64_t life, Block* node, std::uint64_t generation) {
        std::lock_guard lock(state.lock);
        give_back_if_live(state, life, node, generation);
    }
};

Books::Books(std::uint64_t base, std::uint64_t bytes, std::shared_ptr<Faults> test_faults)
    : faults(std::move(test_faults)), fits(base, bytes, make<Blocks::Chunk>()) {}

std::pair<SpaceState*, std::uint64_t> make_space_state(std::uint64_t base, std::uint64_t bytes,
                                                       const std::shared_ptr<Faults>& faults) {
    SpaceState* shell = shell_cache.take();
    if (shell == nullptr) {
        if (faults) faults->at(SpaceStep::allocate);
        shell = new SpaceState;  // never deleted: cached when its space dies
    }
    try {
        std::lock_guard lock(shell->lock);
        shell->books.emplace(base, bytes, faults);
        shell->owners = 1;
        return {shell, shell->life};
    } catch (...) {
        shell_cache.put(shell);
        throw;
    }
}

void drop_owner(SpaceState& space) {
    {
        std::lock_guard lock(space.lock);
        if (--space.owners > 0) return;
        ++space.life;
        space.books.reset();  // only stale Holds can be waiting for this lock
    }
    shell_cache.put(&space);
}

HolderState::~HolderState() {
    Membership* membership = memberships.load(std::memory_order_acquire);
    while (membership != nullptr) {
        while (give_back_one(*membership)) {}
        drop_owner(*membership->space);
        delete std::exchange(membership, membership->next);
    }
}

Membership* HolderState::join(SpaceState& space, std::uint64_t life) {
    std::lock_guard adding_lock(adding);
    Membership* newest = memberships.load(std::memory_order_relaxed);
    for (Membership* m = newest; m != nullptr; m = m->next)
        if (m->space == &space) return m;
    std::shared_ptr<Faults> faults;
    {
        std::lock_guard lock(space.lock);
        if (space.life != life) return nullptr;
        faults = space.books->faults;
    }
    if (faults) faults->at(SpaceStep::allocate);
    auto fresh = std::make_unique<Membership>(space);
    {
        std::lock_guard lock(space.lock);
        if (space.life != life) return nullptr;
        ++space.owners;
    }
    fresh->next = newest;
    memberships.store(fresh.get(), std::memory_order_release);
    return fresh.release();
}

}  // namespace detail

Holder::Holder() : state_(std::make_shared<detail::HolderState>()) {}

Space::Space(std::int64_t base, std::int64_t bytes) : Space(base, bytes, nullptr) {}

Space::Space(std::int64_t base, std::int64_t bytes, std::shared_ptr<detail::Faults> faults)
    : base_(base), bytes_(bytes), faults_(std::move(faults)) {
    if (base < 0) throw std::invalid_argument("rig::Space: base " + std::to_string(base) + " is negative");
    if (bytes < 0) throw std::invalid_argument("rig::Space: length " + std::to_string(bytes) + " is negative");
    if (bytes > std::numeric_limits<std::int64_t>::max() - base)
        throw std::invalid_argument("rig::Space: base " + text::hex(static_cast<std::uint64_t>(base)) + " + length " +
                                    text::hex(static_cast<std::uint64_t>(bytes)) +
                                    " overflows a 64-bit signed address");
}

Space::~Space() {
    if (SpaceState* state = detail::untagged(published_.load(std::memory_order_acquire))) detail::drop_owner(*state);
}

inline SpaceState& Space::state() {
    if (SpaceState* made = published_.load(std::memory_order_acquire)) [[likely]]
        return *detail::untagged(made);
    return make_state();
}

[[gnu::noinline]] SpaceState& Space::make_state() {
    std::lock_guard lock(creating_);
    if (SpaceState* made = published_.load(std::memory_order_relaxed)) return *detail::untagged(made);
    if (faults_) faults_->at(SpaceStep::allocate);
    const auto [shell, life] =
        detail::make_space_state(static_cast<std::uint64_t>(base_), static_cast<std::uint64_t>(bytes_), faults_);
    life_ = life;
    published_.store(faults_ ? detail::tagged(shell) : shell, std::memory_order_release);
    return *shell;
}

std::optional<Hold> alloc(Space& space, const Holder& holder, std::int64_t n, std::int64_t align) {
    const auto align_bits = static_cast<std::uint64_t>(align);
    if (n <= 0 || align <= 0 || (align_bits & (align_bits - 1)) != 0) [[unlikely]]
        reject(n, align);
    if (n > space.length()) return std::nullopt;
    const auto bytes = static_cast<std::uint64_t>(n);
    const std::uint64_t aligned_to = std::max(align_bits, std::bit_floor(bytes));
    // The fast path (see Cost): loads and checks, then the step. A space's first alloc, a
    // holder's first in it, a test's faults (a space with faults publishes its state
    // tagged, which no membership names: state.hpp) or a lock held elsewhere go to
    // Steps::alloc, which starts over (nothing has been done by then); a pool to grow or
    // an uncommon carve, to the Steps that go on from there.
    SpaceState* state = space.published_.load(std::memory_order_acquire);
    Membership* membership = nullptr;
    if (state != nullptr) membership = holder.state_->member(state);
    if (membership == nullptr || !state->lock.try_lock()) [[unlikely]]
        return detail::Steps::alloc(space, holder, bytes, aligned_to);
    Books& books = *state->books;
    Block* block = books.fits.find(bytes, aligned_to);
    if (block == nullptr) [[unlikely]] {
        state->lock.unlock();
        return std::nullopt;
    }
    if (!books.fits.blocks().has(Fits::spare_blocks)) [[unlikely]]
        return detail::Steps::alloc_growing(*state, *membership, bytes, aligned_to);
    if (!Fits::splits_low(*block, bytes, aligned_to)) [[unlikely]]
        return detail::Steps::alloc_carving(*state, *membership, block, bytes, aligned_to);
    return detail::Steps::hold(*state, state->life, *membership, books.fits.split_low(block, bytes));
}

std::int64_t address(const Hold& hold) {
    if (hold.space_ == nullptr)
        throw std::invalid_argument("rig::address: the Hold names no range (default-constructed)");
    return hold.address_;
}

std::optional<Hold> share(const Holder& holder, const Hold& hold) {
    if (hold.space_ == nullptr) return std::nullopt;
    SpaceState& state = *hold.space_;
    Membership* membership = holder.state_->in(state, hold.life_);
    if (membership == nullptr) return std::nullopt;  // the space died
    state.lock.lock();                               // by hand, as in alloc
    if (state.life != hold.life_) {
        state.lock.unlock();
        return std::nullopt;
    }
    Books& books = *state.books;  // stays: the membership owns the space
    if (!books.fits.blocks().has(1)) grow(state.lock, books, 1);
    if (hold.node_->generation != hold.generation_) {
        state.lock.unlock();
        return std::nullopt;
    }
    Block* share = books.fits.blocks().take();
    share->bytes = 0;
    share->after = hold.node_->bytes == 0 ? hold.node_->after : hold.node_;
    ++share->after->holds;
    link(*membership, share);  // the step
    const std::uint64_t generation = share->generation;
    state.lock.unlock();
    books.at(SpaceStep::took);
    return std::optional<Hold>(std::in_place, detail::Steps::key(), &state, hold.life_, share, generation,
                               hold.address_);
}

void free(const Hold& hold) {
    SpaceState* state = hold.space_;
    if (state == nullptr) return;
    // Waiting for the lock is out of line, so the fast path keeps its values in registers
    // and stores nothing on the stack (see Cost).
    if (!state->lock.try_lock()) [[unlikely]]
        return detail::Steps::free(*state, hold.life_, hold.node_, hold.generation_);
    give_back_if_live(*state, hold.life_, hold.node_, hold.generation_);
    state->lock.unlock();
}

void release(const Holder& holder) {
    for (Membership* m = holder.state_->memberships.load(std::memory_order_acquire); m != nullptr; m = m->next)
        while (give_back_one(*m)) m->space->books->at(SpaceStep::gave_back);
}

}  // namespace rig
