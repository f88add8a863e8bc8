// The simulated GPU's device model (rig/gpu/sim/model.hpp), written from registers.hpp:
// the register file, the segment table (the GPU's MMU) and the engine. The engine reaches
// memory by VA through the table: VRAM directly, the bus through the Port, a chunk at a
// time, so that a fault stops it where the hardware would stop (nothing of the faulting
// chunk moves; the chunks before it did).
#include "rig/gpu/sim/model.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rig/gpu/pattern.hpp"
#include "rig/gpu/sim/registers.hpp"
#include "rig/pci/dma.hpp"

namespace rig::gpu::sim {
namespace {

using reg::FaultKind;
using reg::Opcode;
using reg::SegmentKind;
using reg::SegmentStatus;
using reg::Status;

constexpr std::uint64_t chunk = 1 << 20;  // bytes the engine moves per step; a multiple of 8
constexpr std::uint64_t all_ones = ~std::uint64_t{0};

struct Segment {
    std::uint64_t va = 0, bytes = 0, target = 0;
    SegmentKind kind = SegmentKind::none;
};

bool power_of_two(std::uint64_t n) { return n != 0 && std::has_single_bit(n); }

}  // namespace

struct Model::State {
    ModelConfig config;
    std::byte* vram = nullptr;
    std::mutex mutex;
    rig::sim::Port* port = nullptr;

    Segment staged;
    SegmentStatus seg_status = SegmentStatus::ok;
    std::vector<Segment> table;
    std::map<std::uint64_t, std::size_t> by_va;  // va of each entry in use -> its index

    std::uint64_t cmd_va = 0, cmd_bus = 0, cmd_bytes = 0, cmd_seed = 0;
    Status status = Status::idle;
    std::uint64_t result = 0;
    FaultKind fault_kind = FaultKind::none;
    std::uint64_t fault_address = 0;

    void power_on() {
        staged = {};
        seg_status = SegmentStatus::ok;
        std::fill(table.begin(), table.end(), Segment{});
        by_va.clear();
        cmd_va = cmd_bus = cmd_bytes = cmd_seed = 0;
        status = Status::idle;
        result = 0;
        fault_kind = FaultKind::none;
        fault_address = 0;
    }

    // Segment table.

    SegmentStatus store(std::uint64_t index) {
        if (index >= table.size()) return SegmentStatus::bad_index;
        const Segment s = staged;
        if (s.kind != SegmentKind::none && s.kind != SegmentKind::vram && s.kind != SegmentKind::bus)
            return SegmentStatus::bad_kind;
        if (s.kind != SegmentKind::none) {
            if (s.va % pci::page_bytes != 0 || s.bytes % pci::page_bytes != 0 || s.target % pci::page_bytes != 0 ||
                s.bytes == 0 || s.va + s.bytes < s.va)
                return SegmentStatus::unaligned;
            if (s.kind == SegmentKind::vram &&
                (s.target > config.memory_bytes || s.bytes > config.memory_bytes - s.target))
                return SegmentStatus::outside_vram;
            if (overlaps(s, index)) return SegmentStatus::overlap;
        }
        Segment& entry = table[index];
        if (entry.kind != SegmentKind::none) by_va.erase(entry.va);
        entry = s;
        if (s.kind != SegmentKind::none) by_va[s.va] = index;
        return SegmentStatus::ok;
    }

    // Whether [s.va, s.va + s.bytes) overlaps an entry other than `index` (which the
    // store replaces). Entries never overlap, so the nearest one before s.va is the only
    // one before it that can reach in.
    bool overlaps(const Segment& s, std::size_t index) const {
        for (auto it = by_va.lower_bound(s.va); it != by_va.end() && it->first < s.va + s.bytes; ++it)
            if (it->second != index) return true;
        for (auto it = by_va.lower_bound(s.va); it != by_va.begin();) {
            --it;
            if (it->second == index) continue;
            const Segment& before = table[it->second];
            return before.va + before.bytes > s.va;
        }
        return false;
    }

    const Segment* translate(std::uint64_t va) const {
        auto it = by_va.upper_bound(va);
        if (it == by_va.begin()) return nullptr;
        const Segment& s = table[std::prev(it)->second];
        return va - s.va < s.bytes ? &s : nullptr;
    }

    // The engine's memory accesses.

    bool faulted(FaultKind kind, std::uint64_t address) {
        fault_kind = kind;
        fault_address = address;
        return false;
    }

    bool dma_failed(rig::sim::DmaStatus s, std::uint64_t address) {
        return faulted(
            s == rig::sim::DmaStatus::CompleterAbort ? FaultKind::completer_abort : FaultKind::unsupported_request,
            address);
    }

