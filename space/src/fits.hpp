// space/src/fits.hpp: where a space's ranges come from: segregated fits over power-of-two
// classes. All of it is here, inline, since alloc and free run nothing else.
//
// The space is cut into blocks that tile [base, base + bytes) in address order; each is
// free or held. Free blocks sit in the list of their class, floor(log2(bytes)), and a
// 64-bit bitmap says which lists are not empty, so a take finds its block with one
// find-first-set and a give back merges with its two neighbours: both in constant time,
// whatever the space holds (the classic reference: Masmano et al., "TLSF: a new dynamic
// memory allocator for real-time systems", ECRTS 2004, without its second level).
// Not thread-safe: the space's lock guards it.
//
// A request is n bytes at alignment a (a power of two). A free block [s, s + L) holds an
// a-aligned run of n bytes iff pad(s, a) + n <= L, where pad(s, a) = -s mod a is how far
// the first multiple of a from s on lies; since pad is at most a - 1, every block of at
// least reach = n + a - 1 bytes holds one.
// Let c = ceil(log2(reach)). take looks at two blocks, no more:
//  1. the first block of class c - 1 (blocks of [2^(c-1), 2^c) bytes): it may be shorter
//     than reach and still hold an aligned run, if its start lies well (an exactly
//     aligned hole of exactly n bytes does: a 4 KiB gap at a 4 KiB boundary is reused);
//  2. else the first block of the lowest non-empty class c' >= c, found with one
//     find-first-set on the bitmap: it has at least 2^c' >= reach bytes, so it fits.
//  Else nothing: the request fails.
// The guarantee: a free block of L >= 2 * (n + a) bytes has class floor(log2(L)) >= c,
// because 2^c < 2 * reach < 2 * (n + a) <= L; so step 2 finds a block and take succeeds.
// (The seed asks this for 2 * (max(n, 16) + a), which is weaker.) It may fail with a
// smaller block that would fit: good fit, not best fit, is the price of constant time.
//
// Taking block X = [s, s + L) for the run [p, p + n) leaves up to two free parts: below,
// [s, p), and above, [p + n, s + L). X's node keeps the longer one, staying where it is in
// its class's list unless the part is of a lower class; the run gets a node of its own,
// and so does the shorter part if it is not empty (two nodes at most:
// Fits::spare_blocks). A run that fills X exactly takes X's node.
// Giving back [p, p + n): it merges with the block below and the block above where those
// are free; the longer of them keeps its node, and moves to another class's list only if
// it grew out of its own. Without a free neighbour the run's node becomes the free block.
// So no two free blocks are ever neighbours, and each step above touches a fixed number
// of blocks: a take and a give back cost the same with 16 free blocks or 2^20. A part or
// merge that stays in its class (the common case next to a long free tail) costs no list
// work at all, and every store saved under the lock counts (space.cpp, Cost).
#pragma once

#include "pool.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <memory>

namespace rig::detail {

// A node of a space's books. Most are blocks, which tile the space; a node with bytes = 0
// is a share instead (space.cpp): a second or later hold on a block. Its roles:
//  - free block: prev and next link its class's free list (a head's prev is not
//    kept); holds = 0;
//  - held block: holds > 0; the block itself is its range's first hold, and prev and
//    next link it into its holder's ring while that hold lasts (space.cpp);
//  - share: `after` is the held block, prev and next link it into its holder's ring;
//  - pooled: `before` links the pool; the other fields are left as they were (holds
//    too: a node taken for a block has it set; a share's is not read).
// generation goes up each time the hold a node is (first hold or share) is given back, and
// survives the pool: a Hold naming the node with an older generation is stale.
struct alignas(64) Block {
    std::uint64_t start = 0;  // first address
    std::uint64_t bytes = 0;  // > 0 for a block; 0 for a share
    Block* before = nullptr;  // the block just below, or null at the space's base
    Block* after = nullptr;   // the block just above, or null at the space's end
    Block* prev = nullptr;    // free list or holder's ring, as above
    Block* next = nullptr;
    std::uint64_t holds = 0;       // holds on the range; 0: the block is free
    std::uint64_t generation = 0;  // of the hold this node is
};
static_assert(sizeof(Block) == 64);  // one cache line (alignas: a chunk would start it 8 bytes in)

using Blocks = Pool<Block, &Block::before>;

class Fits {
public:
    // The nodes a take may need: one for the run, one for the shorter free part.
    static constexpr std::size_t spare_blocks = 2;

