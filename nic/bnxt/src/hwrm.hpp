// nic/bnxt/src/hwrm.hpp: the HWRM channel (docs/hsi.md §3.1): one request at a time,
// written into the BAR0 window with 32-bit stores (or, where it is longer than the window
// takes or the firmware requires it, and only where VER_GET's dev_caps_cfg offers short
// commands, as a short-mode descriptor of a request in DMA memory),
// submitted by the trigger, answered by DMA into the response buffer. The driver waits
// until the response carries the request's seq_id and a non-zero resp_len, then until its
// last byte (`valid`) reads 1, against a deadline from the clock; a response with another
// seq_id is stale and ignored, one whose length cannot be (shorter than the 16-byte error
// form, longer than the buffer or than the firmware's max_resp_len) or that echoes
// another command is rejected.
//
// Not thread safe: the Nic's channel lock serializes its calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "dma_buffer.hpp"
#include "rig/bnxt/clock.hpp"
#include "rig/bnxt/hsi/hwrm.hpp"
#include "rig/pci/window.hpp"
#include "rig/result.hpp"
#include "rig/little_endian.hpp"

namespace rig::bnxt {

// The name of a command for a message: the spec's, or "HWRM command 0x…".
std::string hwrm_name(hsi::ReqType type);

class Hwrm {
public:
    // `bar0` maps BAR0 from offset 0 (the window and trigger); `response` and `request`
    // are one 4 KiB page each (the request page carries short-mode requests).
    Hwrm(std::string bus, pci::Window bar0, DmaBuffer response, DmaBuffer request, std::shared_ptr<Clock> clock,
         std::optional<std::chrono::milliseconds> timeout);

    // What a command answered: the firmware's error_code, resp_len, and the response
    // (its bytes beyond resp_len zero, §0).
    template <class Response>
    struct Answer {
        std::uint16_t error_code = 0;
        std::uint16_t resp_len = 0;
        Response response{};
    };

    // Sends `request` (its header is filled here), or its first `request_bytes` (an older
    // layout's prefix, §0), and waits for its answer. Error naming the command where it
    // timed out or its answer was rejected, or where the request cannot be sent (longer
    // than the window and the firmware offers no short commands, or longer than its
    // max_ext_req_len).
    template <class Response, class Request>
    Result<Answer<Response>> ask(hsi::ReqType type, Request request, std::size_t request_bytes = sizeof(Request)) {
        Answer<Response> answer;
        auto got = transact(
            type, std::as_writable_bytes(std::span(&request, 1)).first(std::min(request_bytes, sizeof(Request))),
            std::as_writable_bytes(std::span(&answer.response, 1)));
        if (!got) return std::unexpected(std::move(got).error());
        answer.error_code = got->first;
        answer.resp_len = got->second;
        return answer;
    }

    // As ask, and a refusal (error_code != 0) is an Error:
    // "<bus>: the firmware refused HWRM_FUNC_RESET (status 2: INVALID_PARAMS)"; so is a
    // success whose response ends before byte `needed`, the end of the fields the driver
    // reads (an older firmware's shorter layout is fine where it covers them, §0).
    template <class Response, class Request>
    Result<Response> call(hsi::ReqType type, Request request, std::size_t needed = sizeof(hsi::HwrmErrorResponse)) {
        auto answer = ask<Response>(type, request);
        if (!answer) return std::unexpected(std::move(answer).error());
        if (answer->error_code != 0) return refused(type, answer->error_code);
        if (auto short_ = too_short(type, answer->resp_len, needed); !short_)
            return std::unexpected(std::move(short_).error());
        return answer->response;
    }

    Result<void> too_short(hsi::ReqType type, std::uint16_t resp_len, std::size_t needed) const;
    std::unexpected<std::string> refused(hsi::ReqType type, std::uint16_t error_code) const;

    // Adopts what HWRM_VER_GET answered: the window length, short mode, the timeout and
    // the longest response (§3.1, §3.6).
    void adopt(const hsi::VerGetResponse& version);

    std::chrono::milliseconds timeout(hsi::ReqType type) const;
    // The longest request the firmware takes (VER_GET: the window's max_req_win_len, or in
    // short mode max_ext_req_len where it offers short commands).
    std::size_t max_request_bytes() const;

private:
    // The response's error_code and resp_len, its bytes copied into `response` (zero
    // beyond resp_len).
    Result<std::pair<std::uint16_t, std::uint16_t>> transact(hsi::ReqType type, std::span<std::byte> request,
                                                             std::span<std::byte> response);
    Result<void> submit(hsi::ReqType type, std::span<const std::byte> request);

    std::string bus_;
    pci::Window bar0_;
    DmaBuffer response_;
    DmaBuffer request_;
    std::shared_ptr<Clock> clock_;
    std::optional<std::chrono::milliseconds> fixed_timeout_;
    std::chrono::milliseconds default_timeout_{hsi::hwrm::def_req_timeout_ms};
    std::size_t max_req_len_ = hsi::hwrm::max_req_len_default;
    std::size_t max_resp_len_ = 0;  // 0: until VER_GET says
    std::size_t max_ext_req_len_ = 0;
    bool short_supported_ = false;
    bool short_required_ = false;
    std::uint16_t seq_id_ = 0;
};

}  // namespace rig::bnxt