    // Moves bytes between the VA range at `va` and `bytes`, segment by segment: reading
    // the range into `bytes` (to_va false) or writing it from them.
    bool access(std::uint64_t va, std::span<std::byte> bytes, bool to_va) {
        std::uint64_t done = 0;
        while (done < bytes.size()) {
            const std::uint64_t at = va + done;
            const Segment* s = translate(at);
            if (s == nullptr) return faulted(FaultKind::translation, at);
            const std::uint64_t n = std::min<std::uint64_t>(bytes.size() - done, s->va + s->bytes - at);
            const std::uint64_t target = s->target + (at - s->va);
            const auto piece = bytes.subspan(done, n);
            if (s->kind == SegmentKind::vram) {
                if (to_va) std::memcpy(vram + target, piece.data(), n);
                else std::memcpy(piece.data(), vram + target, n);
            } else {
                const auto r =
                    to_va ? port->write(pci::DmaAddress{target}, piece) : port->read(pci::DmaAddress{target}, piece);
                if (r != rig::sim::DmaStatus::Ok) return dma_failed(r, target);
            }
            done += n;
        }
        return true;
    }

    // The engine's commands; false where it faulted.

    bool copy(std::uint64_t va, std::uint64_t bus, std::uint64_t bytes, bool to_bus) {
        std::vector<std::byte> buffer(std::min(bytes, chunk));
        for (std::uint64_t done = 0; done < bytes; done += chunk) {
            const auto piece = std::span(buffer).first(std::min(chunk, bytes - done));
            if (to_bus) {
                if (!access(va + done, piece, false)) return false;
                if (auto r = port->write(pci::DmaAddress{bus + done}, piece); r != rig::sim::DmaStatus::Ok)
                    return dma_failed(r, bus + done);
            } else {
                if (auto r = port->read(pci::DmaAddress{bus + done}, piece); r != rig::sim::DmaStatus::Ok)
                    return dma_failed(r, bus + done);
                if (!access(va + done, piece, true)) return false;
            }
        }
        return true;
    }

    // The pattern's words are little-endian (pattern.hpp): whole words move as the host's.
    static_assert(std::endian::native == std::endian::little);

    bool fill(std::uint64_t va, std::uint64_t bytes, std::uint64_t seed) {
        std::vector<std::byte> buffer(std::min(bytes, chunk));
        for (std::uint64_t done = 0; done < bytes; done += chunk) {
            const auto piece = std::span(buffer).first(std::min(chunk, bytes - done));
            auto* first = reinterpret_cast<unsigned char*>(piece.data());
            const std::uint64_t whole = piece.size() / 8;  // words wholly inside: one store each
            for (std::uint64_t i = 0; i < whole; ++i) {
                const std::uint64_t word = pattern::fill_word(seed, done / 8 + i);
                std::memcpy(first + 8 * i, &word, 8);
            }
            for (std::uint64_t i = whole; i < pattern::words(piece.size()); ++i)
                pattern::store_word(first, piece.size(), i, pattern::fill_word(seed, done / 8 + i));
            if (!access(va + done, piece, true)) return false;
        }
        return true;
    }

    bool checksum(std::uint64_t va, std::uint64_t bytes) {
        std::vector<std::byte> buffer(std::min(bytes, chunk));
        std::uint64_t sum = 0;
        for (std::uint64_t done = 0; done < bytes; done += chunk) {
            const auto piece = std::span(buffer).first(std::min(chunk, bytes - done));
            if (!access(va + done, piece, false)) return false;
            const auto* first = reinterpret_cast<const unsigned char*>(piece.data());
            const std::uint64_t whole = piece.size() / 8;
            for (std::uint64_t i = 0; i < whole; ++i) {
                std::uint64_t word = 0;
                std::memcpy(&word, first + 8 * i, 8);
                sum += pattern::term(word, done / 8 + i);
            }
            for (std::uint64_t i = whole; i < pattern::words(piece.size()); ++i)
                sum += pattern::term(pattern::load_word(first, piece.size(), i), done / 8 + i);
        }
        result = pattern::finish(sum, bytes);
        return true;
    }