    // [base, base + bytes), all free; `chunk` gives the first block its node.
    Fits(std::uint64_t base, std::uint64_t bytes, std::unique_ptr<Blocks::Chunk> chunk);
    Fits(const Fits&) = delete;
    Fits& operator=(const Fits&) = delete;

    // A block of exactly n bytes starting at a multiple of `align` (a power of two), with
    // holds = 1 and prev and next left to the caller; or null. Certain to succeed while a
    // free block of at least 2 * (n + align) bytes exists (above).
    // Precondition: blocks().has(spare_blocks).
    Block* take(std::uint64_t n, std::uint64_t align) {
        Block* block = find(n, align);
        if (block == nullptr) return nullptr;
        return splits_low(*block, n, align) ? split_low(block, n) : carve(block, n, align);
    }
    // take in its parts, for a caller that keeps the common case inline and the rest out of
    // line: the free block take carves the run from (or null), and how it carves it.
    Block* find(std::uint64_t n, std::uint64_t align);
    // The common case: the block starts aligned and is longer than n, so the run is its
    // low end and the block keeps the rest.
    static bool splits_low(const Block& block, std::uint64_t n, std::uint64_t align) {
        return (block.start & (align - 1)) == 0 && block.bytes > n;
    }
    Block* split_low(Block* block, std::uint64_t n);                   // precondition: splits_low
    Block* carve(Block* block, std::uint64_t n, std::uint64_t align);  // any block find gives

    // Makes a held block free, merged with its free neighbours. Precondition: its last
    // hold is being given back (holds is 1, and left so if the node goes to the pool).
    void give_back(Block* block);

    Blocks& blocks() { return pool_; }
    // The block at the space's base (null for an empty space); walk on with `after`.
    const Block* first() const { return first_; }

private:
    friend struct SpaceAccess;  // testing.cpp checks the lists

    void enlist(Block* block, int c);
    void unlist(Block* block, int c);
    // block->bytes becomes `bytes`; it changes lists if it changes class.
    void resize(Block* block, std::uint64_t bytes);
    // block->before = below, and below->after = block (first_ where below is null).
    void link_above(Block* below, Block* block);

