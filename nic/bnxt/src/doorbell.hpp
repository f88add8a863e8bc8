// nic/bnxt/src/doorbell.hpp: the CPU's DMA fences and the one function that writes a
// doorbell (docs/design.md: "every doorbell leaves through one function", as bnxt_re's
// bnxt_re_ring_db; the fences in one header, as rdma-core's util/udma_barrier.h).
//
// Towards the device: every store to DMA memory (a WQE, a PSN entry, a CMDQ slot) must be
// visible before the store that tells the device to read it (a doorbell or trigger in a
// BAR). On x86-64 stores are not reordered with other stores, uncached BAR stores
// included, so only the compiler must be kept from moving them; on AArch64 a dmb orders
// them. From the device: the valid or toggle byte is read with acquire ordering before
// the rest of the entry (pci::Window's ordered reads), which is what x86-64's loads give.
#pragma once

#include <atomic>
#include <cstdint>

#include "rig/bnxt/hsi/doorbell.hpp"
#include "rig/bnxt/hsi/regs.hpp"
#include "rig/pci/window.hpp"

namespace rig::bnxt {

inline void to_device_barrier() {
#if defined(__aarch64__)
    asm volatile("dmb oshst" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// §5.8.1: one 8-byte store into the doorbell page (`doorbells` is the page's window),
// after the stores it announces.
inline void ring_doorbell(const pci::Window& doorbells, std::uint64_t value) {
    to_device_barrier();
    doorbells.write64(0, value);
}

}  // namespace rig::bnxt
