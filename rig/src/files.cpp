// Writing sysfs-shaped trees (files.hpp): plain files, directories and relative links.
#include "files.hpp"

#include <fstream>
#include <system_error>

namespace rig::pci::files {

namespace fs = std::filesystem;

Result<void> write_file(const fs::path& file, std::string_view bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out) return fail(file.string(), ": cannot create");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return fail(file.string(), ": cannot write");
    return {};
}

Result<void> make_dirs(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return fail(dir.string(), ": cannot create: ", ec.message());
    return {};
}

Result<void> make_link(const fs::path& root, const fs::path& link, const fs::path& target) {
    std::error_code ec;
    fs::remove(root / link, ec);
    fs::create_symlink(target.lexically_relative(link.parent_path()), root / link, ec);
    if (ec) return fail((root / link).string(), ": cannot create the link: ", ec.message());
    return {};
}

}  // namespace rig::pci::files
