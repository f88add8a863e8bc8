// Claims (rig/pci/claim.hpp): a list of claims and of the objects kept while claims cover
// them. Few claims live at once (one per registered region), so a scan serves.
#include "rig/pci/claim.hpp"

#include <algorithm>
#include <utility>

namespace rig::pci {
namespace {

bool overlap(const Span& a, const Span& b) { return a.first < b.first + b.bytes && b.first < a.first + a.bytes; }

}  // namespace

Claim::Claim(Claim&& other) noexcept : claims_(std::move(other.claims_)), id_(other.id_) {}

Claim& Claim::operator=(Claim&& other) noexcept {
    if (this != &other) {
        drop();
        claims_ = std::move(other.claims_);
        id_ = other.id_;
    }
    return *this;
}

void Claim::drop() {
    if (const auto claims = std::move(claims_)) claims->drop(id_);
}

Claim Claims::claim(std::span<const Span> spans, std::string by) {
    Entry entry{0, {}, std::move(by)};
    for (const Span& s : spans)
        if (s.bytes != 0) entry.spans.push_back(s);
    std::lock_guard lock(mutex_);
    entry.id = next_++;
    const std::uint64_t id = entry.id;
    entries_.push_back(std::move(entry));
    return Claim(shared_from_this(), id);
}

std::optional<Claimant> Claims::claimed(Span span) const {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_)
        for (const Span& s : e.spans)
            if (overlap(s, span)) {
                const std::uint64_t first = std::max(s.first, span.first);
                const std::uint64_t end = std::min(s.first + s.bytes, span.first + span.bytes);
                return Claimant{e.by, {first, end - first}};
            }
    return std::nullopt;
}

bool Claims::covered_locked(std::span<const Span> spans) const {
    for (const Entry& e : entries_)
        for (const Span& s : e.spans)
            for (const Span& k : spans)
                if (overlap(s, k)) return true;
    return false;
}

void Claims::keep(std::span<const Span> spans, std::shared_ptr<void> object) {
    std::unique_lock lock(mutex_);
    if (!covered_locked(spans)) {
        lock.unlock();
        object.reset();  // let go outside the lock
        return;
    }
    kept_.push_back({{spans.begin(), spans.end()}, std::move(object)});
}

std::size_t Claims::kept() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
}

void Claims::drop(std::uint64_t id) {
    std::vector<std::shared_ptr<void>> released;
    {
        std::lock_guard lock(mutex_);
        std::erase_if(entries_, [&](const Entry& e) { return e.id == id; });
        for (auto it = kept_.begin(); it != kept_.end();) {
            if (covered_locked(it->spans)) {
                ++it;
                continue;
            }
            released.push_back(std::move(it->object));
            it = kept_.erase(it);
        }
    }
    // `released` goes here, with no lock held: its destructors may claim or ask again.
}

Claims& process_claims() {
    // Never destroyed: a Claim of a static object may outlive any other static.
    static const auto* claims = new std::shared_ptr<Claims>(std::make_shared<Claims>());
    return **claims;
}

}  // namespace rig::pci
