// rtm info FILE...: describe SEG-Y files.
#include <cstring>
#include <iostream>

#include "app/commands.h"
#include "io/segy_info.h"

namespace rtm::app {

namespace {

const char* kUsage =
    "rtm info: what SEG-Y files hold\n"
    "\n"
    "usage: rtm info FILE.sgy [FILE.sgy ...]\n"
    "\n"
    "For each file: revision, sample format, traces, samples and their interval, the kind\n"
    "of geometry (2D line, 3D cube, shot gathers) with its extent, the shots and channels,\n"
    "and the range of the values. The files are only read.\n";

}  // namespace

int cmd_info(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::cout << kUsage;
            return 0;
        }
        if (argv[i][0] == '-') {
            std::cerr << "rtm info: unknown option '" << argv[i] << "' (it takes only file names)\n\n" << kUsage;
            return 2;
        }
    }
    if (argc < 2) {
        std::cerr << kUsage;
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        if (i > 1) std::cout << "\n";
        io::describe_segy(argv[i], std::cout);
    }
    return 0;
}

}  // namespace rtm::app
