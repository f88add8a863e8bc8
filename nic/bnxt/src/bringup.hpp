// nic/bnxt/src/bringup.hpp: bring-up (§7.1, bringup.cpp, backing_store.cpp) and teardown
// (§7.4, teardown.cpp) of a Nic::State. Called under its mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "state.hpp"

namespace rig::bnxt {

// Every step of §7.1 in order; the first failure is returned and what was set up stays
// recorded in `nic` for teardown.
Result<void> bring_up(Nic::State& nic);

// §7.1 step 8, §3.11: context memory for a firmware that asks for it.
Result<void> backing_store(Nic::State& nic);

// HWRM_RING_ALLOC of an NQ-type ring (the CREQ, an NQ) over `memory` (§3.12).
Result<std::uint16_t> ring_alloc(Nic::State& nic, const QueueMemory& memory, std::uint32_t entries, unsigned vector);

}  // namespace rig::bnxt