    Blocks pool_;
    std::uint64_t nonempty_ = 0;      // bit c: lists_[c] is not empty
    std::array<Block*, 64> lists_{};  // class c: free blocks of [2^c, 2^(c+1)) bytes
    Block* first_ = nullptr;
};

namespace fits {

// floor(log2(bytes)) for bytes > 0 (std::bit_width would test for 0 first).
inline int class_of(std::uint64_t bytes) { return 63 - __builtin_clzll(bytes); }

// Whether a and b (both > 0) are of one class: their highest set bits are the same bit.
inline bool same_class(std::uint64_t a, std::uint64_t b) { return (a ^ b) <= (a & b); }

// pad(address, align) above: from address to the first multiple of align.
inline std::uint64_t pad(std::uint64_t address, std::uint64_t align) { return (0 - address) & (align - 1); }

inline bool holds_run(const Block& block, std::uint64_t n, std::uint64_t align) {
    return pad(block.start, align) + n <= block.bytes;
}

}  // namespace fits

inline Fits::Fits(std::uint64_t base, std::uint64_t bytes, std::unique_ptr<Blocks::Chunk> chunk) {
    pool_.add(std::move(chunk));
    if (bytes == 0) return;
    first_ = pool_.take();
    *first_ = Block{.start = base, .bytes = bytes};
    enlist(first_, fits::class_of(bytes));
}

[[gnu::always_inline]] inline Block* Fits::find(std::uint64_t n, std::uint64_t align) {
    // n < 2^63 and align <= 2^62 (the caller's int64 arguments), so reach fits.
    const std::uint64_t reach = n + align - 1;
    const int c = static_cast<int>(std::bit_width(reach - 1));  // ceil(log2(reach)); 0 for reach = 1
    if (c > 0 && (nonempty_ >> (c - 1) & 1) != 0 && fits::holds_run(*lists_[c - 1], n, align)) return lists_[c - 1];
    if (c >= 64) return nullptr;
    const std::uint64_t candidates = nonempty_ & (~std::uint64_t{0} << c);
    if (candidates == 0) return nullptr;
    return lists_[std::countr_zero(candidates)];
}

[[gnu::always_inline]] inline Block* Fits::split_low(Block* block, std::uint64_t n) {
    Block* run = pool_.take();
    const std::uint64_t start = block->start;
    run->start = start;
    run->bytes = n;
    run->holds = 1;
    link_above(block->before, run);
    link_above(run, block);
    block->start = start + n;
    resize(block, block->bytes - n);
    return run;
}

// Out of line: it is most of the code and little of the calls.
[[gnu::noinline]] inline Block* Fits::carve(Block* block, std::uint64_t n, std::uint64_t align) {
    const std::uint64_t start = block->start;
    const std::uint64_t below = fits::pad(start, align);
    const std::uint64_t run_start = start + below;
    const std::uint64_t above = block->bytes - below - n;
    if (below == 0 && above == 0) {
        unlist(block, fits::class_of(n));
        block->holds = 1;
        return block;
    }
    Block* run = pool_.take();
    run->start = run_start;
    run->bytes = n;
    run->holds = 1;
    if (above >= below) {  // block keeps [run_start + n, end): [block->before][part below][run][block]
        Block* lower = block->before;
        if (below > 0) {
            Block* part = pool_.take();
            part->start = start;
            part->bytes = below;
            part->holds = 0;
            link_above(lower, part);
            enlist(part, fits::class_of(below));
            lower = part;
        }
        link_above(lower, run);
        link_above(run, block);
        block->start = run_start + n;
        resize(block, above);
    } else {  // block keeps [start, run_start): [block][run][part above][block->after]
        Block* upper = block->after;
        if (above > 0) {
            Block* part = pool_.take();
            part->start = run_start + n;
            part->bytes = above;
            part->holds = 0;
            part->after = upper;
            if (upper != nullptr) upper->before = part;
            enlist(part, fits::class_of(above));
            upper = part;
        }
        run->after = upper;
        if (upper != nullptr) upper->before = run;
        link_above(block, run);
        resize(block, below);
    }
    return run;
}

[[gnu::always_inline]] inline void Fits::give_back(Block* block) {
    Block* below = block->before;
    Block* above = block->after;
    const bool below_free = below != nullptr && below->holds == 0;
    const bool above_free = above != nullptr && above->holds == 0;
    if (!below_free && !above_free) {
        block->holds = 0;
        enlist(block, fits::class_of(block->bytes));
        return;
    }
    if (below_free && (!above_free || below->bytes >= above->bytes)) {  // below keeps its node
        std::uint64_t bytes = below->bytes + block->bytes;
        Block* upper = above;
        if (above_free) {
            unlist(above, fits::class_of(above->bytes));
            bytes += above->bytes;
            upper = above->after;
            pool_.give_back(above);
        }
        below->after = upper;
        if (upper != nullptr) upper->before = below;
        pool_.give_back(block);
        resize(below, bytes);
    } else {  // above keeps its node
        std::uint64_t start = block->start;
        std::uint64_t bytes = above->bytes + block->bytes;
        Block* lower = below;
        if (below_free) {
            unlist(below, fits::class_of(below->bytes));
            start = below->start;
            bytes += below->bytes;
            lower = below->before;
            pool_.give_back(below);
        }
        pool_.give_back(block);
        link_above(lower, above);
        above->start = start;
        resize(above, bytes);
    }
}

inline void Fits::link_above(Block* below, Block* block) {
    block->before = below;
    if (below != nullptr) below->after = block;
    else first_ = block;
}

inline void Fits::resize(Block* block, std::uint64_t bytes) {
    const std::uint64_t was = block->bytes;
    block->bytes = bytes;
    if (fits::same_class(was, bytes)) return;
    unlist(block, fits::class_of(was));
    enlist(block, fits::class_of(bytes));
}

// A list's head keeps no prev (it would be one more store, on another block's cache line,
// each time the head changes): unlist knows the head by lists_[c] instead.
inline void Fits::enlist(Block* block, int c) {
    block->next = lists_[c];
    if (lists_[c] != nullptr) lists_[c]->prev = block;
    else nonempty_ |= std::uint64_t{1} << c;
    lists_[c] = block;
}

inline void Fits::unlist(Block* block, int c) {
    if (lists_[c] == block) {
        lists_[c] = block->next;
        if (block->next == nullptr) nonempty_ &= ~(std::uint64_t{1} << c);
        return;
    }
    block->prev->next = block->next;
    if (block->next != nullptr) block->next->prev = block->prev;
}

}  // namespace rig::detail
