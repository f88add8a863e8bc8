// rig/bnxt/clock.hpp: the time the driver waits by. Every wait of the driver (a firmware
// command, Cq::wait without interrupts, the notification queue drained at DESTROY_CQ)
// polls against a deadline read from a Clock, so that nothing waits without a bound
// (docs/bugs.md B25) and a test can make a command time out without sleeping: its clock
// advances on every read.
//
// Thread safety: a Clock is called from every thread that uses the Nic; implementations
// must be safe to call from several threads at once.
#pragma once

#include <chrono>
#include <memory>

namespace rig::bnxt {

class Clock {
public:
    virtual ~Clock() = default;
    // A monotonic time; only differences between two reads mean anything.
    virtual std::chrono::nanoseconds now() = 0;
    // Called between two polls of a device's answer: lets the device run (the steady
    // clock yields the CPU; a test clock may advance instead).
    virtual void pause() = 0;
};

// std::chrono::steady_clock, yielding the CPU on pause(). The default of Options::clock.
std::shared_ptr<Clock> steady_clock();

}  // namespace rig::bnxt
