// space/src/space.cpp: rig::Space, its holders and holds (rig/space.hpp), on the books of
// state.hpp and the allocation rule of fits.cpp.
//
// Steps, each under the space's lock once (state.hpp):
//  - alloc: find the holder's membership (made on first use), make sure the pool has the
//    nodes a take may need (allocating outside the lock), then in one step take the range
//    and link its block, which is also its first hold (fits.hpp), into the holder's ring. The range is the holder's from
//    that step on; an exception after it (the test's `took` fault) leaves it to release.
//  - share: the same, except the step checks that the shared hold is still live and links
//    a share node holding its range instead of taking one.
//  - free: if the hold is live, unlink it, bump its node's generation (making every copy
//    of the Hold stale), and give the range back to the fits once its last hold goes.
//  - release: one hold per step, each under the lock anew, so an exception between two
//    steps (the `gave_back` fault) leaves the rest for the next release.
// Cost: an alloc and a free are two lock exchanges and the work between them. On x86 a
// locked exchange first waits for every earlier store to drain, so the hot path keeps its
// stores few (a range's first hold is its block, the pool keeps no count) and makes the returned Hold in place: built in a
// local and copied out, it cost a store-forwarding stall per alloc (43 ns against 27 ns
// for alloc + free in bench_space on the 2-core build machine).
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
using detail::Books;
using detail::Blocks;
using detail::Fits;
using detail::Membership;
using detail::SpaceState;
using testing::SpaceStep;

namespace {

// Under the space's lock: unlinks a live hold (a held block's first hold, or a share:
// fits.hpp) from its holder's ring, makes every Hold naming it stale, and gives its range
// back with the last hold on it.
void give_back(Books& books, Block* hold) {
    hold->prev->next = hold->next;
    hold->next->prev = hold->prev;
    ++hold->generation;
    Block* range = hold;
    if (hold->bytes == 0) {  // a share
        range = hold->after;
        books.fits.blocks().give_back(hold);
    }
    if (--range->holds == 0) books.fits.give_back(range);
}

// Under the space's lock: links a hold into a holder's ring.
void link(Membership& membership, Block* hold) {
    hold->prev = &membership.holds;
    hold->next = membership.holds.next;
    membership.holds.next->prev = hold;
    membership.holds.next = hold;
}

// Called with `lock` held, returns with it held and `nodes` nodes in the pool. A chunk is
// made with the lock let go; if that throws, the lock is not held and nothing has changed.
// The caller owns the space, so its books stay meanwhile.
[[gnu::noinline]] void grow(detail::SpinLock& lock, Books& books, std::size_t nodes) {
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
        while (give_back_one(*membership)) {
        }
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
                                    text::hex(static_cast<std::uint64_t>(bytes)) + " overflows a 64-bit signed address");
}

Space::~Space() {
    if (SpaceState* state = published_.load(std::memory_order_acquire)) detail::drop_owner(*state);
}

SpaceState& Space::state() {
    if (SpaceState* made = published_.load(std::memory_order_acquire)) return *made;
    return make_state();
}

SpaceState& Space::make_state() {
    std::lock_guard lock(creating_);
    if (SpaceState* made = published_.load(std::memory_order_relaxed)) return *made;
    if (faults_) faults_->at(SpaceStep::allocate);
    const auto [shell, life] =
        detail::make_space_state(static_cast<std::uint64_t>(base_), static_cast<std::uint64_t>(bytes_), faults_);
    life_ = life;
    published_.store(shell, std::memory_order_release);
    return *shell;
}

std::optional<Hold> alloc(Space& space, const Holder& holder, std::int64_t n, std::int64_t align) {
    if (n <= 0) throw std::invalid_argument("rig::alloc: " + std::to_string(n) + " addresses asked; the count must be positive");
    const auto align_bits = static_cast<std::uint64_t>(align);
    if (align <= 0 || (align_bits & (align_bits - 1)) != 0)
        throw std::invalid_argument("rig::alloc: alignment " + std::to_string(align) + " is not a positive power of two");
    if (n > space.length()) return std::nullopt;
    const auto bytes = static_cast<std::uint64_t>(n);
    const std::uint64_t aligned_to = std::max(align_bits, std::bit_floor(bytes));

    SpaceState& state = space.state();
    Membership* membership = holder.state_->in(state, space.life_);  // not null: the Space owns the state
    Books& books = *state.books;
    // The lock by hand: nothing between lock and unlock throws but grow, which returns
    // without the lock when it throws.
    state.lock.lock();
    if (!books.fits.blocks().has(Fits::spare_blocks)) grow(state.lock, books, Fits::spare_blocks);
    Block* range = books.fits.take(bytes, aligned_to);
    if (range == nullptr) {
        state.lock.unlock();
        return std::nullopt;
    }
    link(*membership, range);  // the step: from here on the range is the holder's
    const std::uint64_t generation = range->generation;
    state.lock.unlock();
    books.at(SpaceStep::took);
    // Made in place: see Cost above.
    return std::optional<Hold>(std::in_place, detail::Steps::key(), &state, space.life_, range, generation,
                               static_cast<std::int64_t>(range->start));
}

std::int64_t address(const Hold& hold) {
    if (hold.space_ == nullptr) throw std::invalid_argument("rig::address: the Hold names no range (default-constructed)");
    return hold.address_;
}

std::optional<Hold> share(const Holder& holder, const Hold& hold) {
    if (hold.space_ == nullptr) return std::nullopt;
    SpaceState& state = *hold.space_;
    Membership* membership = holder.state_->in(state, hold.life_);
    if (membership == nullptr) return std::nullopt;  // the space died
    state.lock.lock();  // by hand, as in alloc
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
    if (hold.space_ == nullptr) return;
    SpaceState& state = *hold.space_;
    std::lock_guard lock(state.lock);
    if (state.life == hold.life_ && hold.node_->generation == hold.generation_) give_back(*state.books, hold.node_);
}

void release(const Holder& holder) {
    for (Membership* m = holder.state_->memberships.load(std::memory_order_acquire); m != nullptr; m = m->next)
        while (give_back_one(*m)) m->space->books->at(SpaceStep::gave_back);
}

}  // namespace rig
