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
// a-aligned run of n bytes iff (align_up(s, a) - s) + n <= L; since align_up(s, a) - s is
// at most a - 1, every block of at least reach = n + a - 1 bytes holds one.
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
// Taking block [s, s + L) for the run [p, p + n): the run keeps the block's node; the part
// below, [s, p), if any, and the part above, [p + n, s + L), if any, become free blocks
// in their own classes (two nodes at most: Fits::spare_blocks).
// Giving back [p, p + n): it merges with the block below if that is free, then with the
// block above if that is free, and the result goes to the front of its class's list.
// So no two free blocks are ever neighbours, and each step above touches a fixed number
// of blocks: a take and a give back cost the same with 16 free blocks or 2^20.
#pragma once

#include "pool.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <memory>

namespace rig::detail {

// A node of a space's books. Most are blocks, which tile the space; a node with bytes = 0
// is a share instead (space.cpp): a second or later hold on a block. Its roles:
//  - free block: prev and next link its class's free list; holds = 0;
//  - held block: holds > 0; the block itself is its range's first hold, and prev and
//    next link it into its holder's ring while that hold lasts (space.cpp);
//  - share: `after` is the held block, prev and next link it into its holder's ring;
//  - pooled: `before` links the pool.
// generation goes up each time the hold a node is (first hold or share) is given back, and
// survives the pool: a Hold naming the node with an older generation is stale.
struct Block {
    std::uint64_t start = 0;       // first address
    std::uint64_t bytes = 0;       // > 0 for a block; 0 for a share
    Block* before = nullptr;       // the block just below, or null at the space's base
    Block* after = nullptr;        // the block just above, or null at the space's end
    Block* prev = nullptr;         // free list or holder's ring, as above
    Block* next = nullptr;
    std::uint64_t holds = 0;       // holds on the range; 0: the block is free
    std::uint64_t generation = 0;  // of the hold this node is
};
static_assert(sizeof(Block) == 64);  // one cache line

using Blocks = Pool<Block, &Block::before>;

class Fits {
public:
    // The nodes a take may need: one for the part below the aligned run, one above.
    static constexpr std::size_t spare_blocks = 2;

    // [base, base + bytes), all free; `chunk` gives the first block its node.
    Fits(std::uint64_t base, std::uint64_t bytes, std::unique_ptr<Blocks::Chunk> chunk);
    Fits(const Fits&) = delete;
    Fits& operator=(const Fits&) = delete;

    // A block of exactly n bytes starting at a multiple of `align` (a power of two), with
    // holds = 1 and prev and next left to the caller; or null. Certain to succeed while a
    // free block of at least 2 * (n + align) bytes exists (above).
    // Precondition: blocks().has(spare_blocks).
    Block* take(std::uint64_t n, std::uint64_t align);

    // Makes a held block free again (precondition: its holds just fell to 0), merged with
    // its free neighbours.
    void give_back(Block* block);

    Blocks& blocks() { return pool_; }
    // The block at the space's base (null for an empty space); walk on with `after`.
    const Block* first() const { return first_; }

private:
    void insert_free(Block* block);
    void remove_free(Block* block);
    Block* carve(Block* block, std::uint64_t n, std::uint64_t align);

    Blocks pool_;
    std::uint64_t nonempty_ = 0;              // bit c: lists_[c] is not empty
    std::array<Block*, 64> lists_{};          // class c: free blocks of [2^c, 2^(c+1)) bytes
    Block* first_ = nullptr;
};

namespace fits {

// floor(log2(bytes)). (GCC 12's std::bit_width returns the argument's type, not int.)
inline int class_of(std::uint64_t bytes) { return static_cast<int>(std::bit_width(bytes)) - 1; }

inline std::uint64_t align_up(std::uint64_t address, std::uint64_t align) {
    return (address + align - 1) & ~(align - 1);
}

inline bool holds_run(const Block& block, std::uint64_t n, std::uint64_t align) {
    return align_up(block.start, align) - block.start + n <= block.bytes;
}

}  // namespace fits

inline Fits::Fits(std::uint64_t base, std::uint64_t bytes, std::unique_ptr<Blocks::Chunk> chunk) {
    pool_.add(std::move(chunk));
    if (bytes == 0) return;
    first_ = pool_.take();
    *first_ = Block{.start = base, .bytes = bytes};
    insert_free(first_);
}

inline Block* Fits::take(std::uint64_t n, std::uint64_t align) {
    // n < 2^63 and align <= 2^62 (the caller's int64 arguments), so reach fits.
    const std::uint64_t reach = n + align - 1;
    const int c = static_cast<int>(std::bit_width(reach - 1));  // ceil(log2(reach)); 0 for reach = 1
    if (c > 0 && (nonempty_ >> (c - 1) & 1) != 0 && fits::holds_run(*lists_[c - 1], n, align))
        return carve(lists_[c - 1], n, align);
    if (c >= 64) return nullptr;
    const std::uint64_t candidates = nonempty_ & (~std::uint64_t{0} << c);
    if (candidates == 0) return nullptr;
    return carve(lists_[std::countr_zero(candidates)], n, align);
}

inline Block* Fits::carve(Block* block, std::uint64_t n, std::uint64_t align) {
    remove_free(block);
    const std::uint64_t run = fits::align_up(block->start, align);
    if (run > block->start) {
        Block* below = pool_.take();
        below->start = block->start;
        below->bytes = run - block->start;
        below->before = block->before;
        below->after = block;
        below->holds = 0;
        if (below->before != nullptr) below->before->after = below;
        else first_ = below;
        block->before = below;
        block->start = run;
        block->bytes -= below->bytes;
        insert_free(below);
    }
    if (block->bytes > n) {
        Block* above = pool_.take();
        above->start = run + n;
        above->bytes = block->bytes - n;
        above->before = block;
        above->after = block->after;
        above->holds = 0;
        if (above->after != nullptr) above->after->before = above;
        block->after = above;
        block->bytes = n;
        insert_free(above);
    }
    block->holds = 1;
    return block;
}

inline void Fits::give_back(Block* block) {
    if (Block* below = block->before; below != nullptr && below->holds == 0) {
        remove_free(below);
        below->bytes += block->bytes;
        below->after = block->after;
        if (block->after != nullptr) block->after->before = below;
        pool_.give_back(block);
        block = below;
    }
    if (Block* above = block->after; above != nullptr && above->holds == 0) {
        remove_free(above);
        block->bytes += above->bytes;
        block->after = above->after;
        if (above->after != nullptr) above->after->before = block;
        pool_.give_back(above);
    }
    insert_free(block);
}

inline void Fits::insert_free(Block* block) {
    const int c = fits::class_of(block->bytes);
    block->prev = nullptr;
    block->next = lists_[c];
    if (lists_[c] != nullptr) lists_[c]->prev = block;
    else nonempty_ |= std::uint64_t{1} << c;
    lists_[c] = block;
}

inline void Fits::remove_free(Block* block) {
    const int c = fits::class_of(block->bytes);
    if (block->prev != nullptr) block->prev->next = block->next;
    else lists_[c] = block->next;
    if (block->next != nullptr) block->next->prev = block->prev;
    if (lists_[c] == nullptr) nonempty_ &= ~(std::uint64_t{1} << c);
}

}  // namespace rig::detail
