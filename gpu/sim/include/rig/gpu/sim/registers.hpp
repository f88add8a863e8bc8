// rig/gpu/sim/registers.hpp: the hardware-software interface of the simulated GPU, the
// one header its driver (gpu/sim/src/driver.cpp) and its model (model.cpp) share, as a
// vendor's register manual is shared by both sides. Layout only: no state, no logic.
//
// The function (PCI class 0x030200, 3D controller, as datacenter GPUs report):
//  - BAR0: registers, 64 KiB, 64-bit, non-prefetchable. Every register is 64 bits wide
//    at an 8-byte-aligned offset, accessed as one 8-byte access; any other access reads
//    all ones and is dropped on write.
//  - BAR2: memory, 64-bit, prefetchable: VRAM bytes [0, bar_bytes) at BAR offsets
//    [0, bar_bytes). A NIC (any function the bus forwards to it) reaches VRAM there.
//
// The GPU reaches memory by GPU virtual address (VA) through a segment table, its MMU:
// entry i maps [va, va + bytes) to VRAM (kind vram, target a VRAM offset) or to the bus
// (kind bus, target a bus address: a peer GPU's BAR2). The engine runs one command at a
// time: copies between a VA range and a bus address range (the copy engine), and fill
// and checksum of a VA range (rig/gpu/pattern.hpp) computed by the GPU.
//
// Programming a segment: write seg_va, seg_bytes, seg_target, seg_kind, then seg_index;
// seg_status says whether the GPU took it. kind none clears the entry.
// Running a command: write cmd_va, cmd_bus, cmd_bytes, cmd_seed, then cmd_opcode
// (the doorbell); poll status until it is not busy; result holds a checksum; a fault
// leaves fault_kind and fault_address (the VA or bus address it stopped at).
#pragma once

#include <cstdint>

namespace rig::gpu::sim::reg {

inline constexpr unsigned register_bar = 0;
inline constexpr unsigned memory_bar = 2;
inline constexpr std::uint64_t register_bar_bytes = 64 * 1024;
inline constexpr std::uint32_t class_code = 0x030200;

// Read-only identification.
inline constexpr std::uint64_t id = 0x000;                     // reads magic
inline constexpr std::uint64_t memory_bytes = 0x008;           // VRAM in bytes
inline constexpr std::uint64_t bar_bytes = 0x010;              // VRAM reachable through BAR2, from offset 0
inline constexpr std::uint64_t segments = 0x018;               // entries in the segment table
inline constexpr std::uint64_t magic = 0x0001'5550'4747'4952;  // "RIGGPU", version 1

// The segment table.
inline constexpr std::uint64_t seg_va = 0x100;
inline constexpr std::uint64_t seg_bytes = 0x108;   // a multiple of 4096
inline constexpr std::uint64_t seg_target = 0x110;  // VRAM offset or bus address, on 4096
inline constexpr std::uint64_t seg_kind = 0x118;    // SegmentKind
inline constexpr std::uint64_t seg_index = 0x120;   // write: stores the staged entry at this index
inline constexpr std::uint64_t seg_status = 0x128;  // SegmentStatus of the last store

// The engine.
inline constexpr std::uint64_t cmd_va = 0x200;
inline constexpr std::uint64_t cmd_bus = 0x208;
inline constexpr std::uint64_t cmd_bytes = 0x210;
inline constexpr std::uint64_t cmd_seed = 0x218;
inline constexpr std::uint64_t cmd_opcode = 0x220;     // write: the doorbell, runs the command
inline constexpr std::uint64_t status = 0x228;         // Status
inline constexpr std::uint64_t result = 0x230;         // the checksum of the last checksum command
inline constexpr std::uint64_t fault_kind = 0x238;     // FaultKind of the last fault
inline constexpr std::uint64_t fault_address = 0x240;  // VA (translation) or bus address (DMA)

enum class SegmentKind : std::uint64_t { none = 0, vram = 1, bus = 2 };

enum class SegmentStatus : std::uint64_t {
    ok = 0,
    bad_index = 1,     // not below `segments`
    unaligned = 2,     // va, bytes or target not on 4096, or bytes 0 for a mapping
    outside_vram = 3,  // a vram target past memory_bytes
    overlap = 4,       // [va, va + bytes) overlaps another entry
    bad_kind = 5,
};

enum class Opcode : std::uint64_t {
    copy_to_bus = 1,    // cmd_bytes from VA cmd_va to bus address cmd_bus
    copy_from_bus = 2,  // cmd_bytes from bus address cmd_bus to VA cmd_va
    fill = 3,           // the fill pattern of cmd_seed over cmd_bytes at cmd_va
    checksum = 4,       // the checksum of cmd_bytes at cmd_va, into result
};

enum class Status : std::uint64_t { idle = 0, busy = 1, done = 2, fault = 3 };

enum class FaultKind : std::uint64_t {
    none = 0,
    translation = 1,          // a VA no segment maps (fault_address: the VA)
    unsupported_request = 2,  // the bus answered Unsupported Request (fault_address: bus address)
    completer_abort = 3,      // the bus answered Completer Abort (fault_address: bus address)
    bad_command = 4,          // unknown opcode, 0 bytes, or a range that wraps
};

}  // namespace rig::gpu::sim::reg
