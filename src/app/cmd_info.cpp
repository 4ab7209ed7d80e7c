// rtm info FILE...: describe SEG-Y files.
#include <iostream>

#include "app/commands.h"
#include "io/segy_info.h"

namespace rtm::app {

int cmd_info(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: rtm info FILE.sgy [FILE.sgy ...]\n";
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        if (i > 1) std::cout << "\n";
        io::describe_segy(argv[i], std::cout);
    }
    return 0;
}

}  // namespace rtm::app
