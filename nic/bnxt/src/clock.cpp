// The steady clock (rig/bnxt/clock.hpp).
#include "rig/bnxt/clock.hpp"

#include <thread>

namespace rig::bnxt {
namespace {

class SteadyClock final : public Clock {
public:
    std::chrono::nanoseconds now() override { return std::chrono::steady_clock::now().time_since_epoch(); }
    void pause() override { std::this_thread::yield(); }
};

}  // namespace

std::shared_ptr<Clock> steady_clock() {
    static const std::shared_ptr<Clock> clock = std::make_shared<SteadyClock>();
    return clock;
}

}  // namespace rig::bnxt