    void run(std::uint64_t opcode) {
        fault_kind = FaultKind::none;
        fault_address = 0;
        const bool wraps = cmd_va + cmd_bytes < cmd_va || cmd_bus + cmd_bytes < cmd_bus;
        const bool known =
            opcode >= std::to_underlying(Opcode::copy_to_bus) && opcode <= std::to_underlying(Opcode::checksum);
        if (cmd_bytes == 0 || wraps || !known || port == nullptr) {
            faulted(FaultKind::bad_command, 0);
            status = Status::fault;
            return;
        }
        bool ok = false;
        switch (static_cast<Opcode>(opcode)) {
        case Opcode::copy_to_bus: ok = copy(cmd_va, cmd_bus, cmd_bytes, true); break;
        case Opcode::copy_from_bus: ok = copy(cmd_va, cmd_bus, cmd_bytes, false); break;
        case Opcode::fill: ok = fill(cmd_va, cmd_bytes, cmd_seed); break;
        case Opcode::checksum: ok = checksum(cmd_va, cmd_bytes); break;
        }
        status = ok ? Status::done : Status::fault;
    }
};

Model::Model(ModelConfig config) : state_(std::make_unique<State>()) {
    if (config.bar_bytes == 0) config.bar_bytes = config.memory_bytes;
    if (!power_of_two(config.memory_bytes) || config.memory_bytes < (64 << 10))
        throw std::invalid_argument("sim GPU: VRAM of " + std::to_string(config.memory_bytes) +
                                    " bytes is not a power of two >= 64 KiB");
    if (!power_of_two(config.bar_bytes) || config.bar_bytes < pci::page_bytes || config.bar_bytes > config.memory_bytes)
        throw std::invalid_argument("sim GPU: a BAR of " + std::to_string(config.bar_bytes) +
                                    " bytes is not a power of two between 4096 and the VRAM");
    if (config.segments == 0) throw std::invalid_argument("sim GPU: no segment table entries");
    void* vram = ::mmap(nullptr, config.memory_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (vram == MAP_FAILED) throw std::bad_alloc();
    state_->vram = static_cast<std::byte*>(vram);
    state_->config = config;
    state_->table.resize(config.segments);
}

Model::~Model() { ::munmap(state_->vram, state_->config.memory_bytes); }

rig::sim::Identity Model::identity() const {
    rig::sim::Identity id;
    id.vendor = state_->config.vendor;
    id.device = state_->config.device;
    id.class_code = reg::class_code;
    id.bars[reg::register_bar] = {reg::register_bar_bytes, false, true};
    id.bars[reg::memory_bar] = {state_->config.bar_bytes, true, true};
    return id;
}

void Model::attach(rig::sim::Port& port) {
    std::lock_guard lock(state_->mutex);
    state_->port = &port;
}

void Model::detach() {
    std::lock_guard lock(state_->mutex);
    state_->port = nullptr;
}

std::uint64_t Model::read(unsigned bar, std::uint64_t offset, unsigned width) {
    if (bar != reg::register_bar || width != 8 || offset % 8 != 0) return all_ones;
    std::lock_guard lock(state_->mutex);
    const State& s = *state_;
    switch (offset) {
    case reg::id: return reg::magic;
    case reg::memory_bytes: return s.config.memory_bytes;
    case reg::bar_bytes: return s.config.bar_bytes;
    case reg::segments: return s.config.segments;
    case reg::seg_va: return s.staged.va;
    case reg::seg_bytes: return s.staged.bytes;
    case reg::seg_target: return s.staged.target;
    case reg::seg_kind: return std::to_underlying(s.staged.kind);
    case reg::seg_status: return std::to_underlying(s.seg_status);
    case reg::cmd_va: return s.cmd_va;
    case reg::cmd_bus: return s.cmd_bus;
    case reg::cmd_bytes: return s.cmd_bytes;
    case reg::cmd_seed: return s.cmd_seed;
    case reg::status: return std::to_underlying(s.status);
    case reg::result: return s.result;
    case reg::fault_kind: return std::to_underlying(s.fault_kind);
    case reg::fault_address: return s.fault_address;
    default: return all_ones;
    }
}

void Model::write(unsigned bar, std::uint64_t offset, unsigned width, std::uint64_t value) {
    if (bar != reg::register_bar || width != 8 || offset % 8 != 0) return;
    std::lock_guard lock(state_->mutex);
    State& s = *state_;
    switch (offset) {
    case reg::seg_va: s.staged.va = value; break;
    case reg::seg_bytes: s.staged.bytes = value; break;
    case reg::seg_target: s.staged.target = value; break;
    case reg::seg_kind: s.staged.kind = static_cast<SegmentKind>(value); break;
    case reg::seg_index: s.seg_status = s.store(value); break;
    case reg::cmd_va: s.cmd_va = value; break;
    case reg::cmd_bus: s.cmd_bus = value; break;
    case reg::cmd_bytes: s.cmd_bytes = value; break;
    case reg::cmd_seed: s.cmd_seed = value; break;
    case reg::cmd_opcode:
        s.status = Status::busy;
        s.run(value);
        break;
    default: break;  // read-only or undecoded: dropped
    }
}

std::span<std::byte> Model::memory(unsigned bar) {
    if (bar != reg::memory_bar) return {};
    return {state_->vram, state_->config.bar_bytes};
}

void Model::reset() {
    std::lock_guard lock(state_->mutex);
    state_->power_on();
}

}  // namespace rig::gpu::sim
