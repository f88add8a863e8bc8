// space/src/pool.hpp: the nodes a space keeps its books in (fits.hpp's blocks), taken and
// given back in constant time.
//
// A pool allocates nothing by itself: its owner makes a Chunk outside its lock (where a
// test may inject std::bad_alloc, state.hpp) and adds it. Chunks go back to the heap only
// with the pool, so a pool is as large as the most nodes its space ever needed at once.
// Given-back nodes keep their contents but `link` until taken again; Block's generation
// relies on that. Not thread-safe: the space's lock guards it.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <utility>

namespace rig::detail {

// Node: a default-constructible type; `link`, a Node* member it does not use while pooled.
template <class Node, Node* Node::*link>
class Pool {
public:
    static constexpr std::size_t chunk_nodes = 64;

    struct Chunk {
        Chunk* next = nullptr;
        std::array<Node, chunk_nodes> nodes{};
    };

    Pool() = default;
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() {
        while (chunks_ != nullptr) delete std::exchange(chunks_, chunks_->next);
    }

    // Whether at least n nodes are free (n is 1 or 2: a take needs no more). No count is
    // kept, since every store on the hot path costs (space.cpp, Cost).
    bool has(std::size_t n) const {
        const Node* node = free_;
        for (std::size_t i = 0; i < n; ++i, node = node->*link)
            if (node == nullptr) return false;
        return true;
    }

    void add(std::unique_ptr<Chunk> chunk) {
        for (Node& node : chunk->nodes) give_back(&node);
        chunk->next = chunks_;
        chunks_ = chunk.release();
    }

    // Precondition: has(1).
    Node* take() {
        Node* node = free_;
        free_ = node->*link;
        return node;
    }

    void give_back(Node* node) {
        node->*link = free_;
        free_ = node;
    }

private:
    Chunk* chunks_ = nullptr;
    Node* free_ = nullptr;
};

}  // namespace rig::detail
