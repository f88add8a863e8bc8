// The HWRM channel (hwrm.hpp; docs/hsi.md §3.1-§3.4).
#include "hwrm.hpp"

#include <algorithm>
#include <array>

#include "doorbell.hpp"
#include "rig/bnxt/hsi/regs.hpp"
#include "rig/text.hpp"

namespace rig::bnxt {
namespace {

constexpr std::size_t header_bytes = sizeof(hsi::HwrmResponseHeader);
constexpr std::size_t min_resp_len = sizeof(hsi::HwrmErrorResponse);  // §3.3: the generic form

std::string status_words(std::uint16_t code) {
    const auto name = hsi::name(static_cast<hsi::HwrmError>(code));
    return std::to_string(code) + ": " + (name.empty() ? std::string("unknown") : std::string(name));
}

}  // namespace

std::string hwrm_name(hsi::ReqType type) {
    const auto name = hsi::name(type);
    return name.empty() ? "HWRM command " + text::hex(static_cast<std::uint16_t>(type), 4) : std::string(name);
}

Hwrm::Hwrm(std::string bus, pci::Window bar0, DmaBuffer response, DmaBuffer request, std::shared_ptr<Clock> clock,
           std::optional<std::chrono::milliseconds> timeout)
    : bus_(std::move(bus)),
      bar0_(std::move(bar0)),
      response_(std::move(response)),
      request_(std::move(request)),
      clock_(std::move(clock)),
      fixed_timeout_(timeout) {}

std::unexpected<std::string> Hwrm::refused(hsi::ReqType type, std::uint16_t error_code) const {
    return fail(bus_, ": the firmware refused ", hwrm_name(type), " (status ", status_words(error_code), ")");
}

void Hwrm::adopt(const hsi::VerGetResponse& v) {
    // Fields past resp_len read as zero (§0): an older firmware's shorter answer keeps
    // the defaults.
    if (v.max_req_win_len != 0) max_req_len_ = std::min<std::size_t>(v.max_req_win_len, hsi::bar0::hwrm_window_bytes);
    if (v.max_resp_len != 0) max_resp_len_ = std::min<std::size_t>(v.max_resp_len, response_.bytes());
    if (v.def_req_timeout != 0) default_timeout_ = std::chrono::milliseconds(v.def_req_timeout);
    max_ext_req_len_ = v.max_ext_req_len;
    short_supported_ = hsi::ver_get::SHORT_CMD_SUPPORTED.of(v.dev_caps_cfg) != 0;
    short_required_ = short_supported_ && hsi::ver_get::SHORT_CMD_REQUIRED.of(v.dev_caps_cfg) != 0;
}

Result<void> Hwrm::too_short(hsi::ReqType type, std::uint16_t resp_len, std::size_t needed) const {
    if (resp_len >= needed) return {};
    return fail(bus_, ": ", hwrm_name(type), " was answered with ", std::to_string(resp_len),
                " bytes; the driver reads its first ", std::to_string(needed));
}

std::size_t Hwrm::max_request_bytes() const {
    if (!short_supported_) return max_req_len_;
    return std::min<std::size_t>(max_ext_req_len_ != 0 ? max_ext_req_len_ : request_.bytes(), request_.bytes());
}

std::chrono::milliseconds Hwrm::timeout(hsi::ReqType type) const {
    auto t = fixed_timeout_.value_or(default_timeout_);
    if (type == hsi::ReqType::HWRM_FUNC_RESET && !fixed_timeout_) t *= hsi::hwrm::func_reset_timeout_factor;
    return std::min(t, std::chrono::milliseconds(hsi::hwrm::max_timeout_ms));
}

// §3.1 steps 3 and 4: the request into the window with 32-bit stores, zeros up to
// max_req_len, then the trigger. A request longer than the window goes in short mode.
Result<void> Hwrm::submit(hsi::ReqType type, std::span<const std::byte> request) {
    const std::size_t length = (request.size() + 7) / 8 * 8;
    const bool shorten = short_required_ || length > max_req_len_;
    std::array<std::byte, hsi::bar0::hwrm_window_bytes> window{};
    std::size_t fill = max_req_len_;
    if (shorten) {
        // §3.1: "any request longer than max_req_len must use short mode", which only a
        // firmware whose dev_caps_cfg offers it reads (Linux sends it regardless; a
        // firmware without it would read the descriptor as a request); max_ext_req_len
        // bounds it.
        if (!short_supported_)
            return fail(bus_, ": ", hwrm_name(type), " takes ", std::to_string(length), " bytes, more than the ",
                        std::to_string(max_req_len_),
                        "-byte window, and the firmware offers no short commands (HWRM_VER_GET dev_caps_cfg)");
        if (length > max_request_bytes())
            return fail(bus_, ": ", hwrm_name(type), " takes ", std::to_string(length),
                        " bytes, more than the firmware takes (", std::to_string(max_request_bytes()),
                        " in a short command)");
        request_.window().write(0, request);
        hsi::HwrmShortRequest descriptor{};
        descriptor.req_type = static_cast<std::uint16_t>(type);
        descriptor.signature = hsi::hwrm::short_signature;
        descriptor.size = static_cast<std::uint16_t>(request.size());
        descriptor.req_addr = request_.bus();
        std::memcpy(window.data(), &descriptor, sizeof descriptor);
        fill = sizeof descriptor;
    } else {
        std::memcpy(window.data(), request.data(), request.size());
    }
    for (std::size_t offset = 0; offset < fill; offset += 4) {
        const auto word =
            little_endian::load<little_endian::Le32>(std::span<const std::byte>(window).subspan(offset, 4)).get();
        bar0_.write32(hsi::bar0::hwrm_window + offset, word);
    }
    to_device_barrier();
    bar0_.write32(hsi::bar0::hwrm_trigger, 1);
    return {};
}

Result<std::pair<std::uint16_t, std::uint16_t>> Hwrm::transact(hsi::ReqType type, std::span<std::byte> request,
                                                               std::span<std::byte> response) {
    const std::uint16_t seq_id = ++seq_id_;
    hsi::HwrmRequestHeader header{};
    header.req_type = static_cast<std::uint16_t>(type);
    header.cmpl_ring = hsi::hwrm::cmpl_ring_none;
    header.seq_id = seq_id;
    header.target_id = hsi::hwrm::target_id_self;
    header.resp_addr = response_.bus();
    std::memcpy(request.data(), &header, sizeof header);

    // §3.1 step 2: zero the whole area a response may cover.
    response_.fill(std::byte{0});
    if (auto sent = submit(type, request); !sent) return std::unexpected(std::move(sent).error());

    // §3.1 steps 5 and 6.
    const pci::Window& w = response_.window();
    const auto limit = timeout(type);
    const auto deadline = clock_->now() + limit;
    std::optional<std::uint16_t> stale;
    for (;;) {
        const std::uint32_t seq_len = w.read32(offsetof(hsi::HwrmResponseHeader, seq_id), std::memory_order_acquire);
        const auto got_seq = static_cast<std::uint16_t>(seq_len & 0xFFFF);
        const auto resp_len = static_cast<std::uint16_t>(seq_len >> 16);
        if (resp_len != 0 && got_seq != seq_id) stale = got_seq;
        if (resp_len != 0 && got_seq == seq_id) {
            const std::size_t most = max_resp_len_ != 0 ? max_resp_len_ : response_.bytes();
            if (resp_len < min_resp_len || resp_len > most)
                return fail(bus_, ": ", hwrm_name(type), " was answered with a response length of ",
                            std::to_string(resp_len), " bytes (at least ", std::to_string(min_resp_len), ", at most ",
                            std::to_string(most), ")");
            if (w.read8(resp_len - 1u, std::memory_order_acquire) == hsi::hwrm::valid) {
                std::array<std::byte, header_bytes> head;
                w.read(0, head);
                const auto h = little_endian::load<hsi::HwrmResponseHeader>(head);
                if (h.req_type != static_cast<std::uint16_t>(type))
                    return fail(bus_, ": ", hwrm_name(type), " was answered with a response to ",
                                hwrm_name(static_cast<hsi::ReqType>(h.req_type.get())));
                std::fill(response.begin(), response.end(), std::byte{0});
                w.read(0, response.first(std::min<std::size_t>(resp_len, response.size())));
                w.write8(resp_len - 1u, 0);
                return std::pair{h.error_code.get(), resp_len};
            }
        }
        if (clock_->now() >= deadline) {
            std::string why = bus_ + ": " + hwrm_name(type) + " timed out after " + text::duration(limit);
            if (stale)
                why += " (a response with sequence number " + std::to_string(*stale) + " was ignored; expected " +
                       std::to_string(seq_id) + ")";
            return std::unexpected(std::move(why));
        }
        clock_->pause();
    }
}

}  // namespace rig::bnxt
