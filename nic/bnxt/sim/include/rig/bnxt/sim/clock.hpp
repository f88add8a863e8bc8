// rig/bnxt/sim/clock.hpp: the time a device model runs on. Models never sleep on the wall
// clock to wait for something (docs/design.md, "Simulation code"): their timers (transport
// retry, receiver-not-ready back-off) compare deadlines against a ModelClock, which a test can
// replace with a ManualClock it advances by hand.
#pragma once

#include <atomic>
#include <chrono>

namespace rig::bnxt::sim {

class ModelClock {
public:
    virtual ~ModelClock() = default;
    // Monotonic time since an arbitrary origin. Safe to call from any thread.
    virtual std::chrono::nanoseconds now() const = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public ModelClock {
public:
    std::chrono::nanoseconds now() const override {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch());
    }
};

// Time that moves only when a test moves it. Thread-safe.
class ManualClock final : public ModelClock {
public:
    std::chrono::nanoseconds now() const override { return std::chrono::nanoseconds(ns_.load()); }
    void advance(std::chrono::nanoseconds d) { ns_.fetch_add(d.count()); }
    void set(std::chrono::nanoseconds t) { ns_.store(t.count()); }

private:
    std::atomic<std::chrono::nanoseconds::rep> ns_{0};
};

}  // namespace rig::bnxt::sim
