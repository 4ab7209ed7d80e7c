// rtm info FILE...: describe SEG-Y files.
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "core/error.h"
#include "io/segy_info.h"

namespace rtm::app {

namespace {

const char* kUsage =
    "rtm info: what SEG-Y files hold\n"
    "\n"
    "usage: rtm info FILE.sgy [FILE.sgy ...]\n"
    "       rtm info [FILE.sgy ...] -- FILE.sgy [FILE.sgy ...]\n"
    "\n"
    "After '--' every argument is a file name, even one beginning with '-' (-a.sgy).\n"
    "\n"
    "For each file: revision, sample format, traces, samples and their interval, the kind\n"
    "of geometry (2D line, 3D cube, shot gathers) with its extent, the shots and channels,\n"
    "and the range of the values. The files are only read. A file that cannot be read\n"
    "gets its error in its place (on stderr) and the others are still described; the exit\n"
    "status is then 1.\n";

}  // namespace

int cmd_info(int argc, char** argv) {
    // After "--" every argument is a file name, as for other Unix tools: a file whose
    // name begins with '-' could not be described otherwise.
    std::vector<std::string> files;
    bool options = true;
    for (int i = 1; i < argc; ++i) {
        if (options && !std::strcmp(argv[i], "--")) {
            options = false;
            continue;
        }
        if (options && (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h"))) {
            std::cout << kUsage;
            return 0;
        }
        if (options && argv[i][0] == '-') {
            std::cerr << "rtm info: unknown option '" << argv[i] << "' (it takes only file names; after '--' "
                      << "every argument is one)\n\n" << kUsage;
            return 2;
        }
        files.push_back(argv[i]);
    }
    if (files.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    // Every file, each bad one's error in its place: the first bad file ended the command
    // and the files after it went undescribed.
    std::vector<std::string> failed;
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::ostringstream text;  // whole, so that a file failing half-way prints no half
        try {
            io::describe_segy(files[i], text);
        } catch (const std::exception& e) {  // (rtm::Error: the file, what is wrong, the fix)
            std::cout << (i > 0 ? "\n" : "") << "file:            " << files[i]
                      << ": not described (its error went to stderr)\n"
                      << std::flush;
            spdlog::error("{}", dynamic_cast<const Error*>(&e) ? e.what()
                                                                : std::string("unexpected failure: ") + e.what());
            failed.push_back(files[i]);
            continue;
        }
        std::cout << (i > 0 ? "\n" : "") << text.str() << std::flush;
    }
    if (failed.empty()) return 0;
    if (files.size() > 1) {
        std::string names;
        for (const auto& f : failed) names += (names.empty() ? "" : ", ") + f;
        spdlog::error("rtm info: {} of {} files could not be read: {}", failed.size(), files.size(), names);
    }
    return 1;
}

}  // namespace rtm::app
