// Polls `done` until it holds or a generous deadline (60 s) passed: a hang guard only,
// never a timing assertion. True where `done` came to hold.
#pragma once

#include <chrono>
#include <thread>

namespace rig::test {

template <class Done>
bool eventually(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

}  // namespace rig::test
