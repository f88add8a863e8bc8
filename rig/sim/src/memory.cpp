// A simulated machine's system memory and IOMMU (state.hpp).
//
// System memory is this process's memory: each page alloc_dma maps, or pin names, gets a
// physical page ("frame") of the machine, and frame_map says which process page it is.
// A frame is shared by everything that holds its page (a DMA allocation and its pins) and
// goes when the last lets go; alloc_dma's memory stays mapped until then.
// Frames are handed out top-down one page at a time unless contiguity is asked for, so
// consecutive pages of an allocation are not consecutive on the bus, as on a machine that
// has run a while.
//
// The IOMMU: a function with an IOMMU group has a Domain per take, IOVA page to frame, or
// to a page of another function's BAR (map_peer): the root complex then decodes the
// translated address as it decodes any (bus.cpp). Its IOVAs avoid the x86 MSI window
// (0xfee00000-0xfeefffff, which Linux reserves) and the BAR aperture, so an IOVA rig hands
// out never means a BAR that a switch below would take first.
#include <algorithm>

#include "rig/text.hpp"
#include "state.hpp"

namespace rig::sim {

std::optional<std::vector<std::uint64_t>> System::State::give_frames(std::uintptr_t host, std::uint64_t bytes,
                                                                     pci::Contiguity contiguity, std::uint64_t below,
                                                                     std::shared_ptr<pci::DmaMemory> memory) {
    const std::uint64_t pages = (bytes + page - 1) / page;
    std::vector<std::uint64_t> out;
    std::vector<std::pair<std::uint64_t, std::uintptr_t>> fresh;  // frames taken here, and their pages
    std::vector<std::uint64_t> shared;                            // frames other holders gave
    std::optional<std::uint64_t> run;
    if (contiguity == pci::Contiguity::Contiguous && memory) {
        run = frames.allocate(pages * page, page, below);
        if (!run) return std::nullopt;
    }
    for (std::uint64_t i = 0; i < pages; ++i) {
        const std::uintptr_t host_page = host + i * page;
        if (!memory) {
            if (auto it = host_frames.find(host_page); it != host_frames.end()) {
                shared.push_back(it->second);  // a page alloc_dma or another pin gave a frame
                out.push_back(it->second);
                continue;
            }
        }
        std::optional<std::uint64_t> at = run ? std::optional(*run + i * page) : frames.allocate(page, page, below);
        if (!at) {
            if (run) frames.free(*run, pages * page);
            else
                for (const auto& [f, p] : fresh) frames.free(f * page, page);
            return std::nullopt;
        }
        fresh.emplace_back(*at / page, host_page);
        out.push_back(*at / page);
    }
    for (std::uint64_t f : shared) ++frame_map.at(f).refs;
    for (const auto& [f, host_page] : fresh) {
        frame_map[f] = Frame{reinterpret_cast<std::byte*>(host_page), memory, 1};
        host_frames[host_page] = f;
        ++frames_in_use;
    }
    return out;
}

void System::State::take_frames(const std::vector<std::uint64_t>& taken) {
    for (std::uint64_t f : taken) {
        auto it = frame_map.find(f);
        if (it == frame_map.end() || --it->second.refs > 0) continue;
        host_frames.erase(reinterpret_cast<std::uintptr_t>(it->second.host));
        frame_map.erase(it);  // the last holder: alloc_dma's memory may be unmapped now
        frames.free(f * page, page);
        --frames_in_use;
    }
}

std::optional<std::uint64_t> System::State::map_iova(Slot& slot, const std::vector<std::uint64_t>& mapped,
                                                     std::uint64_t below) {
    auto iova = slot.domain.iovas.allocate(mapped.size() * page, page, below);
    if (!iova) return std::nullopt;
    for (std::size_t i = 0; i < mapped.size(); ++i) slot.domain.pages[*iova / page + i] = mapped[i];
    return iova;
}

void System::State::unmap_iova(Slot& slot, std::uint64_t iova, std::size_t pages) {
    for (std::size_t i = 0; i < pages; ++i) slot.domain.pages.erase(iova / page + i);
    slot.domain.iovas.free(iova, pages * page);
}

void System::State::give_back(Slot& slot, Held& held) {
    if (held.iova) unmap_iova(slot, *held.iova, held.frames.size());
    if (!held.peer) take_frames(held.frames);  // a peer mapping's pages are a BAR's, no frames
    held.frames.clear();
    held.iova.reset();
    held.memory.reset();
}

std::vector<pci::Run> System::State::runs_of(const Held& held) const {
    if (held.iova) return {{pci::DmaAddress{*held.iova}, held.bytes}};
    std::vector<pci::Run> runs;
    std::uint64_t left = held.bytes;
    for (std::uint64_t f : held.frames) {
        const std::uint64_t n = std::min(left, page);
        const pci::DmaAddress at{f * page};
        if (!runs.empty() && runs.back().address + runs.back().bytes == at) runs.back().bytes += n;
        else runs.push_back({at, n});
        left -= n;
    }
    return runs;
}

std::optional<std::uint64_t> System::State::translate(const Slot& slot, std::uint64_t address, std::string& why) const {
    if (!slot.iommu) return address;
    auto it = slot.domain.pages.find(address / page);
    if (it == slot.domain.pages.end()) {
        why = "no IOMMU mapping at IOVA " + text::hex(address);
        return std::nullopt;
    }
    return it->second * page + address % page;
}

std::byte* System::State::memory_at(std::uint64_t physical) const {
    auto it = frame_map.find(physical / page);
    return it == frame_map.end() ? nullptr : it->second.host + physical % page;
}

}  // namespace rig::sim
