// space/src/state.hpp: a space's books and a holder's, and who guards what.
//
// A SpaceState is the shell of a space: its lock, its life and, while it lives, its Books
// (the blocks of fits.hpp, which are also its holds). The first alloc on a Space gives it a shell;
// the shell lives while its owners do (the Space and each holder's Membership in it) and
// then dies: its life number goes up, its Books are freed, and the shell goes to a cache
// for a later space. Shells are never freed, so every Hold can name its shell forever
// and stays a plain value: a Hold is (shell, life, node, generation), and free and share
// check under the shell's lock that the life is the shell's and the generation the
// node's; a Hold of a dead space or a given-back hold fails one or the other. (Linux's
// SLAB_TYPESAFE_BY_RCU caches make objects type-stable the same way.) The shell cache is
// the only process-wide state of rig_space.
//
// The shell's SpinLock guards everything in it: life, owners, the Books, and each
// Membership's ring of holds. So alloc, share and free each take that one lock once.
//
// A HolderState lists its memberships, one per space it ever held a range of, in a list
// that only grows (new ones under its mutex, published with a release store), so alloc
// finds a holder's membership without a lock. Lock order: a holder's mutex, then a
// shell's lock; never the other way round.
#pragma once

#include "fits.hpp"
#include "pool.hpp"
#include "rig/space_testing.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace rig::detail {

// A lock for critical sections of a few dozen instructions: one atomic exchange to take,
// one store to give back (a std::mutex costs twice that here). A waiter spins reading the
// lock (test and test-and-set: its cache line stays shared until the holder gives it
// back), then yields, so a holder descheduled on a busy machine gets the CPU back. The
// wait is out of line, so lock() adds no call, register or stack store to its callers.
class SpinLock {
public:
    void lock() {
        if (!try_lock()) [[unlikely]]
            wait();
    }
    bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
    void unlock() { locked_.store(false, std::memory_order_release); }

private:
    [[gnu::noinline, gnu::cold]] void wait() {
        do {
            for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
                if (spins >= 64) std::this_thread::yield();
            }
        } while (locked_.exchange(true, std::memory_order_acquire));
    }

    std::atomic<bool> locked_{false};
};

struct Faults {
    testing::SpaceFaults at;
};

// What a live space keeps.
struct Books {
    Books(std::uint64_t base, std::uint64_t bytes, std::shared_ptr<Faults> test_faults);

    // The test's fault at `step`, if the space has one (space_testing.hpp).
    void at(testing::SpaceStep step) const {
        if (faults) [[unlikely]]
            faults->at(step);
    }
    // Every heap allocation of a live space and its holders' records goes through here.
    template <class T, class... Args>
    std::unique_ptr<T> make(Args&&... args) const {
        at(testing::SpaceStep::allocate);
        return std::make_unique<T>(std::forward<Args>(args)...);
    }

    const std::shared_ptr<Faults> faults;  // null outside tests
    Fits fits;
};

struct SpaceState {
    SpinLock lock;
    std::uint64_t life = 0;   // guarded by lock; goes up when the space dies
    std::int64_t owners = 0;  // guarded by lock: the Space, and each Membership
    SpaceState* next_cached = nullptr;
    // Guarded by lock; engaged while the space lives. On cache lines of its own: the
    // lock's line is the one other threads spin on.
    alignas(64) std::optional<Books> books;
};

// A Space with a test's faults publishes its state with the low bit of the pointer set
// (SpaceState is 64-byte aligned): no membership names that pointer, so alloc's fast path
// never takes such a space and checks no faults; every other reader untags it.
inline SpaceState* tagged(SpaceState* state) {
    return reinterpret_cast<SpaceState*>(reinterpret_cast<std::uintptr_t>(state) | 1u);
}
inline SpaceState* untagged(SpaceState* state) {
    return reinterpret_cast<SpaceState*>(reinterpret_cast<std::uintptr_t>(state) & ~std::uintptr_t{1});
}
static_assert(alignof(SpaceState) >= 2);

// A shell for a new space, owned once (by its Space), and its life. May throw
// std::bad_alloc (the test's allocate fault), making nothing.
std::pair<SpaceState*, std::uint64_t> make_space_state(std::uint64_t base, std::uint64_t bytes,
                                                       const std::shared_ptr<Faults>& faults);
// Drops one owner; the last one's drop kills the space (see above).
void drop_owner(SpaceState& space);

// One holder's holds in one space. Owns the space while it lives.
struct Membership {
    explicit Membership(SpaceState& of) : space(&of) { holds.prev = holds.next = &holds; }
    SpaceState* const space;
    Block holds;                 // sentinel of the ring of its holds (fits.hpp); guarded by space->lock
    Membership* next = nullptr;  // immutable once published
};

struct HolderState {
    HolderState() = default;
    HolderState(const HolderState&) = delete;
    HolderState& operator=(const HolderState&) = delete;
    ~HolderState();  // gives back every hold left, then each membership's ownership

    // The membership in `space`, made on first use if the space is still in its life
    // `life`; null if it is not. May throw std::bad_alloc (the test's allocate fault).
    Membership* in(SpaceState& space, std::uint64_t life) {
        if (Membership* m = member(&space)) return m;
        return join(space, life);
    }
    // The membership in `space`, or null if there is none yet (nor ever for a tagged
    // pointer: see tagged).
    Membership* member(const SpaceState* space) const {
        for (Membership* m = memberships.load(std::memory_order_acquire); m != nullptr; m = m->next)
            if (m->space == space) return m;  // it owns the space, so the space lives
        return nullptr;
    }
    Membership* join(SpaceState& space, std::uint64_t life);

    std::atomic<Membership*> memberships{nullptr};  // newest first
    std::mutex adding;
};

}  // namespace rig::detail
