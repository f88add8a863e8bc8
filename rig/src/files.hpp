// Writing sysfs-shaped trees (internal to rig's PCI core: rig_pci's snapshot() and
// rig_sim's fixture writer share it). Each names the path it could not write.
#pragma once

#include <filesystem>
#include <string_view>

#include "rig/result.hpp"

namespace rig::pci::files {

// Creates or replaces `file` with exactly `bytes`.
Result<void> write_file(const std::filesystem::path& file, std::string_view bytes);
// Creates `dir` and the directories above it that are missing.
Result<void> make_dirs(const std::filesystem::path& dir);
// Makes root/`link` a relative symbolic link to root/`target` (both paths below root),
// replacing what was there, so the tree can be moved or copied whole.
Result<void> make_link(const std::filesystem::path& root, const std::filesystem::path& link,
                       const std::filesystem::path& target);

}  // namespace rig::pci::files
