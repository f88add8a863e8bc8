// rig/pci/reservation.hpp: the ranges of this process's addresses set aside for DMA
// memory, shared by every transport that runs in this process (the local VFIO one and
// the simulator).
//
// Machine::reserve on Machine::local() and Machine::at() lands here; a transport whose
// functions' memory lives in this process (rig::sim) calls reserve_addresses from its
// Ops::reserve, and Function::alloc_dma checks a caller's va with is_reserved. A range is
// held by an inaccessible mapping (PROT_NONE, placed with MAP_FIXED_NOREPLACE, Linux 4.17
// and later) that stays until the process ends, so that no later mmap, malloc or thread
// stack lands there; alloc_dma maps over it with MAP_FIXED.
//
// Thread safety: both functions may be called from several threads at once.
#pragma once

#include <cstdint>

#include "rig/result.hpp"

namespace rig::pci {

// Reserves [base, base + bytes). The parts already reserved are left as they are
// (reserving again does nothing). Error naming the range where part of the rest is in use
// by another mapping (nothing new stays reserved then), or where the system cannot place
// a mapping at a fixed address without replacing one (not Linux, or Linux before 4.17).
// Throws std::invalid_argument if base or bytes is not a multiple of the page size,
// bytes is 0, or the range wraps around the address space.
Result<void> reserve_addresses(std::uintptr_t base, std::uint64_t bytes);

// Whether every address of [base, base + bytes) lies in a range reserve_addresses
// reserved. false for bytes 0 and for a range that wraps around.
bool is_reserved(std::uintptr_t base, std::uint64_t bytes);

}  // namespace rig::pci
