// A simulated function's configuration space (state.hpp, Slot): the Topology's bytes plus
// an MSI-X capability and Function Level Reset, writable only where the registers are.
//
// Writable bits, by register (every other bit ignores writes, as read-only bits do; PCIe
// Base 6.0 §7.5.1.1.3, §7.5.3.4, §7.7.2.2):
//   Command            I/O Space, Memory Space, Bus Master, Parity Error Response, SERR#,
//                      Interrupt Disable (0x0547)
//   Device Control     all but Initiate Function Level Reset, which resets the function
//                      and reads 0
//   MSI-X Message Control  MSI-X Enable, Function Mask
// The bus reads Bus Master, Memory Space and MSI-X state on every request: they are kept
// in atomics beside the bytes. Device::bus_master is called on a change, outside the lock.
#include <algorithm>
#include <stdexcept>

#include "rig/pci/config.hpp"
#include "state.hpp"

namespace rig::sim {
namespace {

namespace cfg = pci::config;

constexpr std::uint16_t command_writable = 0x0547;
constexpr std::uint8_t msix_offset = 0x80;  // Topology leaves 0x80..0xff to models

std::uint32_t get(const std::vector<std::uint8_t>& c, std::uint32_t offset, unsigned bytes) {
    std::uint32_t value = 0;
    for (unsigned i = 0; i < bytes; ++i) value |= std::uint32_t{c.at(offset + i)} << (8 * i);
    return value;
}

void put(std::vector<std::uint8_t>& c, std::uint32_t offset, unsigned bytes, std::uint32_t value) {
    for (unsigned i = 0; i < bytes; ++i) c.at(offset + i) = static_cast<std::uint8_t>(value >> (8 * i));
}

// Where the MSI-X table lies: the last page of the lowest-numbered register BAR with room
// for table and PBA, else offset 0 of the highest-numbered BAR.
std::pair<unsigned, std::uint32_t> msix_place(const Slot& slot, std::uint64_t table_bytes, std::uint64_t page) {
    for (unsigned i = 0; i < slot.bars.size(); ++i) {
        if (!slot.bars[i] || !slot.memory[i].empty()) continue;
        const std::uint64_t bytes = slot.bars[i]->bytes;
        if (bytes >= 2 * page && table_bytes + 8 <= page) return {i, static_cast<std::uint32_t>(bytes - page)};
    }
    for (unsigned i = static_cast<unsigned>(slot.bars.size()); i-- > 0;)
        if (slot.bars[i]) return {i, 0};
    return {0, 0};
}

}  // namespace

void Slot::build_config(const std::vector<std::uint8_t>& from_topology) {
    config = from_topology;
    writable.assign(config.size(), 0);
    const std::uint64_t page = state.page;
    put(config, cfg::command, 2, 0);  // power-on: no decoding, no mastering
    put(writable, cfg::command, 2, command_writable);

    // The capability list: the PCI Express capability where Topology put one.
    std::uint32_t last = 0;
    if (get(config, cfg::status, 2) & cfg::status_capabilities_list) {
        std::uint32_t at = get(config, cfg::capabilities_pointer, 1) & 0xfc;
        for (unsigned n = 0; n < cfg::capability_limit && at >= cfg::capability_first; ++n) {
            if (get(config, at + cfg::capability_id, 1) == cfg::capability_pci_express) express = at;
            last = at;
            at = get(config, at + cfg::capability_next, 1) & 0xfc;
        }
    }
    if (express) {
        put(config, express + cfg::express_device_capabilities, 4,
            get(config, express + cfg::express_device_capabilities, 4) | cfg::device_capabilities_flr);
        put(writable, express + cfg::express_device_control, 2, 0xffff);
    }

    const unsigned vectors = identity.msix_vectors;
    if (vectors > 0) {
        if (vectors > 2048) throw std::invalid_argument(bus + ": a model cannot have more than 2048 MSI-X vectors");
        const std::uint64_t table_bytes = vectors * cfg::msix_entry_bytes;
        const auto [bir, offset] = msix_place(*this, table_bytes, page);
        msix = msix_offset;
        if (last) put(config, last + cfg::capability_next, 1, msix);
        else put(config, cfg::capabilities_pointer, 1, msix);
        put(config, cfg::status, 2, get(config, cfg::status, 2) | cfg::status_capabilities_list);
        put(config, msix + cfg::capability_id, 1, cfg::capability_msix);
        put(config, msix + cfg::capability_next, 1, 0);
        put(config, msix + cfg::msix_message_control, 2, static_cast<std::uint32_t>(cfg::msix_table_size(vectors - 1)));
        put(config, msix + cfg::msix_table, 4, offset | bir);
        put(config, msix + cfg::msix_pba, 4, static_cast<std::uint32_t>(offset + table_bytes) | bir);
        put(writable, msix + cfg::msix_message_control, 2, cfg::msix_enable | cfg::msix_function_mask);
        pending.assign(vectors, 0);
    }
    power_on = config;
}

std::uint32_t Slot::read_config(std::uint32_t offset, unsigned bytes) {
    const auto ones = static_cast<std::uint32_t>((std::uint64_t{1} << (8 * bytes)) - 1);
    if (stopped || offset + bytes > config.size()) return ones;
    std::lock_guard lock(config_mutex);
    return get(config, offset, bytes);
}

void Slot::write_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) {
    if (stopped || offset + bytes > config.size()) return;
    bool was_master = false, is_master = false, flr = false;
    {
        std::lock_guard lock(config_mutex);
        was_master = (get(config, cfg::command, 2) & cfg::command_bus_master) != 0;
        for (unsigned i = 0; i < bytes; ++i) {
            const std::uint8_t mask = writable[offset + i];
            const auto byte = static_cast<std::uint8_t>(value >> (8 * i));
            config[offset + i] = static_cast<std::uint8_t>((config[offset + i] & ~mask) | (byte & mask));
        }
        std::uint16_t command = static_cast<std::uint16_t>(get(config, cfg::command, 2));
        if (was_master && !(command & cfg::command_bus_master) && refuse_bus_master_off) {
            command |= cfg::command_bus_master;  // the system refused the write that clears it
            put(config, cfg::command, 2, command);
        }
        is_master = (command & cfg::command_bus_master) != 0;
        bus_master = is_master;
        memory_space = (command & cfg::command_memory_space) != 0;
        if (express) {
            const std::uint32_t control = express + cfg::express_device_control;
            const auto device_control = static_cast<std::uint16_t>(get(config, control, 2));
            flr = (device_control & cfg::device_control_flr) != 0;
            put(config, control, 2, device_control & ~cfg::device_control_flr);  // reads 0 (§7.5.3.4)
        }
        if (msix) {
            const auto control = get(config, msix + cfg::msix_message_control, 2);
            msix_live = (control & cfg::msix_enable) && !(control & cfg::msix_function_mask);
        }
    }
    if (was_master != is_master) model->bus_master(is_master);
    if (flr) function_level_reset();
}

void Slot::function_level_reset() {
    if (stopped) return;
    bool was_master = false;
    {
        std::lock_guard lock(config_mutex);
        was_master = bus_master;
        config = power_on;
        bus_master = false;
        memory_space = false;
        msix_live = false;
    }
    if (was_master) model->bus_master(false);
    model->reset();
    std::lock_guard lock(irq_mutex);
    std::fill(pending.begin(), pending.end(), 0);
}

void Slot::take_config() {
    std::uint16_t command = static_cast<std::uint16_t>(read_config(cfg::command, 2));
    write_config(cfg::command, 2,
                 static_cast<std::uint16_t>((command | cfg::command_memory_space) & ~cfg::command_bus_master));
    if (msix) {
        const auto control = read_config(msix + cfg::msix_message_control, 2);
        write_config(msix + cfg::msix_message_control, 2, (control | cfg::msix_enable) & ~cfg::msix_function_mask);
    }
}

}  // namespace rig::sim
