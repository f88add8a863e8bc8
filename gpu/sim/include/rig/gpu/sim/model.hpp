// rig/gpu/sim/model.hpp: the device model of the simulated GPU (registers.hpp is its
// interface), for a rig::sim machine (rig/sim/device.hpp).
//
// VRAM is host memory reserved at construction and committed page by page as it is
// touched (an anonymous MAP_NORESERVE mapping), so a 64 GiB GPU costs what its tests
// write. BAR2 is the first bar_bytes of it, handed to the machine as memory
// (Device::memory): the process maps it and peers' DMA reaches it without calls to the
// model. The engine runs a command when the driver rings cmd_opcode, to completion,
// before the write returns; its DMA goes through the Port, so the bus routes, checks and
// faults it as it does any function's. Known gap: a real engine runs beside the CPU and
// the driver polls status while it does; here the first poll finds it done.
//
// Thread safety: register accesses may come from several threads; the model serializes
// them (and so commands).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "rig/sim/device.hpp"

namespace rig::gpu::sim {

struct ModelConfig {
    std::uint64_t memory_bytes = std::uint64_t{1} << 30;  // VRAM: a power of two >= 64 KiB
    std::uint64_t bar_bytes = 0;                          // BAR2: a power of two <= memory_bytes; 0: all of it
    std::uint64_t segments = 4096;                        // segment table entries
    std::uint16_t vendor = 0x1b36;                        // Red Hat, Inc., the vendor ID of QEMU's emulated devices
    std::uint16_t device = 0x0d00;                        // not a Red Hat assignment: a rig simulator's own number
};

class Model final : public rig::sim::Device {
public:
    // Throws std::invalid_argument for sizes that are not as ModelConfig states, naming
    // them; std::bad_alloc where the process cannot reserve the VRAM.
    explicit Model(ModelConfig config = {});
    ~Model() override;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    rig::sim::Identity identity() const override;
    void attach(rig::sim::Port& port) override;
    void detach() override;
    std::uint64_t read(unsigned bar, std::uint64_t offset, unsigned width) override;
    void write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) override;
    std::span<std::byte> memory(unsigned bar) override;
    void reset() override;

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace rig::gpu::sim
