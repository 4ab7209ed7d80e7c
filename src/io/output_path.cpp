#include "io/output_path.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace rtm::io {

namespace fs = std::filesystem;

void check_output_path(const std::string& path, const std::string& option, bool folder) {
    const std::string where = "option " + option;
    std::error_code ec;
    const fs::path p(path);
    // The folder where the output's entries are made: an existing job folder itself; for
    // a file, its folder (the writers make PATH.tmp there and rename it); for a path
    // still to be made, its nearest existing ancestor (the rest is made).
    fs::path dir = fs::absolute(p, ec);
    if (!folder && (path.empty() || !p.has_filename()))
        fail(where, "'" + path + "' names no file (it is empty or ends in a folder separator)",
             "Give " + option + " a file name");
    const fs::path absolute = dir;
    // The writers make PATH.tmp: a name the file system takes, but not with ".tmp" after
    // it, passed the dry run and failed the real one after its work.
    if (!folder) {
        const long name_max = ::pathconf(absolute.parent_path().c_str(), _PC_NAME_MAX);
        const std::size_t longest = name_max > 0 ? std::size_t(name_max) : 255;
        if (p.filename().string().size() + 4 > longest)
            fail(where,
                 "the file name '" + p.filename().string() + "' is " + std::to_string(p.filename().string().size()) +
                     " bytes long: with the '.tmp' rtm writes first, more than the " + std::to_string(longest) +
                     " its folder's file system takes",
                 "Give " + option + " a shorter file name");
    }
    // (Inside a folder rtm writes names of up to 32 bytes: "/illumination.sgy.tmp",
    // "/part-NNN.bin.tmp"; beside a file, ".tmp".)
    const std::size_t added = folder ? 32 : 4;
    if (absolute.string().size() + added >= PATH_MAX)
        fail(where, "the path is " + std::to_string(absolute.string().size()) + " bytes long, beyond the " +
                        std::to_string(PATH_MAX) + " the system takes (with what rtm adds to it)",
             "Give " + option + " a shorter path");
    // A finished file is renamed over its path: over a link that replaces the link, and
    // the output lands beside the target, which keeps its old content (/dev/stdout, a
    // link, was replaced by a file when rtm ran as root).
    if (!folder && fs::is_symlink(fs::symlink_status(p, ec)))
        fail(where,
             "'" + path + "' is a symbolic link (to " + fs::read_symlink(p, ec).string() +
                 "): rtm writes a finished output by renaming it over the path, which would replace the link and "
                 "leave its target as it was",
             "Give " + option + " the target's own path");
    if (fs::exists(p, ec)) {
        if (folder && !fs::is_directory(p, ec))
            fail(where, "'" + path + "' is a file, not a folder", "Choose a folder name for " + option);
        if (!folder && fs::is_directory(p, ec))
            fail(where, "'" + path + "' is a folder, not a file", "Give " + option + " a file name");
        // A finished output is renamed over its path: over a device (/dev/null), a pipe or
        // a socket, that would replace it with a plain file.
        if (!folder && !fs::is_regular_file(p, ec))
            fail(where, "'" + path + "' is not a regular file (a device, pipe or socket): rtm writes a finished "
                                     "output by renaming it over the path, which would replace it",
                 "Give " + option + " the path of a regular file");
        if (::access(p.c_str(), W_OK) != 0)
            fail(where, "'" + path + "' is not writable", "Choose another path or change its permissions");
        if (!folder) dir = dir.parent_path();
    } else {
        dir = dir.parent_path();
        while (!dir.empty() && !fs::exists(dir, ec) && dir != dir.parent_path()) dir = dir.parent_path();
        if (!fs::is_directory(dir, ec))
            fail(where, "'" + path + "' cannot be made: " + dir.string() + " is a file", "Choose a path under a folder");
    }
    // Made and removed at once: the permission bits do not say it (root passes every
    // access() test, while /proc, /sys or a read-only mount refuse what the bits allow).
    std::string probe = (dir / ".rtm-write-test-XXXXXX").string();
    if (!::mkdtemp(probe.data()))
        fail(where, "'" + path + "' cannot be written: the folder " + dir.string() + " takes no new files (" +
                        std::strerror(errno) + ")",
             "Choose a path under a folder you may write to");
    ::rmdir(probe.c_str());
}

}  // namespace rtm::io
