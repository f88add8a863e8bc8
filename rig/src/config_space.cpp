// Configuration space as rig reads it (config_space.hpp). Every offset and bit comes from
// rig/pci/config.hpp; the walks are bounded as Linux bounds them, so a malformed list
// ends the walk instead of looping.
#include "config_space.hpp"

#include <fmt/format.h>

#include "capability_walk.hpp"

namespace rig::pci {
namespace {

using config::PortType;

class Bytes {
public:
    explicit Bytes(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
    std::size_t size() const { return bytes_.size(); }
    bool has(std::uint32_t offset, std::uint32_t width) const { return offset + width <= bytes_.size(); }
    std::uint32_t get(std::uint32_t offset, std::uint32_t width) const {
        std::uint32_t value = 0;
        for (std::uint32_t i = 0; i < width; ++i) value |= static_cast<std::uint32_t>(bytes_[offset + i]) << (8 * i);
        return value;
    }
    std::uint8_t u8(std::uint32_t offset) const { return static_cast<std::uint8_t>(get(offset, 1)); }
    std::uint16_t u16(std::uint32_t offset) const { return static_cast<std::uint16_t>(get(offset, 2)); }
    std::uint32_t u32(std::uint32_t offset) const { return get(offset, 4); }

private:
    std::span<const std::uint8_t> bytes_;
};

// PCIe 6.0 §7.6.3, as Linux's pci_find_next_ext_capability walks it: from 0x100, at most
// extended_limit headers; a header of 0 or all ones, or a next pointer below 0x100, ends.
Result<std::optional<std::uint32_t>> find_extended(const Bytes& c, std::uint16_t id) {
    if (c.size() <= config::legacy_bytes) return std::optional<std::uint32_t>{};
    std::uint32_t at = config::extended_first;
    for (unsigned left = config::extended_limit; left > 0; --left) {
        if (!c.has(at, 4))
            return fail(
                fmt::format("config ends at byte {:#x}, before the extended capability at {:#x}", c.size(), at));
        const std::uint32_t header = c.u32(at);
        if (header == 0 || header == 0xffffffff) return std::optional<std::uint32_t>{};
        if (config::extended_id.of(header) == id) return std::optional<std::uint32_t>{at};
        at = static_cast<std::uint32_t>(config::extended_next.of(header));
        if (at < config::extended_first) return std::optional<std::uint32_t>{};
    }
    return std::optional<std::uint32_t>{};
}

}  // namespace

Result<Header> parse_header(std::span<const std::uint8_t> bytes) {
    const Bytes c(bytes);
    if (c.size() < config::unprivileged_bytes)
        return fail(
            fmt::format("config has {} bytes, fewer than the {} of its header", c.size(), config::unprivileged_bytes));
    Header h;
    h.vendor = c.u16(config::vendor_id);
    h.device = c.u16(config::device_id);
    h.class_code = c.get(config::class_code, 3);
    const std::uint8_t type = c.u8(config::header_type);
    h.layout = static_cast<std::uint8_t>(config::header_layout.of(type));
    h.multifunction = config::header_multifunction.of(type) != 0;
    h.readable = static_cast<std::uint32_t>(c.size());
    if (h.is_bridge()) {
        h.secondary_bus = c.u8(config::secondary_bus);
        h.subordinate_bus = c.u8(config::subordinate_bus);
    }
    // Without CAP_SYS_ADMIN sysfs gives 64 bytes: the lists lie beyond them.
    if (c.size() < config::legacy_bytes) return h;
    h.capabilities_read = true;
    if (const auto express = find_capability([&](std::uint32_t offset, unsigned width) { return c.get(offset, width); },
                                             config::capability_pci_express)) {
        if (c.has(*express + config::express_flags, 2)) {
            const auto flags = c.u16(*express + config::express_flags);
            h.port_type = static_cast<PortType>(config::express_port_type.of(flags));
        }
        if (c.has(*express + config::express_link_status, 2)) {
            h.link_capabilities = c.u32(*express + config::express_link_capabilities);
            h.link_status = c.u16(*express + config::express_link_status);
        }
    }
    auto acs = find_extended(c, config::extended_acs);
    if (!acs) return std::unexpected(std::move(acs).error());
    if (*acs) {
        if (!c.has(**acs + config::acs_control, 2))
            return fail(fmt::format("config ends at byte {:#x}, before the ACS Control register at {:#x}", c.size(),
                                    **acs + config::acs_control));
        h.acs_control = c.u16(**acs + config::acs_control);
    }
    return h;
}

Link Header::link() const {
    Link link;
    if (!link_capabilities || !link_status) return link;
    link.source = LinkSource::Config;
    const auto state = [](std::uint64_t speed, std::uint64_t width) -> std::optional<LinkState> {
        const auto generation = generation_of(speed);
        if (!generation || width == 0) return std::nullopt;
        return LinkState{*generation, static_cast<unsigned>(width)};
    };
    link.capability = state(config::link_capabilities_speed.of(*link_capabilities),
                            config::link_capabilities_width.of(*link_capabilities));
    link.status = state(config::link_status_speed.of(*link_status), config::link_status_width.of(*link_status));
    return link;
}

}  // namespace rig::pci
