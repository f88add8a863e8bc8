// A tiny driver of the DMA engine model for tests: what a real driver would do, through
// Function and Window only.
#pragma once

#include <chrono>
#include <cstdint>

#include "rig/pci/function.hpp"
#include "rig/sim/dma_engine.hpp"

namespace rig::test {

using sim::DmaEngine;

// Bus mastering on, the engine's registers mapped.
inline pci::Window engine_registers(const pci::Function& f) {
    f.set_bus_master(true);
    auto w = f.map(0, 0, 0x1000);
    if (!w) throw std::runtime_error(w.error());
    return *w;
}

// One copy of `bytes` from `from` to `to`, waited for on MSI-X vector 0: the status.
inline DmaEngine::Status engine_copy(const pci::Function& f, const pci::Window& registers, pci::DmaAddress from,
                                     pci::DmaAddress to, std::uint32_t bytes) {
    registers.write64(DmaEngine::source, from.value);
    registers.write64(DmaEngine::destination, to.value);
    registers.write32(DmaEngine::length, bytes);
    registers.write32(DmaEngine::vector, 0);
    const std::uint32_t before = registers.read32(DmaEngine::copies);
    registers.write32(DmaEngine::go, 1);
    if (!f.interrupt(0, std::chrono::seconds(30))) throw std::runtime_error("the engine raised no interrupt");
    if (registers.read32(DmaEngine::copies) != before + 1)
        throw std::runtime_error("the engine did not count the copy");
    return static_cast<DmaEngine::Status>(registers.read32(DmaEngine::status));
}

}  // namespace rig::test
